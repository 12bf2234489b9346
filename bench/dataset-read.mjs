// Data set reads after a sync of 200,000 invoices (Sandbox-platform tenant, the sandbox in
// its own process, the pull run in this process with syncOnce()): GET
// /companies/{id}/data/invoices?pageSize=5000 page 1 against the last page (page 40),
// requests alternating, one at a time, timed to the last byte of the body; the figures are
// medians. Then the filtered read `query=status=paid`, page 1, and EXPLAIN QUERY PLAN of the
// SQL the store built for it (captured from db.prepare while serving, with the parameters
// it ran with), to show the filter is a range of the partial index records_invoice_status
// rather than a scan. `listRecords` alone (the store, no HTTP) is timed too, to show where
// the difference between the pages lies.
// Target: the last page takes <= 2x as long as the first.
// Usage: npm run build && node bench/dataset-read.mjs [--invoices=200000] [--iterations=15] [--warmupIterations=3]
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { request } from 'undici';
import { distDir, median, option, startSyncSetup, warnIfBusy } from './lib.mjs';

const TARGET = 2;
const PAGE_SIZE = 5000;
const invoices = option('invoices', 200_000);
const iterations = option('iterations', 15);
const warmup = option('warmupIterations', 3);
const lastPage = Math.ceil(invoices / PAGE_SIZE);
const FILTER = 'status=paid';
const load = (path) => import(pathToFileURL(join(distDir, ...path.split('/'))).href);
const { syncOnce } = await load('service/sync/sync-once.js');
const { listRecords } = await load('service/store/sqlite/datasets.js');

const ms = (v) => `${v.toFixed(1).padStart(7)} ms`;

// Reads on the request thread (no reader thread), so the statements can be captured for EXPLAIN below.
const setup = await startSyncSetup({ invoices, listen: true, serviceOptions: { readThreads: 0 } });
try {
  const { db } = setup.service;
  // Every statement prepared on the records table, and the parameters it last ran with.
  const captured = new Map();
  const prepare = db.prepare;
  db.prepare = function capture(sql) {
    const statement = prepare.call(db, sql);
    if (/\bFROM records\b/.test(sql)) {
      const entry = { sql, params: undefined };
      captured.set(sql, entry);
      for (const method of ['get', 'all', 'iterate']) {
        const original = statement[method];
        statement[method] = (...params) => {
          entry.params = params;
          return original.apply(statement, params);
        };
      }
    }
    return statement;
  };

  await setup.queuePull('invoices');
  const started = performance.now();
  const pass = await syncOnce(setup.deps());
  const { visible_generation: generation } = db.prepare("SELECT visible_generation FROM datasets WHERE company_id = ? AND data_type = 'invoices'").get(setup.companyId);
  if (pass.pulls !== 1 || !generation) throw new Error(`the sync did not complete: ${JSON.stringify(pass)}`);
  console.log(`Synced ${invoices.toLocaleString('en-US')} invoices in ${((performance.now() - started) / 1000).toFixed(1)} s; reading GET /companies/{id}/data/invoices`);

  const path = (page, query) => `/companies/${setup.companyId}/data/invoices?page=${page}&pageSize=${PAGE_SIZE}${query ? `&query=${encodeURIComponent(query)}` : ''}`;
  const get = async (page, query, check) => {
    const t0 = performance.now();
    const response = await request(setup.baseUrl + path(page, query), { headers: { authorization: setup.auth } });
    const body = Buffer.from(await response.body.arrayBuffer());
    const elapsed = performance.now() - t0;
    if (response.statusCode !== 200) throw new Error(`page ${page}: ${response.statusCode} ${body.toString().slice(0, 300)}`);
    if (check) check(JSON.parse(body.toString()));
    return { elapsed, bytes: body.length };
  };
  const fullPage = (page) => (body) => {
    const want = Math.min(PAGE_SIZE, invoices - (page - 1) * PAGE_SIZE);
    if (body.results.length !== want || body.totalResults !== invoices || body.pageNumber !== page) {
      throw new Error(`page ${page}: ${body.results.length} results of ${body.totalResults}, expected ${want} of ${invoices}`);
    }
  };
  let paid;
  const filtered = (body) => {
    paid = body.totalResults;
    if (!(paid > 0) || body.results.length !== Math.min(PAGE_SIZE, paid) || body.results.some((r) => r.status.toLowerCase() !== 'paid')) {
      throw new Error(`filtered read: ${body.results.length} results of ${paid}`);
    }
  };

  for (let i = 0; i < warmup; i++) {
    await get(1, undefined, fullPage(1));
    await get(lastPage, undefined, fullPage(lastPage));
    await get(1, FILTER, filtered);
  }
  await warnIfBusy();
  const samples = { first: [], last: [], filtered: [] };
  let sizes = {};
  for (let i = 0; i < iterations; i++) {
    const a = await get(1);
    const b = await get(lastPage);
    const c = await get(1, FILTER);
    samples.first.push(a.elapsed);
    samples.last.push(b.elapsed);
    samples.filtered.push(c.elapsed);
    sizes = { first: a.bytes, last: b.bytes, filtered: c.bytes };
  }
  // The store alone: listRecords as the route calls it.
  const store = { first: [], last: [] };
  for (let i = 0; i < iterations; i++) {
    for (const [key, page] of [['first', 1], ['last', lastPage]]) {
      const t0 = performance.now();
      listRecords(db, setup.companyId, 'invoices', generation, { page, pageSize: PAGE_SIZE });
      store[key].push(performance.now() - t0);
    }
  }

  const first = median(samples.first);
  const last = median(samples.last);
  const ratio = last / first;
  const mb = (bytes) => `${(bytes / 1e6).toFixed(1)} MB`;
  console.log(`  ${iterations} requests each after ${warmup} warm-up rounds, medians (listRecords alone in brackets):`);
  console.log(`  page 1 of ${lastPage}            ${ms(first)} (${ms(median(store.first)).trim()})  ${mb(sizes.first)}`);
  console.log(`  page ${lastPage} of ${lastPage} (last)    ${ms(last)} (${ms(median(store.last)).trim()})  ${mb(sizes.last)}`);
  console.log(`  ratio                 ${ratio.toFixed(2)}x (target <= ${TARGET}x): ${ratio <= TARGET ? 'OK' : 'ABOVE TARGET'}`);
  console.log(`  query=${FILTER} page 1 ${ms(median(samples.filtered))}  ${mb(sizes.filtered)} (${paid.toLocaleString('en-US')} of ${invoices.toLocaleString('en-US')} match)`);

  const plan = (entry) => db.prepare(`EXPLAIN QUERY PLAN ${entry.sql}`).all(...entry.params).map((r) => r.detail);
  const show = (title, entry) => {
    console.log(`  ${title}`);
    console.log(`    ${entry.sql.replace(/\s+/g, ' ')}`);
    console.log(`    params ${JSON.stringify(entry.params)}`);
    for (const line of plan(entry)) console.log(`    plan: ${line}`);
  };
  const filteredSql = [...captured.values()].filter((e) => e.params && e.sql.includes("'$.status'"));
  const unfilteredRows = [...captured.values()].find((e) => e.params && !e.sql.includes("'$.status'") && e.sql.includes('LIMIT'));
  if (filteredSql.length === 0) throw new Error('no filtered statement was captured');
  console.log('EXPLAIN QUERY PLAN of the SQL the store built:');
  for (const entry of filteredSql) show(`query=${FILTER} (${entry.sql.includes('count(*)') ? 'count' : 'page'})`, entry);
  if (unfilteredRows) show('no query (page)', unfilteredRows);
  const usesIndex = filteredSql.every((e) => plan(e).some((line) => line.includes('records_invoice_status')));
  const scans = filteredSql.some((e) => plan(e).some((line) => /^SCAN records\b/.test(line)));
  console.log(`  the filter ${usesIndex && !scans ? 'is a range of records_invoice_status, no full scan: OK' : 'does NOT use records_invoice_status: CHECK'}`);
  db.prepare = prepare;
} finally {
  await setup.stop();
}
