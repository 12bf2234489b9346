// Export throughput and memory: `ferry export invoices --company ID --format ndjson --out F`
// (the real CLI from dist/, as a child process) against a naive script run as its own
// process (bench/export-naive.mjs: every page at pageSize=5000 with fetch, all records
// collected in one array, then written once with JSON.stringify per line), over the same
// synced data set. Two sizes, 20,000 and 200,000 invoices (Sandbox-platform tenants; the
// sandbox in a child process, the service in this process with rate limiting off and each
// data set synced with syncOnce before timing), so the peak RSS at 10x the records shows
// whether ferry's memory stays flat.
// Each round runs naive and ferry once each (alternating which goes first); the figures are
// medians. Wall time is the child process's, start to exit (node start-up included for
// both). Peak RSS is process.resourceUsage().maxRSS of each child, written at exit by
// bench/rss-probe.mjs (preloaded with --import). Both outputs are checked byte for byte
// against each other (same records, same order, same JSON text).
// Targets: ferry >= 2x the naive records/second at 200,000; ferry peak RSS < 150 MB at both
// sizes; and flat: the bench samples the ferry child's VmRSS every 20 ms (/proc/<pid>/status,
// Linux) and prints the highest figure in each quarter of its run; in the 200,000 export the
// last quarter must be within 1.1x of the second (memory levels off instead of growing with
// the records written). The ratio of the two sizes' peaks is printed too; the 20,000 export
// (4 pages) ends before reaching the steady state, so that ratio is above 1 without growth.
// Usage: npm run build && node bench/export.mjs [--invoices=200000] [--small=20000] [--rounds=3]
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { countLines, distDir, median, option, sha256, startSandboxProcess, startSyncSetup, warnIfBusy } from './lib.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const TARGET_SPEEDUP = 2;
const TARGET_RSS_MB = 150;
/** Flat: in the large export, RSS in its last quarter at most this much above its second quarter. */
const TARGET_PLATEAU = 1.1;
const large = option('invoices', 200_000);
const small = option('small', 20_000);
const rounds = option('rounds', 3);
const { syncOnce } = await import(pathToFileURL(join(distDir, 'service', 'sync', 'sync-once.js')).href);
const ferryMain = join(distDir, 'cli', 'main.js');
const probe = join(here, 'rss-probe.mjs');
const work = mkdtempSync(join(tmpdir(), 'ferry-bench-export-'));

/**
 * Runs `node --import rss-probe <args>`; resolves with wall seconds, peak RSS (MB), and
 * (Linux) the child's VmRSS sampled every 20 ms from /proc, to show how it evolves.
 */
function runNode(args, env) {
  const rssFile = join(work, `rss-${process.hrtime.bigint()}`);
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, ['--import', pathToFileURL(probe).href, ...args], {
      env: { ...process.env, ...env, FERRY_BENCH_RSS_FILE: rssFile },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const samples = [];
    const sampler = setInterval(() => {
      try {
        const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1]);
        if (kb) samples.push({ ms: performance.now() - started, mb: kb / 1024 });
      } catch {
        // not Linux, or the child has just exited
      }
    }, 20);
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      clearInterval(sampler);
      const seconds = (performance.now() - started) / 1000;
      if (code !== 0) return reject(new Error(`${args.join(' ')} exited with ${code}: ${stderr}`));
      const rssMb = Number(readFileSync(rssFile, 'utf8')) / 1024;
      rmSync(rssFile, { force: true });
      resolve({ seconds, rssMb, samples });
    });
  });
}

/** The highest sampled RSS within each quarter of the run (MB), or undefined without samples. */
function quarters(run) {
  if (run.samples.length === 0) return undefined;
  const total = run.seconds * 1000;
  return [1, 2, 3, 4].map((q) => Math.max(0, ...run.samples.filter((s) => s.ms > ((q - 1) * total) / 4 && s.ms <= (q * total) / 4).map((s) => s.mb)));
}

async function measure(setup, invoices, keyFile, apiKey) {
  const ferryOut = join(work, `ferry-${invoices}.ndjson`);
  const naiveOut = join(work, `naive-${invoices}.ndjson`);
  const ferry = () => runNode([ferryMain, '--base-url', setup.baseUrl, '--api-key-file', keyFile, '-q',
    'export', 'invoices', '--company', setup.companyId, '--format', 'ndjson', '--out', ferryOut, '--force']);
  const naive = () => runNode([join(here, 'export-naive.mjs'), setup.baseUrl, setup.companyId, naiveOut], { FERRY_API_KEY: apiKey });
  // Warm-up: one of each (service caches, page cache), checked for equal output.
  await ferry();
  await naive();
  const [a, b] = await Promise.all([sha256(ferryOut), sha256(naiveOut)]);
  const lines = await countLines(ferryOut);
  if (a !== b || lines !== invoices) throw new Error(`outputs differ or are short: ferry ${a} (${lines} lines), naive ${b}`);
  await warnIfBusy();
  const samples = { ferry: [], naive: [] };
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? ['naive', 'ferry'] : ['ferry', 'naive'];
    for (const who of order) samples[who].push(await (who === 'ferry' ? ferry() : naive()));
  }
  const pick = (list, key) => median(list.map((s) => s[key]));
  const result = {
    invoices,
    ferry: { seconds: pick(samples.ferry, 'seconds'), rssMb: Math.max(...samples.ferry.map((s) => s.rssMb)), quarters: quarters(samples.ferry.at(-1)) },
    naive: { seconds: pick(samples.naive, 'seconds'), rssMb: Math.max(...samples.naive.map((s) => s.rssMb)) },
    mb: readFileSync(ferryOut).length / 1e6,
  };
  rmSync(ferryOut, { force: true });
  rmSync(naiveOut, { force: true });
  return result;
}

const fmt = (n) => Math.round(n).toLocaleString('en-US');
const sandbox = await startSandboxProcess();
const results = [];
try {
  for (const invoices of [small, large]) {
    const setup = await startSyncSetup({ invoices, listen: true, sandbox });
    try {
      const t0 = performance.now();
      await setup.queuePull('invoices');
      const pass = await syncOnce(setup.deps());
      if (pass.pulls !== 1) throw new Error(`the sync did not run: ${JSON.stringify(pass)}`);
      const { adminKey } = setup.service;
      const keyFile = join(work, 'admin.key');
      writeFileSync(keyFile, adminKey, { mode: 0o600 });
      console.log(`Synced ${fmt(invoices)} invoices in ${((performance.now() - t0) / 1000).toFixed(1)} s; exporting (${rounds} rounds after a warm-up)…`);
      results.push(await measure(setup, invoices, keyFile, adminKey));
    } finally {
      await setup.stop();
    }
  }
} finally {
  await sandbox.stop();
  rmSync(work, { recursive: true, force: true });
}

console.log('');
console.log('| invoices | output | naive | ferry export | speed-up | naive peak RSS | ferry peak RSS |');
console.log('| ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
for (const r of results) {
  const rate = (s) => `${fmt(r.invoices / s)} rec/s (${s.toFixed(2)} s)`;
  console.log(`| ${fmt(r.invoices)} | ${r.mb.toFixed(0)} MB | ${rate(r.naive.seconds)} | ${rate(r.ferry.seconds)} | ${(r.naive.seconds / r.ferry.seconds).toFixed(2)}x | ${r.naive.rssMb.toFixed(0)} MB | ${r.ferry.rssMb.toFixed(0)} MB |`);
}
const [lo, hi] = results;
const speedup = hi.naive.seconds / hi.ferry.seconds;
const flat = hi.ferry.rssMb / lo.ferry.rssMb;
console.log('');
console.log(`  speed-up at ${fmt(hi.invoices)}: ${speedup.toFixed(2)}x (target >= ${TARGET_SPEEDUP}x): ${speedup >= TARGET_SPEEDUP ? 'OK' : 'BELOW TARGET'}`);
console.log(`  ferry peak RSS: ${lo.ferry.rssMb.toFixed(0)} MB at ${fmt(lo.invoices)}, ${hi.ferry.rssMb.toFixed(0)} MB at ${fmt(hi.invoices)} (target < ${TARGET_RSS_MB} MB): ${Math.max(lo.ferry.rssMb, hi.ferry.rssMb) < TARGET_RSS_MB ? 'OK' : 'ABOVE TARGET'}`);
console.log(`  ferry peak RSS at 10x the records: ${flat.toFixed(2)}x the smaller export's (naive: ${(hi.naive.rssMb / lo.naive.rssMb).toFixed(2)}x)`);
for (const r of results) {
  if (r.ferry.quarters) console.log(`  ferry VmRSS through the ${fmt(r.invoices)} export (highest per quarter of its run): ${r.ferry.quarters.map((mb) => `${mb.toFixed(0)} MB`).join(' · ')}`);
}
const q = hi.ferry.quarters;
if (q) {
  const growth = q[3] / q[1];
  console.log(`  flat: the last quarter's RSS is ${growth.toFixed(2)}x the second's (target <= ${TARGET_PLATEAU}x): ${growth <= TARGET_PLATEAU ? 'OK' : 'GROWING'}`);
}
