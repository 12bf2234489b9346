// The PostgreSQL store beside the SQLite store, at the store's own interface (no HTTP, no
// service around it): each figure on both stores in one run, against the baseline each
// target names.
// (1) Ingest: 100,000 invoice-sized records (~1.1 KB of JSON each) in pages of 1,000, each
//     page upserted in its own transaction as a sync writes it (upsertRecords), against
//     plain INSERTs of the same rows into the same database and schema, one transaction a
//     page. Rounds alternate which goes first. Target: >= 50% of the plain INSERTs' rows/s.
// (2) Deep paging: 10,000 companies of one client, `name~co` matching 5,000, then the plain
//     list; pages 1 and 50 of pageSize 100 alternate, one at a time (as
//     bench/companies-paging.mjs does over HTTP). PostgreSQL's table is vacuumed and
//     analyzed first, as autovacuum would. Target: page 50 <= 2x page 1 (medians).
// (3) An export's record pages: the 100 pages of 1,000 records in order, twice; the last
//     page against the first (medians of the walks). Record pages of a published
//     generation are seeks, so the last costs what the first does.
// PostgreSQL: postgres://postgres@127.0.0.1:5432 (FERRY_BENCH_POSTGRES_URL), a database of
// its own, dropped at the end. bench/companies-list.mjs, companies-paging.mjs and
// sync-ingest.mjs measure the same targets over HTTP with the service on either store.
// Usage: npm run build && node bench/store-postgres.mjs [--records=100000] [--rounds=2] [--iterations=200] [--only=1|2|3]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { distDir, median, option, warnIfBusy } from './lib.mjs';
import { postgresPlainInserts, sqlitePlainInserts } from './lib/plain-inserts.mjs';

const records = option('records', 100_000);
const rounds = option('rounds', 2);
const iterations = option('iterations', 200);
/** One part alone (1, 2 or 3); 0 runs them all. */
const only = option('only', 0);
const PAGE = 1000;
const TARGET = { ingest: 0.5, deepPaging: 2 };
const adminUrl = process.env.FERRY_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const load = (path) => import(pathToFileURL(join(distDir, path)).href);
const { sqliteAsyncStore } = await load('service/store/sqlite/async-store.js');
const { openDatabase } = await load('service/store/sqlite/db.js');
const { openPostgres } = await load('service/store/pg/pool.js');
const { createPgStore } = await load('service/store/pg/pg-store.js');

const T0 = '2026-01-01T00:00:00Z';
const work = mkdtempSync(join(tmpdir(), 'ferry-bench-pg-'));
const database = `ferry_bench_${process.pid}`;
const admin = new pg.Client({ connectionString: adminUrl });
await admin.connect();
await admin.query(`CREATE DATABASE ${database}`);
const url = new URL(adminUrl);
url.pathname = `/${database}`;

/** A record as a platform sends an invoice: ~1.1 KB, deterministic. */
function invoice(i) {
  const id = `inv-${String(i).padStart(7, '0')}`;
  const lines = [0, 1].map((k) => ({
    description: `Line ${k} of ${id}`, unitAmount: ((i * 37 + k) % 500) + 0.25, quantity: (i + k) % 9 + 1,
    taxAmount: (i % 7) * 1.5, accountRef: { id: `acc-${(i + k) % 40}`, name: `Account ${(i + k) % 40}` },
  }));
  return {
    id,
    data: JSON.stringify({
      id, invoiceNumber: `INV-${i}`, customerRef: { id: `cus-${i % 500}`, companyName: `Customer ${i % 500} Holdings Limited` },
      issueDate: '2024-07-28T00:00:00Z', dueDate: '2024-08-27T00:00:00Z', currency: 'GBP', lineItems: lines,
      subTotal: 736.74, totalTaxAmount: 12.74, totalAmount: 749.48, amountDue: i % 3 === 0 ? 0 : 749.48,
      status: ['Paid', 'Submitted', 'PartiallyPaid'][i % 3], note: 'x'.repeat(380), metadata: { isDeleted: false },
      modifiedDate: '2024-08-05T07:09:59Z', sourceModifiedDate: '2024-08-05T07:09:59Z',
    }),
    modifiedDate: '2024-08-05T07:09:59Z',
  };
}
const pages = Array.from({ length: Math.ceil(records / PAGE) }, (_, p) =>
  Array.from({ length: Math.min(PAGE, records - p * PAGE) }, (_, k) => invoice(p * PAGE + k)));
const bytes = pages.flat().reduce((n, r) => n + r.data.length, 0);

/** A store with a client, a company and a connection to own records and companies. */
async function owners(store) {
  const client = await store.insertClient({ name: 'Bench', plan: 'Paid', created: T0 });
  const company = await store.insertCompany(client.id, { name: 'Bench Ltd', tags: {} }, T0);
  const connection = await store.insertConnection(company.id, 'mqjo', 'bench', T0);
  return { client: client.id, company: company.id, connection: connection.id };
}

let schemas = 0;
/** A fresh PostgreSQL store in a schema of its own (migrated as a real start migrates). */
async function freshPg() {
  const schema = `s${++schemas}`;
  const setup = new pg.Client({ connectionString: url.href });
  await setup.connect();
  await setup.query(`CREATE SCHEMA ${schema}`);
  await setup.end();
  const scoped = new URL(url.href);
  scoped.searchParams.set('options', `-c search_path=${schema}`);
  const pool = await openPostgres(scoped.href);
  return { store: createPgStore(pool), pool };
}

function freshSqlite() {
  const db = openDatabase(join(mkdtempSync(join(work, 'db-')), 'ferry.db'));
  return { store: sqliteAsyncStore(db), db };
}

const seconds = async (fn) => {
  const started = performance.now();
  await fn();
  return (performance.now() - started) / 1000;
};

// ---- (1) ingest --------------------------------------------------------------------------

const ingest = {
  async postgresStore() {
    const { store, pool } = await freshPg();
    const o = await owners(store);
    const s = await seconds(async () => {
      for (const page of pages) await store.transaction((tx) => tx.upsertRecords(o.company, 'invoices', 1, o.connection, page));
    });
    await pool.end();
    return s;
  },
  async postgresPlain() {
    const { store, pool } = await freshPg();
    const o = await owners(store);
    const ms = await postgresPlainInserts(pool, { companyId: o.company, connectionId: o.connection }, pages);
    await pool.end();
    return ms / 1000;
  },
  async sqliteStore() {
    const { store } = freshSqlite();
    const o = await owners(store);
    const s = await seconds(async () => {
      for (const page of pages) await store.transaction((tx) => tx.upsertRecords(o.company, 'invoices', 1, o.connection, page));
    });
    await store.close();
    return s;
  },
  async sqlitePlain() {
    const { store, db } = freshSqlite();
    const o = await owners(store);
    const ms = sqlitePlainInserts(db, { companyId: o.company, connectionId: o.connection }, pages);
    await store.close();
    return ms / 1000;
  },
};

const report = [];
function verdict(label, figure, target, met) {
  report.push({ label, figure, target, met });
  console.log(`   ${label}: ${figure} (target ${target}): ${met ? 'met' : 'NOT MET'}`);
}

await warnIfBusy();
try {
  if (!only || only === 1) {
    console.log(`(1) ingest of ${records.toLocaleString('en-US')} records (${(bytes / records).toFixed(0)} bytes of JSON each), pages of ${PAGE}, ${rounds} rounds`);
    const samples = { postgresStore: [], postgresPlain: [], sqliteStore: [], sqlitePlain: [] };
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? ['postgresPlain', 'postgresStore', 'sqlitePlain', 'sqliteStore'] : ['postgresStore', 'postgresPlain', 'sqliteStore', 'sqlitePlain'];
      for (const who of order) samples[who].push(await ingest[who]());
    }
    const rate = (who) => records / median(samples[who]);
    for (const [store, plain, name] of [['postgresStore', 'postgresPlain', 'PostgreSQL'], ['sqliteStore', 'sqlitePlain', 'SQLite']]) {
      console.log(`   ${name}: upsertRecords ${Math.round(rate(store)).toLocaleString('en-US')} rec/s, plain INSERTs ${Math.round(rate(plain)).toLocaleString('en-US')} rows/s`);
      const share = rate(store) / rate(plain);
      verdict(`(1) ${name} ingest / plain INSERTs`, `${(share * 100).toFixed(0)}%`, `>= ${TARGET.ingest * 100}%`, share >= TARGET.ingest);
    }
  }

  if (!only || only === 2) {
    console.log(`(2) deep paging: 10,000 companies, pages 1 and 50 of 100, ${iterations} each, name~co (matches 5,000) and the plain list`);
    for (const [name, open] of [['PostgreSQL', freshPg], ['SQLite', freshSqlite]]) {
      const { store, pool } = await open();
      const client = await store.insertClient({ name: 'Bench', plan: 'Paid', created: T0 });
      await store.transaction(async (tx) => {
        for (let i = 0; i < 10_000; i++) await tx.insertCompany(client.id, { name: i % 2 === 0 ? `Company ${i}` : `Firm ${i}`, tags: {} }, T0);
      });
      // What autovacuum does within a minute of such a load (statistics, and pages marked
      // all-visible for index-only scans), so the plans are a running database's, whether or
      // not it happened to run yet.
      if (pool) await pool.query('VACUUM ANALYZE companies');
      for (const [list, query, matches] of [['name~co', 'name~co', 5000], ['plain', undefined, 10_000]]) {
        const time = async (page) => {
          const started = performance.now();
          const result = await store.runPage(store.companiesPage(client.id, { page, pageSize: 100, query }));
          const ms = performance.now() - started;
          if (result.rows.length !== 100 || result.total !== matches) throw new Error(`${name} ${list} page ${page}: ${result.rows.length} rows of ${result.total}`);
          return ms;
        };
        for (let i = 0; i < 20; i++) {
          await time(1);
          await time(50);
        }
        const first = [];
        const deep = [];
        for (let i = 0; i < iterations; i++) {
          first.push(await time(1));
          deep.push(await time(50));
        }
        const ratio = median(deep) / median(first);
        console.log(`   ${name}, ${list}: page 1 ${median(first).toFixed(2)} ms, page 50 ${median(deep).toFixed(2)} ms`);
        verdict(`(2) ${name} ${list} page 50 / page 1`, `${ratio.toFixed(2)}x`, `<= ${TARGET.deepPaging}x`, ratio <= TARGET.deepPaging);
      }
      await store.close();
    }
  }

  if (!only || only === 3) {
    console.log(`(3) an export's record pages: ${pages.length} pages of ${PAGE} in order, walked twice`);
    for (const [name, open] of [['PostgreSQL', async () => (await freshPg()).store], ['SQLite', async () => freshSqlite().store]]) {
      const store = await open();
      const o = await owners(store);
      for (const page of pages) await store.transaction((tx) => tx.upsertRecords(o.company, 'invoices', 1, o.connection, page));
      const walks = [];
      for (let walk = 0; walk < 2; walk++) {
        const times = [];
        for (let page = 1; page <= pages.length; page++) {
          const started = performance.now();
          const result = await store.runPage(await store.recordsPage(o.company, 'invoices', 1, { page, pageSize: PAGE }));
          times.push(performance.now() - started);
          if (result.rows.length !== pages[page - 1].length) throw new Error(`${name} page ${page}: ${result.rows.length} rows`);
        }
        walks.push(times);
      }
      const firsts = walks.map((t) => t[0]);
      const lasts = walks.map((t) => t[t.length - 1]);
      const middle = median(walks.flatMap((t) => t.slice(1, -1)));
      console.log(`   ${name}: first page ${median(firsts).toFixed(1)} ms, a middle page ${middle.toFixed(1)} ms (median), last page ${median(lasts).toFixed(1)} ms`);
      await store.close();
    }
  }

  console.log('\n| measure | figure | target | |\n| --- | ---: | --- | --- |');
  for (const r of report) console.log(`| ${r.label} | ${r.figure} | ${r.target} | ${r.met ? 'met' : '**not met**'} |`);
  if (report.some((r) => !r.met)) process.exitCode = 1;
} finally {
  await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await admin.end();
  rmSync(work, { recursive: true, force: true });
}
