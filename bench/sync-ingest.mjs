// Sync ingest rate: a pull of a Sandbox-platform tenant with 200,000 invoices (pages of
// 1,000, the sandbox's maximum; sandbox rate limit and latency off), run in this process
// with syncOnce() from dist/ over the service's own context (createService with
// platformUrl and startWorker: false), against a baseline measured in the same run: a plain
// loop of INSERTs of the same rows (same columns, same JSON text) into a fresh store of the
// same kind with the same schema, one transaction per 1,000 rows (lib/plain-inserts.mjs):
// on SQLite a fresh file opened with openDatabase (same indexes and pragmas), on
// PostgreSQL a fresh schema, migrated as a start migrates, in the service's own database.
// The sandbox runs in a child process of its own, as a remote platform would (and as in
// `ferry serve`, where the sync runs on its worker thread and the sandbox on the main one).
// --store=both (the default) runs every round on SQLite and on PostgreSQL (each round's
// service on a database of its own, dropped after the round).
//
// First the platform alone: every page fetched through the service's adapter and turned
// into rows exactly as runPull does, nothing stored; those rows are the baseline's. Then
// `rounds` rounds, each over a fresh service per store, alternating which of baseline and
// sync goes first. After each sync the stored rows are checked against the baseline's.
// Target: the sync ingests >= 50% of the baseline's rows/second (median ratio of the rounds).
// The sync's time is split into its transactions (timed around the store's transaction())
// and the rest; page fetches are timed from call to resolution, which includes any write
// they overlapped (runPull fetches one page ahead), so compare with the platform-alone pass.
// Usage: npm run build && node bench/sync-ingest.mjs [--store=sqlite|postgres|both] [--invoices=200000] [--rounds=2]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { STORE_NAMES, distDir, median, option, startSandboxProcess, startSyncSetup, storesOption, warnIfBusy } from './lib.mjs';
import { inPages, postgresPlainInserts, sqlitePlainInserts } from './lib/plain-inserts.mjs';

const TARGET = 0.5;
const PAGE = 1000;
const invoices = option('invoices', 200_000);
const rounds = option('rounds', 2);
const load = (path) => import(pathToFileURL(join(distDir, ...path.split('/'))).href);
const { syncOnce } = await load('service/sync/sync-once.js');
const { openDatabase } = await load('service/store/sqlite/db.js');
const { readTokens } = await load('service/tokens.js');
const { openPostgres } = await load('service/store/pg/pool.js');

const rate = (rows, ms) => rows / (ms / 1000);
const fmt = (n) => Math.round(n).toLocaleString('en-US');
const sec = (ms) => `${(ms / 1000).toFixed(2)} s`;

/** Every page through the adapter, each record made a row as runPull makes it; nothing stored. */
async function fetchAll(setup) {
  const { adapter, store, sealer } = setup.deps();
  // Fresh tokens (a refresh would rotate them); this setup is not synced afterwards.
  const tokens = await adapter.ensureFresh('mqjo', await readTokens(store, sealer, setup.connectionId), 300);
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

let schemas = 0;
/** Plain INSERTs of the rows into a fresh store of the setup's kind, one transaction per PAGE rows. */
async function baseline(setup, pages, generation) {
  const owner = { companyId: setup.companyId, connectionId: setup.connectionId, generation };
  if (setup.store === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'ferry-bench-baseline-'));
    try {
      const db = openDatabase(join(dir, 'ferry.db'));
      const ms = sqlitePlainInserts(db, owner, pages);
      db.close();
      return ms;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  // A schema of its own in the service's database, migrated by openPostgres as a start migrates.
  const schema = `baseline_${++schemas}`;
  await setup.query(`CREATE SCHEMA ${schema}`);
  const scoped = new URL(setup.database.url);
  scoped.searchParams.set('options', `-c search_path=${schema}`);
  const pool = await openPostgres(scoped.href);
  try {
    return await postgresPlainInserts(pool, owner, pages);
  } finally {
    await pool.end();
    await setup.query(`DROP SCHEMA ${schema} CASCADE`);
  }
}

/** The pull through the API and syncOnce, timing each page fetch and each transaction it runs. */
async function sync(setup) {
  const pull = await setup.queuePull('invoices');
  const deps = setup.deps();
  const timing = { fetchMs: 0, fetches: 0, txMs: 0, txs: 0 };
  const time = (call) => async (...args) => {
    const started = performance.now();
    try {
      return await call(...args);
    } finally {
      timing.txMs += performance.now() - started;
      timing.txs++;
    }
  };
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
  // Each transaction the pull runs (its pages, its publish, its lease renewals) is timed here.
  const store = { ...deps.store, transaction: time(deps.store.transaction) };
  const started = performance.now();
  const pass = await syncOnce({ ...deps, store, adapter });
  const ms = performance.now() - started;
  const [status] = await setup.query('SELECT status, fetched, generation FROM pull_operations WHERE id = ?', [pull.id]);
  if (pass.pulls !== 1 || status.status !== 'Complete' || Number(status.fetched) !== invoices) {
    throw new Error(`the pull did not complete: ${JSON.stringify({ pass, status })}`);
  }
  return { ms, timing, generation: Number(status.generation) };
}

/** The synced store holds exactly the baseline's rows, in order (read in chunks by seq). */
async function verify(setup, generation, rows) {
  let i = 0;
  let after = 0;
  for (;;) {
    const chunk = await setup.query(`SELECT seq, id, modified_date, CAST(data AS TEXT) AS data FROM records
                                     WHERE company_id = ? AND data_type = 'invoices' AND generation = ? AND seq > ? ORDER BY seq LIMIT 10000`,
    [setup.companyId, generation, after]);
    if (chunk.length === 0) break;
    for (const { id, modified_date: modifiedDate, data } of chunk) {
      const row = rows[i++];
      if (!row || row.id !== id || row.modifiedDate !== modifiedDate || row.data !== data) throw new Error(`${STORE_NAMES[setup.store]}: stored row ${i} differs from the baseline's`);
    }
    after = Number(chunk.at(-1).seq);
  }
  if (i !== rows.length) throw new Error(`${STORE_NAMES[setup.store]}: stored ${i} rows, expected ${rows.length}`);
}

const stores = storesOption();
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
  const pages = inPages(rows, PAGE);
  const bytes = rows.reduce((sum, r) => sum + r.data.length, 0);
  // JSON.stringify of every record, as runPull does per page (records re-parsed here, a sample).
  const sample = rows.slice(0, 20_000).map((r) => JSON.parse(r.data));
  const t0 = performance.now();
  for (const record of sample) JSON.stringify(record);
  const stringifyMs = ((performance.now() - t0) * rows.length) / sample.length;

  console.log(`Sync of ${fmt(invoices)} invoices (${(bytes / invoices).toFixed(0)} B of JSON each), platform pages of ${PAGE}; in-process syncOnce, sandbox in its own process; ${stores.map((st) => STORE_NAMES[st]).join(' and ')}`);
  console.log(`  platform alone: ${fmt(rate(invoices, platform.ms))} rec/s (${sec(platform.ms)}: fetch, parse, stringify every page; nothing stored)`);
  await warnIfBusy();
  const ratios = Object.fromEntries(stores.map((st) => [st, []]));
  for (let round = 1; round <= rounds; round++) {
    for (const store of stores) {
      const setup = await startSyncSetup({ invoices, sandbox, store });
      try {
        let baseMs;
        let synced;
        if (round % 2 === 1) {
          baseMs = await baseline(setup, pages, 1);
          synced = await sync(setup);
        } else {
          synced = await sync(setup);
          baseMs = await baseline(setup, pages, 1);
        }
        await verify(setup, synced.generation, rows);
        const { ms, timing } = synced;
        const ratio = rate(invoices, ms) / rate(invoices, baseMs);
        ratios[store].push(ratio);
        console.log(`  round ${round}, ${STORE_NAMES[store]} (${round % 2 === 1 ? 'baseline first' : 'sync first'}):`);
        console.log(`    baseline INSERTs  ${fmt(rate(invoices, baseMs)).padStart(7)} rows/s (${sec(baseMs)})`);
        console.log(`    sync              ${fmt(rate(invoices, ms)).padStart(7)} rec/s  (${sec(ms)})   ratio ${(ratio * 100).toFixed(1)}%`);
        console.log(`      transactions    ${sec(timing.txMs)} over ${timing.txs} (the writes: upsertRecords + rememberFields + cursor; publish; lease renewals)`);
        console.log(`      outside them    ${sec(ms - timing.txMs)} (waiting for pages, parsing them, records -> rows; JSON.stringify alone ~${sec(stringifyMs)})`);
        console.log(`      page fetches    ${sec(timing.fetchMs)} summed over ${timing.fetches}, call to resolution (overlapping the writes where pages are fetched ahead)`);
      } finally {
        await setup.stop();
      }
    }
  }
  for (const store of stores) {
    const ratio = median(ratios[store]);
    console.log(`  ${STORE_NAMES[store]}: ratio (median of ${rounds}): ${(ratio * 100).toFixed(1)}% (target >= ${TARGET * 100}%): ${ratio >= TARGET ? 'OK' : 'BELOW TARGET'}`);
  }
} finally {
  await sandbox.stop();
}
