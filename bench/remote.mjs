// Throughput against a remote service: the real CLI (dist/) and real `ferry serve`
// processes, with bench/lib/latency-proxy.mjs (in this process) between them adding what the
// internet adds. Each figure is measured beside its baseline in the same run:
// (a) `ferry migrate tokens` over 900 rows, default flags, every request delayed 50 ms,
//     against bench/migrate-plain.mjs (the same four calls per row, one row at a time)
//     through the same kind of proxy, each on a fresh `ferry serve --rate-limit 0`. The
//     naive loop's rows/second do not depend on the number of rows (one row at a time,
//     four round trips each), so it runs over --plainRows (150) to keep the bench short.
//     Target: >= 20x its rows/second.
// (b) the same migration behind the proxy's token bucket of 100 requests/second (burst
//     100, as the service's), once with the X-Rate-Limit-* headers and once without them
//     (429s and Retry-After alone). From the proxy's counts: the share of the allowed
//     requests used, admitted / (burst + rate x seconds from the first request to the last
//     answer), and the share of requests answered 429. Targets: >= 90% used, < 1% 429.
// (c) `ferry export invoices --page-size 1000 --format ndjson --out F` of one company with
//     100,000 invoices, every request delayed 100 ms, against the naive page loop
//     (bench/export-naive.mjs at the same page size, one page after another). The tenant
//     is made and synced once, by the serve process's own worker, and used for (c) and
//     (d). Wall time of each child, node start-up included; ferry's peak RSS from
//     bench/rss-probe.mjs; both outputs hashed (sha256). Targets: >= 8x, < 150 MB,
//     byte-identical.
// (c′) the same pair against the same answers recorded from that serve and replayed from
//     memory (bench/lib/replay-server.mjs), behind the same proxy: the client measured
//     without the service's work competing for this machine's two cores, as it would not
//     against the real service. Reported beside (c), with the same targets.
// (d) the same ferry export with 1% of requests failing at the proxy (resets without an
//     answer and 503s with Retry-After: 1, seeded). Target: complete (every invoice, exit
//     0) and byte-identical to (c)'s output.
// Usage: npm run build && node bench/remote.mjs [--rows=900] [--plainRows=150] [--rate=100]
//        [--invoices=100000] [--rounds=2] [--only=abcd]
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { startLatencyProxy } from './lib/latency-proxy.mjs';
import { startReplayServer } from './lib/replay-server.mjs';
import { countLines, distDir, median, option, sha256, warnIfBusy, writeTokensCsv } from './lib.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const ferryMain = join(distDir, 'cli', 'main.js');
const probe = pathToFileURL(join(here, 'rss-probe.mjs')).href;
const rows = option('rows', 900);
const plainRows = option('plainRows', 150);
const rate = option('rate', 100);
const invoices = option('invoices', 100_000);
const rounds = option('rounds', 2);
const only = process.argv.find((a) => a.startsWith('--only='))?.slice('--only='.length) ?? 'abcd';
const MIGRATE_DELAY_MS = 50;
const EXPORT_DELAY_MS = 100;
const EXPORT_PAGE_SIZE = 1000;
const FAULT_RATE = 0.01;
// At 1% the hundred-odd requests of an export expect one fault; this seed's draws fail the
// 16th request (a reset) and the 35th (a 503), so every run meets both kinds.
const FAULT_SEED = 44;
/** A child that takes longer than this is killed and its figure reported as failed. */
const RUN_TIMEOUT_MS = 240_000;
const TARGET = { speedup: 20, used: 0.9, limited: 0.01, exportSpeedup: 8, rssMb: 150 };
const PLATFORM = 'gbol';
const work = mkdtempSync(join(tmpdir(), 'ferry-bench-remote-'));
const cleanups = [];

/** `ferry serve --port 0 --json --rate-limit 0` in its own process, with its admin key. */
async function serve() {
  const dataDir = mkdtempSync(join(work, 'data-'));
  const child = spawn(process.execPath, [ferryMain, 'serve', '--port', '0', '--json', '--data-dir', dataDir, '--rate-limit', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  // Its stderr is shown only if it stops before listening (it notes its shutdown otherwise).
  let stderr = '';
  child.stderr.on('data', (d) => (stderr = (stderr + d).slice(-4000)));
  child.once('exit', (code) => {
    if (!listening) console.error(`ferry serve exited with ${code}: ${stderr}`);
  });
  let listening = false;
  const stop = () => {
    if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
    child.kill('SIGTERM');
    return once(child, 'exit');
  };
  cleanups.push(stop);
  const [line] = await once(child.stdout.setEncoding('utf8'), 'data');
  const { baseUrl, sandboxUrl } = JSON.parse(String(line).split('\n')[0]);
  listening = true;
  const keyFile = join(dataDir, 'admin.key');
  const adminKey = readFileSync(keyFile, 'utf8').trim();
  const auth = `Basic ${Buffer.from(adminKey).toString('base64')}`;
  const call = async (url, method, body) => {
    const response = await fetch(url, { method, headers: { authorization: auth, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body && JSON.stringify(body) });
    const text = await response.text();
    if (response.status >= 300) throw new Error(`${method} ${url}: ${response.status} ${text}`);
    return text ? JSON.parse(text) : undefined;
  };
  return {
    baseUrl,
    keyFile,
    adminKey,
    api: (method, path, body) => call(baseUrl + path, method, body),
    sandbox: (method, path, body) => call(sandboxUrl + path, method, body),
    stop,
  };
}

/** A proxy closed at the end whatever happens. */
async function proxy(options) {
  const started = await startLatencyProxy(options);
  cleanups.push(() => started.close());
  return started;
}

/** Sandbox tenants with fresh tokens, written as a migration CSV (as bench/migrate.mjs does). */
async function tokensCsv(target, count, name, seed) {
  return writeTokensCsv(join(work, name), PLATFORM, count, seed, async (batch, from) =>
    (await target.sandbox('POST', '/admin/tenants', { platform: PLATFORM, count: batch, invoices: 0, seed: from })).results);
}

let runs = 0;
/** Runs `node --import rss-probe …` as its own process: exit code, output, wall seconds, peak RSS (MB). */
function run(args, env = {}) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const rssFile = join(work, `rss-${runs++}`);
    const child = spawn(process.execPath, ['--import', probe, ...args], { env: { ...process.env, ...env, FERRY_BENCH_RSS_FILE: rssFile }, stdio: ['ignore', 'pipe', 'pipe'] });
    const timer = setTimeout(() => child.kill('SIGKILL'), RUN_TIMEOUT_MS);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const seconds = (performance.now() - started) / 1000;
      let rssMb = NaN;
      try {
        rssMb = Number(readFileSync(rssFile, 'utf8')) / 1024;
      } catch {
        // killed before its exit hook
      }
      resolve({ code: signal ? `killed (${signal}${signal === 'SIGKILL' ? `, over ${RUN_TIMEOUT_MS / 1000} s` : ''})` : code, stdout, stderr, seconds, rssMb });
    });
  });
}

function failure(what, result) {
  return new Error(`${what} exited with ${result.code}: ${result.stderr.trim().split('\n').slice(-5).join(' | ')}`);
}

/** What the client reports of its own pacing in a --json summary (concurrency, rate), if this build reports it. */
function clientFigures(summary) {
  const show = (v) => (typeof v === 'number' ? String(Number(v.toFixed(1))) : String(v));
  const found = Object.entries(summary)
    .filter(([key, value]) => /concurrency|rate$|requestsPerSecond/i.test(key) && key !== 'rowsPerSecond' && value !== null && value !== undefined)
    .map(([key, value]) => (typeof value === 'object' ? `${key} ${Object.entries(value).map(([k, v]) => `${k} ${show(v)}`).join(' ')}` : `${key} ${show(value)}`));
  return found.length ? `; ferry reports ${found.join(', ')}` : '';
}

function migrateArgs(baseUrl, keyFile, csv) {
  return [ferryMain, '--base-url', baseUrl, '--api-key-file', keyFile, '--json', 'migrate', 'tokens', csv, '--yes'];
}

const fmt = (n) => Math.round(n).toLocaleString('en-US');
const pct = (x, digits = 0) => `${(x * 100).toFixed(digits)}%`;
/** The lines of the final summary: figure, target, verdict. */
const report = [];
function verdict(label, figure, target, met) {
  report.push({ label, figure, target, met });
  console.log(`   ${label}: ${figure} (target ${target}): ${met ? 'met' : 'NOT MET'}`);
}
function failed(label, err) {
  report.push({ label, figure: `failed: ${err.message}`, target: '', met: false });
  console.log(`   ${label}: FAILED: ${err.message}`);
  process.exitCode = 1;
}

// ---- (a) and (b): migration ------------------------------------------------------------

async function migrateNaive() {
  const target = await serve();
  const csv = await tokensCsv(target, plainRows, 'plain.csv', 1);
  const p = await proxy({ target: target.baseUrl, delayMs: MIGRATE_DELAY_MS });
  const result = await run([join(here, 'migrate-plain.mjs'), p.url, target.adminKey, csv]);
  await p.close();
  await target.stop();
  if (result.code !== 0) throw failure('the naive loop', result);
  return { rowsPerSecond: plainRows / result.seconds, seconds: result.seconds, requests: p.stats().requests };
}

/** One `ferry migrate tokens` of `rows` fresh rows through a proxy with `proxyOptions`. */
async function migrateFerry(name, seed, proxyOptions) {
  const target = await serve();
  const csv = await tokensCsv(target, rows, `${name}.csv`, seed);
  const p = await proxy({ target: target.baseUrl, delayMs: MIGRATE_DELAY_MS, ...proxyOptions });
  const result = await run(migrateArgs(p.url, target.keyFile, csv));
  await p.close();
  await target.stop();
  let summary;
  try {
    summary = JSON.parse(result.stdout);
  } catch {
    throw failure('ferry migrate tokens', result);
  }
  return { summary, seconds: result.seconds, rssMb: result.rssMb, code: result.code, stats: p.stats() };
}

async function benchA() {
  console.log(`(a) migrate tokens, ${rows} rows, ${MIGRATE_DELAY_MS} ms per request, default flags, against the naive loop (${plainRows} rows)`);
  const naive = await migrateNaive();
  console.log(`   naive loop: ${naive.rowsPerSecond.toFixed(2)} rows/s (${plainRows} rows, ${fmt(naive.requests)} requests, in ${naive.seconds.toFixed(1)} s)`);
  const ferry = await migrateFerry('a', 100_000, {});
  const { summary } = ferry;
  const ferryRate = summary.migrated / ferry.seconds;
  console.log(`   ferry:      ${ferryRate.toFixed(1)} rows/s (${summary.migrated} migrated, ${summary.failed} failed, ${fmt(ferry.stats.requests)} requests, in ${ferry.seconds.toFixed(1)} s, exit ${ferry.code}, peak RSS ${ferry.rssMb.toFixed(0)} MB${clientFigures(summary)})`);
  if (summary.migrated !== rows) throw new Error(`ferry migrated ${summary.migrated} of ${rows} rows (exit ${ferry.code})`);
  const ratio = ferryRate / naive.rowsPerSecond;
  verdict(`(a) migration at ${MIGRATE_DELAY_MS} ms, ferry / naive`, `${ratio.toFixed(1)}x`, `>= ${TARGET.speedup}x`, ratio >= TARGET.speedup);
}

async function benchB(headers) {
  const label = `(b) ${rate} req/s limit, ${headers ? 'with' : 'without'} rate-limit headers`;
  console.log(`${label}: migrate tokens, ${rows} rows, ${MIGRATE_DELAY_MS} ms per request`);
  const ferry = await migrateFerry(headers ? 'b-headers' : 'b-bare', headers ? 500_000 : 700_000, { rateLimit: { perSecond: rate, headers } });
  const { summary, stats } = ferry;
  const admitted = stats.requests - stats.answered429;
  const window = (stats.lastAt - stats.firstAt) / 1000;
  const allowed = rate + rate * window;
  const used = admitted / allowed;
  const limited = stats.answered429 / stats.requests;
  console.log(`   ${fmt(stats.requests)} requests, ${fmt(admitted)} admitted at ${(admitted / window).toFixed(1)}/s over ${window.toFixed(1)} s, ${fmt(stats.answered429)} answered 429; ` +
    `${summary.migrated} migrated, ${summary.failed} failed, exit ${ferry.code}${clientFigures(summary)}`);
  if (summary.migrated !== rows) console.log(`   note: ferry migrated ${summary.migrated} of ${rows} rows`);
  verdict(`${label}: allowed rate used`, `${pct(used)} (${fmt(admitted)} of ${fmt(allowed)} allowed)`, `>= ${pct(TARGET.used)}`, used >= TARGET.used);
  verdict(`${label}: requests answered 429`, `${pct(limited, 2)} (${fmt(stats.answered429)} of ${fmt(stats.requests)})`, `< ${pct(TARGET.limited)}`, limited < TARGET.limited);
}

// ---- (c) and (d): export ---------------------------------------------------------------

/** A serve process with one company whose `invoices` invoices are synced (by its own worker). */
async function exportTarget() {
  const target = await serve();
  const started = performance.now();
  const [tenant] = (await target.sandbox('POST', '/admin/tenants', { platform: 'mqjo', invoices, seed: 20_240_101 })).results;
  const company = await target.api('POST', '/companies', { name: 'Bench Remote Export Ltd' });
  const connection = await target.api('POST', `/companies/${company.id}/connections`, { platformKey: 'mqjo' });
  await target.api('PUT', `/companies/${company.id}/connections/${connection.id}/authorization`, tenant.tokens);
  await target.api('POST', `/companies/${company.id}/data/queue/invoices`);
  for (const deadline = Date.now() + 600_000; ;) {
    const status = (await target.api('GET', `/companies/${company.id}/dataStatus`)).invoices;
    if (status?.latestSuccessfulSyncId) break;
    if (/Error$/.test(status?.currentStatus ?? '')) throw new Error(`the sync failed: ${JSON.stringify(status)}`);
    if (Date.now() > deadline) throw new Error(`the sync did not finish in 10 minutes: ${JSON.stringify(status)}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  console.log(`   synced ${fmt(invoices)} invoices in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return { ...target, companyId: company.id };
}

/** `ferry export` of the target's company through a proxy in front of `upstream` (the target's service, or a replay of it). */
async function exportFerry(upstream, target, out, proxyOptions) {
  const p = await proxy({ target: upstream, delayMs: EXPORT_DELAY_MS, ...proxyOptions });
  const result = await run([ferryMain, '--base-url', p.url, '--api-key-file', target.keyFile, '--json',
    'export', 'invoices', '--company', target.companyId, '--page-size', String(EXPORT_PAGE_SIZE), '--format', 'ndjson', '--out', out, '--force']);
  await p.close();
  let summary = {};
  try {
    summary = JSON.parse(result.stdout);
  } catch {
    // not a summary: the failure below says why
  }
  if (result.code !== 0) throw failure('ferry export', result);
  return { ...result, summary, stats: p.stats() };
}

async function exportNaive(upstream, target, out) {
  const p = await proxy({ target: upstream, delayMs: EXPORT_DELAY_MS });
  const result = await run([join(here, 'export-naive.mjs'), p.url, target.companyId, out, String(EXPORT_PAGE_SIZE)], { FERRY_API_KEY: target.adminKey });
  await p.close();
  if (result.code !== 0) throw failure('the naive export', result);
  return { ...result, stats: p.stats() };
}

/** The naive loop and ferry in turns against `upstream`, `rounds` times each; prints the figures and verdicts under `label`. */
async function compareExports(label, upstream, target) {
  const naiveOut = join(work, 'naive.ndjson');
  const ferryOut = join(work, 'ferry.ndjson');
  const samples = { naive: [], ferry: [] };
  let naiveHash;
  let ferryHash;
  let ferryLines;
  for (let round = 0; round < rounds; round++) {
    for (const who of round % 2 === 0 ? ['naive', 'ferry'] : ['ferry', 'naive']) {
      if (who === 'naive') {
        samples.naive.push(await exportNaive(upstream, target, naiveOut));
        naiveHash ??= await sha256(naiveOut);
      } else {
        samples.ferry.push(await exportFerry(upstream, target, ferryOut, {}));
        ferryHash ??= await sha256(ferryOut);
        ferryLines ??= await countLines(ferryOut);
      }
    }
  }
  const naive = median(samples.naive.map((s) => s.seconds));
  const ferry = median(samples.ferry.map((s) => s.seconds));
  const rssMb = Math.max(...samples.ferry.map((s) => s.rssMb));
  const last = samples.ferry.at(-1);
  console.log(`   naive loop: ${fmt(invoices / naive)} rec/s (${naive.toFixed(2)} s, ${fmt(samples.naive[0].stats.requests)} requests, peak RSS ${Math.max(...samples.naive.map((s) => s.rssMb)).toFixed(0)} MB)`);
  console.log(`   ferry:      ${fmt(invoices / ferry)} rec/s (${ferry.toFixed(2)} s, ${fmt(last.stats.requests)} requests, ${fmt(last.summary.records ?? NaN)} records, peak RSS ${rssMb.toFixed(0)} MB${clientFigures(last.summary)})`);
  if (rounds > 1) console.log(`   each round (s): naive ${samples.naive.map((s) => s.seconds.toFixed(2)).join(', ')}; ferry ${samples.ferry.map((s) => s.seconds.toFixed(2)).join(', ')}`);
  console.log(`   sha256 naive ${naiveHash.slice(0, 16)}…, ferry ${ferryHash.slice(0, 16)}… (${fmt(ferryLines)} lines)${rounds > 1 ? `; medians of ${rounds} rounds` : ''}`);
  verdict(`${label} at 100 ms, ferry / naive`, `${(naive / ferry).toFixed(1)}x`, `>= ${TARGET.exportSpeedup}x`, naive / ferry >= TARGET.exportSpeedup);
  verdict(`${label}: ferry peak RSS`, `${rssMb.toFixed(0)} MB`, `< ${TARGET.rssMb} MB`, rssMb < TARGET.rssMb);
  const identical = ferryHash === naiveHash && ferryLines === invoices;
  verdict(`${label}: output identical to the naive loop's`, identical ? 'identical' : `differs (${fmt(ferryLines)} lines)`, 'identical', identical);
  return naiveHash ?? ferryHash;
}

async function benchCD() {
  console.log(`(c) export of ${fmt(invoices)} invoices, ${EXPORT_DELAY_MS} ms per request, --page-size ${EXPORT_PAGE_SIZE}, against the naive page loop`);
  const target = await exportTarget();
  let reference;
  try {
    reference = await compareExports('(c) export', target.baseUrl, target);
  } catch (err) {
    failed('(c) export', err);
  }

  // The same pair against the same answers served from memory: what the client does when
  // the service's work is not on these two cores, as with the real service.
  console.log('(c\u2032) the same, the service\'s answers replayed from memory (its CPU off these cores)');
  try {
    const pages = Math.ceil(invoices / EXPORT_PAGE_SIZE);
    const paths = [`/companies/${target.companyId}/dataStatus`,
      ...Array.from({ length: pages }, (_, i) => `/companies/${target.companyId}/data/invoices?page=${i + 1}&pageSize=${EXPORT_PAGE_SIZE}`)];
    const replay = await startReplayServer(target.baseUrl, paths, { authorization: `Basic ${Buffer.from(target.adminKey).toString('base64')}` });
    cleanups.push(() => replay.close());
    const hash = await compareExports('(c\u2032) replayed export', replay.url, target);
    if (replay.unknown() > 0) throw new Error(`${replay.unknown()} requests asked for something not recorded`);
    if (reference && hash !== reference) throw new Error('the replayed export differs from the served one');
    await replay.close();
  } catch (err) {
    failed('(c\u2032) replayed export', err);
  }

  console.log(`(d) the same ferry export with ${pct(FAULT_RATE)} of requests failing (resets and 503s, seed ${FAULT_SEED})`);
  try {
    const faultOut = join(work, 'ferry-faults.ndjson');
    const faulty = await exportFerry(target.baseUrl, target, faultOut, { faults: { rate: FAULT_RATE, kinds: ['reset', '503'], seed: FAULT_SEED } });
    const { stats } = faulty;
    const lines = await countLines(faultOut);
    const hash = await sha256(faultOut);
    console.log(`   ${fmt(stats.requests)} requests, ${stats.faults} faults injected (resets ${stats.resets}, 503s ${stats.faults - stats.resets}); ${faulty.seconds.toFixed(2)} s, ${fmt(lines)} lines, peak RSS ${faulty.rssMb.toFixed(0)} MB`);
    if (stats.faults === 0) console.log('   note: no fault was drawn in this run, so it proves nothing about them');
    const complete = lines === invoices && faulty.code === 0;
    verdict('(d) export with faults: complete', complete ? `${fmt(lines)} of ${fmt(invoices)} records, exit 0` : `${fmt(lines)} of ${fmt(invoices)}`, 'complete', complete);
    verdict('(d) export with faults: identical', hash === reference ? 'identical' : 'differs', 'identical', hash === reference && reference !== undefined);
  } catch (err) {
    failed('(d) export with faults', err);
  }
  await target.stop();
}

try {
  await warnIfBusy();
  const sections = [
    ['a', benchA],
    ['b', () => benchB(true)],
    ['b', () => benchB(false)],
    ['c', benchCD],
  ];
  for (const [key, section] of sections) {
    if (!only.includes(key) && !(key === 'c' && only.includes('d'))) continue;
    try {
      await section();
    } catch (err) {
      failed(`(${key})`, err);
    }
  }
} finally {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  rmSync(work, { recursive: true, force: true });
}

console.log('');
console.log('| measure | figure | target | |');
console.log('| --- | ---: | --- | --- |');
for (const { label, figure, target, met } of report) console.log(`| ${label} | ${figure} | ${target} | ${met ? 'met' : '**not met**'} |`);
