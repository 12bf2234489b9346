// The main job at scale, as a user runs it: N sandbox tenants with the default data
// (`ferry sandbox tenants create`), `ferry migrate tokens tokens.csv --yes`, then
// `ferry sync --from-results tokens.csv.results.csv --wait`, each the real CLI (dist/) in a
// process of its own:
//   SQLite      against the embedded service (no --base-url: every command starts the
//               stack in-process over one data dir);
//   PostgreSQL  against `ferry serve --database URL` (its defaults otherwise) on a fresh
//               database of its own; with --db-latency-ms N, once more with a TCP proxy
//               in front of PostgreSQL that adds N ms to every round trip
//               (bench/lib/tcp-latency-proxy.mjs), as a database across a network would.
// Every service counts its statements and commits at the store's boundary
// (FERRY_STATEMENT_COUNTS, src/service/store/statement-count.ts): the request thread's
// (the API, and on SQLite the CLI beside it) and the sync worker's, per migrated row.
// Before that, the four API requests of a row are counted one by one
// (bench/lib/row-statements.mjs), and after it the sync ingest of one large data set is
// compared with plain INSERTs on each store (bench/sync-ingest.mjs).
// Each figure is printed beside its target, PASS or FAIL.
// Usage: npm run build && node bench/main-job.mjs [--store=sqlite|postgres|both] [--companies N] [--db-latency-ms N]
//          [--probe-rows N] [--ingest-invoices N] (0 skips the probe or the ingest) [--cpu-prof-dir=DIR]
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import pg from 'pg';
import { STORE_NAMES, createBenchDatabase, distDir, startSandboxProcess, storesOption, warnIfBusy } from './lib.mjs';
import { adminUrl } from './lib/postgres.mjs';
import { countRowStatements, describeRowStatements } from './lib/row-statements.mjs';
import { startTcpLatencyProxy } from './lib/tcp-latency-proxy.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const ferryMain = join(distDir, 'cli', 'main.js');
const PLATFORM = 'gbol'; // Xero: 23 data types

/** `--name N` or `--name=N`. */
function arg(name, fallback) {
  const at = process.argv.findIndex((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  if (at < 0) return fallback;
  const given = process.argv[at].includes('=') ? process.argv[at].split('=')[1] : process.argv[at + 1];
  const value = Number(given);
  if (!Number.isFinite(value) || value < 0) throw new Error(`--${name}: expected a number, got ${given}`);
  return value;
}

const companies = arg('companies', 10_000);
const latencyMs = arg('db-latency-ms', 0);
const probeRows = arg('probe-rows', 100);
const ingestInvoices = arg('ingest-invoices', 200_000);
const stores = storesOption();
// --cpu-prof-dir DIR: `ferry serve` (PostgreSQL) writes a CPU profile of each thread there.
const profileDir = process.argv.find((a) => a.startsWith('--cpu-prof-dir='))?.split('=')[1];
const profileArgs = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
const work = mkdtempSync(join(tmpdir(), 'ferry-bench-main-job-'));

// The targets, for 10,000 companies (the SQLite time scales with the count).
const TARGETS = { sqliteSeconds: 300 * (companies / 10_000), pgRatio: 1.3, statements: 40, commits: 6, latencyRatio: 2, ingest: 0.5 };

const load = () => loadavg().map((n) => n.toFixed(1)).join(' ');
const secs = (s) => `${s.toFixed(1)} s`;
const verdict = (ok) => (ok ? 'PASS' : 'FAIL');

/** Runs a node script as its own process; resolves with its exit code, output and wall time. */
function run(args, { env, cwd } = {}) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr, seconds: (performance.now() - started) / 1000 }));
  });
}

/** The environment of every ferry process: the store is the one named here, and the count on. */
function ferryEnv(countDir) {
  const env = { ...process.env, FERRY_STATEMENT_COUNTS: countDir, CI: '1' };
  for (const name of ['FERRY_BASE_URL', 'FERRY_API_KEY', 'FERRY_DATABASE_URL', 'FERRY_DATA_DIR']) delete env[name];
  return env;
}

/** The counts the services wrote so far: { api, worker } each { statements, commits }, summed over processes and threads. */
function readCounts(countDir) {
  const sum = { api: { statements: 0, commits: 0, texts: {} }, worker: { statements: 0, commits: 0, texts: {} } };
  let files = [];
  try {
    files = readdirSync(countDir).filter((name) => name.endsWith('.json'));
  } catch {
    // nothing counted yet
  }
  for (const name of files) {
    const totals = JSON.parse(readFileSync(join(countDir, name), 'utf8'));
    const side = totals.mainThread ? sum.api : sum.worker;
    side.statements += totals.statements;
    side.commits += totals.commits;
    for (const [text, n] of Object.entries(totals.texts)) side.texts[text] = (side.texts[text] ?? 0) + n;
  }
  return sum;
}

function countsBetween(before, after) {
  const diff = (side) => ({ statements: after[side].statements - before[side].statements, commits: after[side].commits - before[side].commits });
  const api = diff('api');
  const worker = diff('worker');
  return { api, worker, total: { statements: api.statements + worker.statements, commits: api.commits + worker.commits } };
}

/** Files are rewritten every second by a running service (statement-count.ts): wait for one round before reading them. */
const settleCounts = () => new Promise((resolve) => setTimeout(resolve, 1_200));

/** One ferry command; fails the bench unless it exits 0. */
async function ferry(args, options) {
  const result = await run([ferryMain, ...args], options);
  if (result.code !== 0) throw new Error(`ferry ${args.join(' ')} exited with ${result.code}: ${result.stderr.slice(-2000)}${result.stdout.slice(-2000)}`);
  return result;
}

/** Pulls by state, straight from the store's database. */
async function pullStates(target) {
  const sql = 'SELECT status, count(*) AS n FROM pull_operations GROUP BY status ORDER BY status';
  let found;
  if (target.dbFile) {
    const db = new Database(target.dbFile, { readonly: true });
    try {
      found = db.prepare(sql).all();
    } finally {
      db.close();
    }
  } else {
    const client = new pg.Client({ connectionString: target.databaseUrl });
    await client.connect();
    try {
      found = (await client.query(sql)).rows;
    } finally {
      await client.end();
    }
  }
  return Object.fromEntries(found.map((r) => [r.status, Number(r.n)]));
}

/** `ferry serve` on PostgreSQL in its own process; resolves once it listens. */
async function serve(dataDir, databaseUrl, env) {
  // Its log (a JSON line per request, its default) goes to a file, as `ferry serve 2> file`
  // writes it, not into this process's memory: tens of megabytes at 10,000 companies.
  const logPath = join(dirname(dataDir), 'serve.log');
  const log = openSync(logPath, 'w');
  const child = spawn(process.execPath, [...profileArgs, ferryMain, 'serve', '--port', '0', '--json', '--data-dir', dataDir, '--database', databaseUrl],
    { env, stdio: ['ignore', 'pipe', log] });
  closeSync(log);
  const logTail = () => readFileSync(logPath, 'utf8').slice(-2000);
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    await exited;
  };
  try {
    const [line] = await Promise.race([
      once(child.stdout.setEncoding('utf8'), 'data'),
      once(child, 'exit').then(([code]) => { throw new Error(`ferry serve exited with ${code} before listening: ${logTail()}`); }),
    ]);
    return { ...JSON.parse(String(line).split('\n')[0]), stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * The three phases on one store. `target(dir, env)` starts what the commands talk to and
 * answers { args (the target's global flags), dbFile | databaseUrl, stop() }.
 */
async function mainJob(name, target) {
  const dir = mkdtempSync(join(work, 'run-'));
  const countDir = join(dir, 'counts');
  const env = ferryEnv(countDir);
  const started = await target(dir, env);
  const opts = { env, cwd: dir };
  const phases = {};
  try {
    console.log(`${name}: ${companies.toLocaleString('en-US')} companies (load average ${load()})`);
    const tenants = await ferry([...started.args, '--json', 'sandbox', 'tenants', 'create', '--platform', PLATFORM, '--count', String(companies), '--out', 'tokens.csv'], opts);
    phases.tenants = tenants.seconds;
    console.log(`  ferry sandbox tenants create --platform ${PLATFORM} --count ${companies}: ${secs(tenants.seconds)}`);
    await settleCounts();
    const before = readCounts(countDir);
    const migrate = await ferry([...started.args, '--json', 'migrate', 'tokens', 'tokens.csv', '--yes'], opts);
    phases.migrate = migrate.seconds;
    const summary = JSON.parse(migrate.stdout);
    if (summary.migrated !== companies) throw new Error(`migrated ${summary.migrated} of ${companies}: ${migrate.stdout.slice(0, 2000)}`);
    const afterMigrate = await pullStates(started);
    const limit = summary.concurrency ? `concurrency ${summary.concurrency.final} (peak ${summary.concurrency.peak}); ` : '';
    console.log(`  ferry migrate tokens tokens.csv --yes: ${secs(migrate.seconds)} (${Math.round(companies / migrate.seconds)} rows/s; ${limit}pulls then: ${JSON.stringify(afterMigrate)}; load ${load()})`);
    await settleCounts();
    const migrated = readCounts(countDir);
    const sync = await ferry([...started.args, '--json', 'sync', '--from-results', 'tokens.csv.results.csv', '--wait'], opts);
    phases.sync = sync.seconds;
    const results = JSON.parse(sync.stdout);
    const complete = results.filter((r) => r.ok).length;
    if (complete !== companies) throw new Error(`${complete} of ${companies} companies complete: ${sync.stdout.slice(0, 2000)}`);
    const states = await pullStates(started);
    const pulls = Object.values(states).reduce((a, b) => a + b, 0);
    console.log(`  ferry sync --from-results tokens.csv.results.csv --wait: ${secs(sync.seconds)} (every company complete; pulls: ${JSON.stringify(states)}; load ${load()})`);
    await started.stop();
    await settleCounts();
    const after = readCounts(countDir);
    const job = countsBetween(before, after);
    const migratePhase = countsBetween(before, migrated);
    const per = (n, by = companies) => (n / by).toFixed(1);
    console.log(`  migrate + sync: ${secs(phases.migrate + phases.sync)}`);
    console.log(`  per migrated row: ${per(job.total.statements)} statements (API ${per(job.api.statements)}, worker ${per(job.worker.statements)}), ` +
      `${per(job.total.commits)} commits (API ${per(job.api.commits)}, worker ${per(job.worker.commits)})`);
    console.log(`    of which during the migration: API ${per(migratePhase.api.statements)} statements, ${per(migratePhase.api.commits)} commits; ` +
      `per pull (${pulls.toLocaleString('en-US')}): worker ${per(job.worker.statements, pulls)} statements, ${per(job.worker.commits, pulls)} commits`);
    return { name, phases, seconds: phases.migrate + phases.sync, job, pulls, texts: { api: after.api.texts, worker: after.worker.texts } };
  } finally {
    await started.stop();
  }
}

const sqliteTarget = async (dir) => {
  const dataDir = join(dir, 'data');
  return { args: ['--data-dir', dataDir], dbFile: join(dataDir, 'ferry.db'), stop: async () => undefined };
};

const postgresTarget = (delayMs) => async (dir, env) => {
  const database = await createBenchDatabase();
  const proxy = delayMs > 0 ? await startTcpLatencyProxy({ port: Number(new URL(adminUrl).port || 5432), host: new URL(adminUrl).hostname, delayMs }) : undefined;
  try {
    const dataDir = join(dir, 'data');
    const served = await serve(dataDir, proxy ? proxy.url(database.url) : database.url, env);
    let stopped = false;
    return {
      args: ['--base-url', served.baseUrl, '--api-key-file', join(dataDir, 'admin.key')],
      databaseUrl: database.url,
      async stop() {
        if (stopped) return;
        stopped = true;
        await served.stop();
        await proxy?.close();
        await database.drop();
      },
    };
  } catch (err) {
    await proxy?.close();
    await database.drop();
    throw err;
  }
};

/** bench/sync-ingest.mjs on one store; answers its median ratio (sync / plain INSERTs). */
async function ingest(store) {
  const result = await run([join(here, 'sync-ingest.mjs'), `--store=${store}`, `--invoices=${ingestInvoices}`, '--rounds=2']);
  if (result.code !== 0) throw new Error(`sync-ingest.mjs failed: ${result.stderr.slice(-2000)}`);
  process.stdout.write(result.stdout.split('\n').map((l) => (l ? `  ${l}` : l)).join('\n'));
  const match = /ratio \(median of \d+\): ([\d.]+)%/.exec(result.stdout);
  return match ? Number(match[1]) / 100 : NaN;
}

const lines = [];
const target = (what, figure, goal, ok) => lines.push(`  ${what.padEnd(58)} ${figure.padEnd(22)} ${goal.padEnd(18)} ${verdict(ok)}`);

try {
  await warnIfBusy();
  console.log(`bench/main-job.mjs: ${companies.toLocaleString('en-US')} companies, ${stores.map((s) => STORE_NAMES[s]).join(' and ')}${latencyMs ? `, PostgreSQL also at +${latencyMs} ms a round trip` : ''}; load average ${load()}`);
  if (probeRows > 0) {
    const sandbox = await startSandboxProcess();
    try {
      for (const store of stores) {
        for (const line of describeRowStatements(STORE_NAMES[store], await countRowStatements({ distDir, store, rows: probeRows, sandbox, platform: PLATFORM }))) console.log(line);
      }
    } finally {
      await sandbox.stop();
    }
  }
  const runs = {};
  if (stores.includes('sqlite')) runs.sqlite = await mainJob('SQLite, the embedded service', sqliteTarget);
  if (stores.includes('postgres')) runs.postgres = await mainJob('PostgreSQL, `ferry serve --database`', postgresTarget(0));
  if (stores.includes('postgres') && latencyMs > 0) runs.latency = await mainJob(`PostgreSQL, \`ferry serve --database\` through +${latencyMs} ms a round trip`, postgresTarget(latencyMs));
  const ingestRatios = {};
  if (ingestInvoices > 0) {
    console.log(`Sync ingest of ${ingestInvoices.toLocaleString('en-US')} invoices against plain INSERTs (bench/sync-ingest.mjs --rounds=2):`);
    for (const store of stores) ingestRatios[store] = await ingest(store);
  }

  console.log(`\nTargets (${companies.toLocaleString('en-US')} companies; load average ${load()}):`);
  if (runs.sqlite) target('SQLite: migrate + sync', secs(runs.sqlite.seconds), `<= ${secs(TARGETS.sqliteSeconds)}`, runs.sqlite.seconds <= TARGETS.sqliteSeconds);
  if (runs.sqlite && runs.postgres) {
    const ratio = runs.postgres.seconds / runs.sqlite.seconds;
    target('PostgreSQL / SQLite, migrate + sync', `${ratio.toFixed(2)}x (${secs(runs.postgres.seconds)})`, `<= ${TARGETS.pgRatio}x`, ratio <= TARGETS.pgRatio);
  }
  for (const key of ['sqlite', 'postgres', 'latency']) {
    const r = runs[key];
    if (!r) continue;
    const statements = r.job.total.statements / companies;
    const commits = r.job.total.commits / companies;
    const label = `${r.name.split(',')[0]}${key === 'latency' ? ` +${latencyMs} ms` : ''}`;
    if (key === 'sqlite') {
      // Calls into the library in this process, not round trips: printed for regressions;
      // the targets are PostgreSQL's, where each one crosses to the database.
      lines.push(`  ${`${label}: statements / commits per migrated row`.padEnd(58)} ${`${statements.toFixed(1)} / ${commits.toFixed(2)}`.padEnd(22)} (in-process; the targets are PostgreSQL's)`);
      continue;
    }
    target(`${label}: statements per migrated row`, statements.toFixed(1), `<= ${TARGETS.statements}`, statements <= TARGETS.statements);
    target(`${label}: commits per migrated row`, commits.toFixed(2), `<= ${TARGETS.commits}`, commits <= TARGETS.commits);
  }
  if (runs.latency && runs.postgres) {
    const ratio = runs.latency.seconds / runs.postgres.seconds;
    target(`PostgreSQL +${latencyMs} ms / without, migrate + sync`, `${ratio.toFixed(2)}x (${secs(runs.latency.seconds)})`, `<= ${TARGETS.latencyRatio}x`, ratio <= TARGETS.latencyRatio);
  }
  for (const [store, ratio] of Object.entries(ingestRatios)) {
    target(`${STORE_NAMES[store]}: sync ingest / plain INSERTs (median of 2)`, `${(ratio * 100).toFixed(1)}%`, `>= ${TARGETS.ingest * 100}%`, ratio >= TARGETS.ingest);
  }
  for (const line of lines) console.log(line);
  if (process.argv.includes('--texts')) {
    for (const r of Object.values(runs)) {
      for (const side of ['api', 'worker']) {
        console.log(`${r.name}: the ${side === 'api' ? 'API' : 'worker'}'s statements by text, per migrated row`);
        for (const [text, n] of Object.entries(r.texts[side]).sort((a, b) => b[1] - a[1]).slice(0, 40)) console.log(`  ${(n / companies).toFixed(2).padStart(8)}  ${text}`);
      }
    }
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
