// Bulk migration throughput, rate-limit pacing and memory, each against a baseline or a
// bound measured in the same run. The real CLI (dist/) and real `ferry serve` processes:
// 1. rows/second of `ferry migrate tokens` (company, connection, authorize, sync queued)
//    over N rows against a fresh `ferry serve --rate-limit 0`, beside a plain script doing
//    the same four calls per row one row at a time (bench/migrate-plain.mjs) against
//    another fresh service. Targets: >= 10x the plain script, N=10,000 in under 30 s.
// 2. with `ferry serve --rate-limit R`: the request rate ferry achieves as a share of R,
//    and the share of its requests answered 429 (counted from its -v request log).
//    Targets: >= 90% of R, < 1% 429s.
// 3. peak RSS of a dry run over 1,000,000 rows (and 100,000, to show it is flat).
//    Target: < 200 MB. The client's own memory: measured once, against the first store.
// --store=both (the default) runs 1 and 2 with `ferry serve` on SQLite, then on PostgreSQL
// (`--database`, every serve on a fresh database of its own, dropped when it stops).
// Usage: npm run build && node bench/migrate.mjs [--store=sqlite|postgres|both] [--rows=10000] [--plainRows=1000] [--rate=100] [--rateRows=1500] [--dryRows=1000000]
import { spawn } from 'node:child_process';
import { createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { STORE_NAMES, createBenchDatabase, distDir, option, storesOption, warnIfBusy, writeTokensCsv } from './lib.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const ferryMain = join(distDir, 'cli', 'main.js');
const probe = join(here, 'rss-probe.mjs');
const rows = option('rows', 10_000);
const plainRows = option('plainRows', 1000);
const rate = option('rate', 100);
const rateRows = option('rateRows', 1500);
const dryRows = option('dryRows', 1_000_000);
const work = mkdtempSync(join(tmpdir(), 'ferry-bench-migrate-'));
const PLATFORM = 'gbol';

/** The stop() of every serve still running: a failed bench stops them (and drops their databases). */
const serving = new Set();

/** `ferry serve --port 0 --json …` on `store` in its own process; resolves with its listening line. */
async function serve(store, args) {
  const dataDir = mkdtempSync(join(work, 'data-'));
  const database = store === 'postgres' ? await createBenchDatabase() : undefined;
  // The store is the one named here, never one from the environment.
  const env = { ...process.env };
  delete env.FERRY_DATABASE_URL;
  const child = spawn(process.execPath, [ferryMain, 'serve', '--port', '0', '--json', '--data-dir', dataDir, ...(database ? ['--database', database.url] : []), ...args],
    { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const stop = async () => {
    serving.delete(stop);
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    }
    await database?.drop();
  };
  serving.add(stop);
  try {
    const [line] = await Promise.race([
      once(child.stdout.setEncoding('utf8'), 'data'),
      once(child, 'exit').then(([code]) => { throw new Error(`ferry serve exited with ${code} before listening`); }),
    ]);
    const listening = JSON.parse(String(line).split('\n')[0]);
    return { ...listening, keyFile: join(dataDir, 'admin.key'), stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Sandbox tenants with fresh tokens, written as a migration CSV. */
async function tokensCsv(target, count, name, seed) {
  const auth = `Basic ${Buffer.from(readFileSync(target.keyFile, 'utf8').trim()).toString('base64')}`;
  return writeTokensCsv(join(work, name), PLATFORM, count, seed, async (batch, from) => {
    const response = await fetch(`${target.sandboxUrl}/admin/tenants`, {
      method: 'POST', headers: { 'content-type': 'application/json', authorization: auth },
      body: JSON.stringify({ platform: PLATFORM, count: batch, invoices: 0, seed: from }),
    });
    return (await response.json()).results;
  });
}

let runs = 0;
/** Runs a node script as its own process; resolves with its output, wall time and peak RSS (MB). */
function run(args) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const rssFile = join(work, `rss-${runs++}`);
    const child = spawn(process.execPath, ['--import', probe, ...args], { env: { ...process.env, FERRY_BENCH_RSS_FILE: rssFile }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('exit', (code) => {
      const seconds = (performance.now() - started) / 1000;
      let rssMb = NaN;
      try {
        rssMb = Number(readFileSync(rssFile, 'utf8')) / 1024;
      } catch {
        // the process died before its exit hook
      }
      resolve({ code, stdout, stderr, seconds, rssMb });
    });
  });
}

const stores = storesOption();
try {
  await warnIfBusy();
  for (const store of stores) {
    const name = STORE_NAMES[store];
    // 1. Throughput against the plain script, each on a fresh service.
    const plainTarget = await serve(store, ['--rate-limit', '0']);
    const plainCsv = await tokensCsv(plainTarget, plainRows, `plain-${store}.csv`, 1);
    const plain = await run([join(here, 'migrate-plain.mjs'), plainTarget.baseUrl, readFileSync(plainTarget.keyFile, 'utf8').trim(), plainCsv]);
    await plainTarget.stop();
    if (plain.code !== 0) throw new Error(`plain script failed: ${plain.stderr}`);
    const plainRate = plainRows / plain.seconds;

    const target = await serve(store, ['--rate-limit', '0']);
    const csv = await tokensCsv(target, rows, `tokens-${store}.csv`, 100_000);
    const ferry = await run([ferryMain, '--base-url', target.baseUrl, '--api-key-file', target.keyFile, '--json', 'migrate', 'tokens', csv, '--yes']);
    await target.stop();
    if (ferry.code !== 0) throw new Error(`ferry failed (${ferry.code}): ${ferry.stderr.slice(-2000)}`);
    const summary = JSON.parse(ferry.stdout);
    const ferryRate = summary.migrated / ferry.seconds;
    console.log(`${name}, \`ferry serve\`${store === 'postgres' ? ' --database' : ''}:`);
    console.log(`1. ${rows} rows end to end (company, connection, authorize, sync queued), wall time incl. node start-up:`);
    console.log(`   plain script, one row at a time: ${plainRate.toFixed(0)} rows/s (${plainRows} rows in ${plain.seconds.toFixed(1)} s)`);
    console.log(`   ferry migrate tokens:            ${ferryRate.toFixed(0)} rows/s (${summary.migrated} rows in ${ferry.seconds.toFixed(1)} s, peak RSS ${ferry.rssMb.toFixed(0)} MB)`);
    console.log(`   ratio ${(ferryRate / plainRate).toFixed(1)}x (target >= 10x); ${rows} rows in ${ferry.seconds.toFixed(1)} s (target < 30 s)`);

    // 2. Pacing under a rate limit.
    const limited = await serve(store, ['--rate-limit', String(rate)]);
    const limitedCsv = await tokensCsv(limited, rateRows, `limited-${store}.csv`, 500_000);
    const paced = await run([ferryMain, '-v', '--base-url', limited.baseUrl, '--api-key-file', limited.keyFile, 'migrate', 'tokens', limitedCsv, '--yes']);
    await limited.stop();
    const requests = (paced.stderr.match(/^\[http\] \w+ \S+ → \d+/gm) ?? []);
    const limitedCount = requests.filter((l) => / → 429\b/.test(l)).length;
    const achieved = requests.length / paced.seconds;
    console.log(`2. --rate-limit ${rate}: ${requests.length} requests in ${paced.seconds.toFixed(1)} s = ${achieved.toFixed(1)}/s, ${(achieved / rate * 100).toFixed(0)}% of the limit (target >= 90%); ` +
      `${limitedCount} answered 429 = ${(limitedCount / requests.length * 100).toFixed(2)}% (target < 1%); exit ${paced.code}`);
  }

  // 3. Memory of a dry run, flat in the number of rows.
  const dryTarget = await serve(stores[0], ['--rate-limit', '0']);
  for (const count of [dryRows / 10, dryRows]) {
    const path = join(work, `dry-${count}.csv`);
    const out = createWriteStream(path);
    out.write('companyName,externalId,platformKey,accessToken,refreshToken,tenantId\n');
    for (let i = 0; i < count; i++) {
      if (!out.write(`Company ${i},ext-${i},${PLATFORM},at_${i.toString(36)}_x,rt_${i.toString(36)}_y,tenant-${i}\n`)) await once(out, 'drain');
    }
    out.end();
    await once(out, 'finish');
    const dry = await run([ferryMain, '--base-url', dryTarget.baseUrl, '--api-key-file', dryTarget.keyFile, '--json', 'migrate', 'tokens', path, '--dry-run']);
    if (dry.code !== 0) throw new Error(`dry run failed (${dry.code}): ${dry.stderr.slice(-1000)}`);
    console.log(`3. dry run of ${count.toLocaleString('en-US')} rows (against ${STORE_NAMES[stores[0]]}): ${dry.seconds.toFixed(1)} s, peak RSS ${dry.rssMb.toFixed(0)} MB (target < 200 MB)`);
  }
  await dryTarget.stop();
} finally {
  for (const stop of [...serving]) await stop();
  rmSync(work, { recursive: true, force: true });
}
