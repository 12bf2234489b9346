// Sync ingest rate: a pull of a Sandbox-platform tenant with 200,000 invoices (pages of
// 1,000, the sandbox's maximum; sandbox rate limit and latency off), run in this process
// with syncOnce() from dist/ over the service's own context (createService with
// platformUrl and startWorker: false), against a baseline measured in the same run: a plain
// loop of INSERTs of the same rows (same columns, same JSON text) into a fresh store opened
// with openDatabase (same schema, indexes and pragmas), one transaction per 1,000 rows.
// The sandbox runs in a child process of its own, as a remote platform would (and as in
// `ferry serve`, where the sync runs on its worker thread and the sandbox on the main one).
//
// First the platform alone: every page fetched through the service's adapter and turned
// into rows exactly as runPull does, nothing stored; those rows are the baseline's. Then
// `rounds` rounds, each over a fresh service data dir, alternating which of baseline and
// sync goes first. After each sync the stored rows are checked against the baseline's.
// Target: the sync ingests >= 50% of the baseline's rows/second (median ratio of the rounds).
// The sync's time is split into its transactions (timed around db.transaction) and the
// rest; page fetches are timed from call to resolution, which includes any write they
// overlapped (runPull fetches one page ahead), so compare with the platform-alone pass.
// Usage: npm run build && node bench/sync-ingest.mjs [--invoices=200000] [--rounds=2]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { distDir, median, option, startSandboxProcess, startSyncSetup, warnIfBusy } from './lib.mjs';

const TARGET = 0.5;
const PAGE = 1000;
const invoices = option('invoices', 200_000);
const rounds = option('rounds', 2);
const load = (path) => import(pathToFileURL(join(distDir, ...path.split('/'))).href);
const { syncOnce } = await load('service/sync/sync-once.js');
const { openDatabase } = await load('service/store/db.js');
const { readTokens } = await load('service/tokens.js');

const rate = (rows, ms) => rows / (ms / 1000);
const fmt = (n) => Math.round(n).toLocaleString('en-US');
const sec = (ms) => `${(ms / 1000).toFixed(2)} s`;

/** Every page through the adapter, each record made a row as runPull makes it; nothing stored. */
async function fetchAll(setup) {
  const { adapter, store, sealer } = setup.deps();
  // Fresh tokens (a refresh would rotate them); this setup is not synced afterwards.
  const tokens = await adapter.ensureFresh('mqjo', readTokens(store, sealer, setup.connectionId), 300);
  const rows = [];
  const started = performance.now();
  let cursor;
  do {
    const page = await adapter.fetchPage('mqjo', tokens, 'invoices', cursor, PAGE);
    for (const record of page.records) {
      rows.push({ id: String(record.id), modifiedDate: typeof record.modifiedDate === 'string' ? record.modifiedDate : null, data: JSON.stringify(record) });
    }
    cursor = page.next;
  } while (cursor);
  const ms = performance.now() - started;
  if (rows.length !== invoices) throw new Error(`fetched ${rows.length} invoices, expected ${invoices}`);
  return { rows, ms };
}

/** Plain INSERTs of the rows into a fresh store, one transaction per PAGE rows. */
function baseline(rows, companyId, connectionId, generation) {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-bench-baseline-'));
  try {
    const db = openDatabase(join(dir, 'ferry.db'));
    const insert = db.prepare(`INSERT INTO records (company_id, data_type, generation, id, connection_id, modified_date, data)
                               VALUES (?, ?, ?, ?, ?, ?, ?)`);
    const page = db.transaction((from) => {
      const to = Math.min(from + PAGE, rows.length);
      for (let i = from; i < to; i++) {
        const row = rows[i];
        insert.run(companyId, 'invoices', generation, row.id, connectionId, row.modifiedDate, row.data);
      }
    });
    const started = performance.now();
    for (let from = 0; from < rows.length; from += PAGE) page(from);
    const ms = performance.now() - started;
    db.close();
    return ms;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The pull through the API and syncOnce, timing each page fetch and each transaction it runs. */
async function sync(setup) {
  const pull = await setup.queuePull('invoices');
  const deps = setup.deps();
  const timing = { fetchMs: 0, fetches: 0, txMs: 0, txs: 0 };
  const adapter = {
    ...deps.adapter,
    async fetchPage(...args) {
      const started = performance.now();
      try {
        return await deps.adapter.fetchPage(...args);
      } finally {
        timing.fetchMs += performance.now() - started;
        timing.fetches++;
      }
    },
  };
  // The raw handle under the store: each transaction the pull runs is timed here.
  const { db } = setup.service;
  const transaction = db.transaction;
  db.transaction = (fn) => {
    const run = transaction.call(db, fn);
    const time = (call) => (...args) => {
      const started = performance.now();
      try {
        return call(...args);
      } finally {
        timing.txMs += performance.now() - started;
        timing.txs++;
      }
    };
    // The store runs its transactions with .immediate() (they read before they write).
    const timed = time(run);
    timed.immediate = time(run.immediate);
    return timed;
  };
  let ms;
  let pass;
  try {
    const started = performance.now();
    pass = await syncOnce({ ...deps, adapter });
    ms = performance.now() - started;
  } finally {
    db.transaction = transaction;
  }
  const status = db.prepare('SELECT status, fetched, generation FROM pull_operations WHERE id = ?').get(pull.id);
  if (pass.pulls !== 1 || status.status !== 'Complete' || status.fetched !== invoices) {
    throw new Error(`the pull did not complete: ${JSON.stringify({ pass, status })}`);
  }
  return { ms, timing, generation: status.generation };
}

/** The synced store holds exactly the baseline's rows, in order. */
function verify(setup, generation, rows) {
  const stored = setup.service.db.prepare(`SELECT id, modified_date, data FROM records
                                           WHERE company_id = ? AND data_type = 'invoices' AND generation = ? ORDER BY seq`)
    .raw().iterate(setup.companyId, generation);
  let i = 0;
  for (const [id, modifiedDate, data] of stored) {
    const row = rows[i++];
    if (!row || row.id !== id || row.modifiedDate !== modifiedDate || row.data !== data) throw new Error(`stored row ${i} differs from the baseline's`);
  }
  if (i !== rows.length) throw new Error(`stored ${i} rows, expected ${rows.length}`);
}

const sandbox = await startSandboxProcess();
try {
  const first = await startSyncSetup({ invoices, sandbox });
  let platform;
  try {
    platform = await fetchAll(first);
  } finally {
    await first.stop();
  }
  const { rows } = platform;
  const bytes = rows.reduce((sum, r) => sum + r.data.length, 0);
  // JSON.stringify of every record, as runPull does per page (records re-parsed here, a sample).
  const sample = rows.slice(0, 20_000).map((r) => JSON.parse(r.data));
  const t0 = performance.now();
  for (const record of sample) JSON.stringify(record);
  const stringifyMs = ((performance.now() - t0) * rows.length) / sample.length;

  console.log(`Sync of ${fmt(invoices)} invoices (${(bytes / invoices).toFixed(0)} B of JSON each), platform pages of ${PAGE}; in-process syncOnce, sandbox in its own process`);
  console.log(`  platform alone: ${fmt(rate(invoices, platform.ms))} rec/s (${sec(platform.ms)}: fetch, parse, stringify every page; nothing stored)`);
  await warnIfBusy();
  const ratios = [];
  for (let round = 1; round <= rounds; round++) {
    const setup = await startSyncSetup({ invoices, sandbox });
    try {
      let baseMs;
      let synced;
      if (round % 2 === 1) {
        baseMs = baseline(rows, setup.companyId, setup.connectionId, 1);
        synced = await sync(setup);
      } else {
        synced = await sync(setup);
        baseMs = baseline(rows, setup.companyId, setup.connectionId, 1);
      }
      verify(setup, synced.generation, rows);
      const { ms, timing } = synced;
      const ratio = rate(invoices, ms) / rate(invoices, baseMs);
      ratios.push(ratio);
      console.log(`  round ${round} (${round % 2 === 1 ? 'baseline first' : 'sync first'}):`);
      console.log(`    baseline INSERTs  ${fmt(rate(invoices, baseMs)).padStart(7)} rows/s (${sec(baseMs)})`);
      console.log(`    sync              ${fmt(rate(invoices, ms)).padStart(7)} rec/s  (${sec(ms)})   ratio ${(ratio * 100).toFixed(1)}%`);
      console.log(`      transactions    ${sec(timing.txMs)} over ${timing.txs} (the writes: upsertRecords + rememberFields + cursor; publish)`);
      console.log(`      outside them    ${sec(ms - timing.txMs)} (waiting for pages, parsing them, records -> rows; JSON.stringify alone ~${sec(stringifyMs)})`);
      console.log(`      page fetches    ${sec(timing.fetchMs)} summed over ${timing.fetches}, call to resolution (overlapping the writes where pages are fetched ahead)`);
    } finally {
      await setup.stop();
    }
  }
  const ratio = median(ratios);
  console.log(`  ratio (median of ${rounds}): ${(ratio * 100).toFixed(1)}% (target >= ${TARGET * 100}%): ${ratio >= TARGET ? 'OK' : 'BELOW TARGET'}`);
} finally {
  await sandbox.stop();
}
