// Start-up time of `ferry --help` against `node -e 0` (the floor: starting Node itself).
// Both run as child processes, interleaved, timed with process.hrtime around spawnSync;
// the figures are medians. A second, separate set of runs reports the CPU time each
// child used (user + system, from process.cpuUsage() at exit via a tiny --import
// preload given to both), which other jobs on a busy machine disturb much less. `--modules` also lists what the --help path loads and names
// any heavy module on it, with the file that imports it.
//
//   npm run build && node bench/startup.mjs [--runs=21] [--warmup=3] [--modules]
//   node bench/startup.mjs --check     # only the module check; exit 1 if a heavy one loads
//
// FERRY_DIST=<dir> measures another build's cli/main.js instead of bin/ferry.js.
import { spawnSync } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = Object.fromEntries(process.argv.slice(2).map((a) => {
  const [k, v] = a.replace(/^--/, '').split('=');
  return [k, v ?? 'true'];
}));
const runs = Math.max(15, Number(args.runs ?? 21));
const warmup = Number(args.warmup ?? 3);
const TARGET = 2.5;

const dist = resolve(process.env.FERRY_DIST ?? join(root, 'dist'));
const entry = process.env.FERRY_DIST ? join(dist, 'cli', 'main.js') : join(root, 'bin', 'ferry.js');
/** Packages that must not load for --help (commander and chalk may). */
const HEAVY_PACKAGES = ['fastify', 'undici', 'csv-parse', 'csv-stringify', 'ora', '@inquirer/prompts', 'better-sqlite3', 'p-limit'];
/** Project code that must not load for --help either: the service, the sandbox platforms, the HTTP client. */
const HEAVY_LOCAL = ['service/', 'sandbox/', 'client/client.js', 'stack.js', 'cli/embedded.js'].map((p) => join(dist, p));

const env = { ...process.env, NO_COLOR: '1', FERRY_BASE_URL: '', FERRY_DEBUG: '' };
const commands = {
  node: [process.execPath, ['-e', '0']],
  ferry: [process.execPath, [entry, '--help']],
};

function once(name) {
  const [cmd, argv] = commands[name];
  const started = process.hrtime.bigint();
  const result = spawnSync(cmd, argv, { env, stdio: ['ignore', 'pipe', 'pipe'], cwd: root });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (result.status !== 0) throw new Error(`${name} exited ${result.status}: ${result.stderr}`);
  return ms;
}

const cpuPreload = `data:text/javascript,${encodeURIComponent("process.on('exit', () => { const u = process.cpuUsage(); process._rawDebug('CPU_US ' + (u.user + u.system)); });")}`;
/** CPU time (ms) the child used, reported by itself at exit. */
function cpuOnce(name) {
  const [cmd, argv] = commands[name];
  const result = spawnSync(cmd, ['--import', cpuPreload, ...argv], { env, encoding: 'utf8', cwd: root });
  const line = result.stderr.split('\n').find((l) => l.startsWith('CPU_US '));
  if (result.status !== 0 || !line) throw new Error(`${name} exited ${result.status}: ${result.stderr}`);
  return Number(line.slice(7)) / 1000;
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

const fmt = (ms) => `${ms.toFixed(1)} ms`;
const short = (file) => file.replace(`${root}/`, '');

function timings() {
  if (loadavg()[0] > cpus().length * 0.5) {
    console.log(`note: load average ${loadavg()[0].toFixed(1)} on ${cpus().length} CPUs before the run; absolute times will be high, the ratio less so.`);
  }
  for (let i = 0; i < warmup; i++) {
    once('node');
    once('ferry');
  }
  const times = { node: [], ferry: [] };
  for (let i = 0; i < runs; i++) {
    // Alternate which goes first, so neither always gets the warmer cache.
    for (const name of i % 2 ? ['ferry', 'node'] : ['node', 'ferry']) times[name].push(once(name));
  }
  const node = median(times.node);
  const ferry = median(times.ferry);
  const ratio = ferry / node;
  const minRatio = Math.min(...times.ferry) / Math.min(...times.node);
  console.log(`runs: ${runs} each, interleaved (${warmup} warm-up)`);
  console.log(`node -e 0      median ${fmt(node)}  (min ${fmt(Math.min(...times.node))})`);
  console.log(`ferry --help   median ${fmt(ferry)}  (min ${fmt(Math.min(...times.ferry))})`);
  console.log(`ratio          ${ratio.toFixed(2)}× of medians, ${minRatio.toFixed(2)}× of minimums  (target < ${TARGET}×: ${ratio < TARGET ? 'met' : 'NOT met'})`);

  const cpu = { node: [], ferry: [] };
  for (let i = 0; i < runs; i++) {
    for (const name of i % 2 ? ['ferry', 'node'] : ['node', 'ferry']) cpu[name].push(cpuOnce(name));
  }
  const cpuNode = median(cpu.node);
  const cpuFerry = median(cpu.ferry);
  console.log(`CPU time       node -e 0 ${fmt(cpuNode)}, ferry --help ${fmt(cpuFerry)} (medians): ${(cpuFerry / cpuNode).toFixed(2)}×`);
}

/** Every file the --help path loads, with the file that imported it (a resolve hook logs them). */
function loadedModules() {
  const hooks = `export async function resolve(s, c, next) { const r = await next(s, c); process._rawDebug('LOADED ' + r.url + ' ' + (c.parentURL ?? '')); return r; }`;
  const register = `import { register } from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hooks)}`)});`;
  const result = spawnSync(process.execPath, ['--import', `data:text/javascript,${encodeURIComponent(register)}`, entry, '--help'], { env, encoding: 'utf8', cwd: root });
  if (result.status !== 0) throw new Error(`ferry --help exited ${result.status}: ${result.stderr}`);
  const importers = new Map();
  for (const line of result.stderr.split('\n')) {
    if (!line.startsWith('LOADED file:')) continue;
    const [url, parent] = line.slice('LOADED '.length).split(' ');
    const file = fileURLToPath(url);
    if (!importers.has(file)) importers.set(file, parent?.startsWith('file:') ? fileURLToPath(parent) : '');
  }
  return importers;
}

function packageOf(file) {
  const at = file.lastIndexOf('/node_modules/');
  if (at < 0) return undefined;
  const [scope, name] = file.slice(at + '/node_modules/'.length).split('/');
  return scope.startsWith('@') ? `${scope}/${name}` : scope;
}

function modules() {
  const importers = loadedModules();
  const files = [...importers.keys()];
  const heavy = (file) => (packageOf(file) ? HEAVY_PACKAGES.includes(packageOf(file)) : HEAVY_LOCAL.some((h) => file.startsWith(h)));
  const packages = [...new Set(files.map(packageOf).filter(Boolean))].sort();
  console.log(`\n--help loads ${files.filter((f) => !packageOf(f)).length} project files and the packages: ${packages.join(', ') || 'none'}`);
  // Name where each heavy thing comes in: a heavy file imported by a file that is not heavy.
  const entries = files.filter((f) => heavy(f) && !heavy(importers.get(f) ?? ''));
  if (entries.length === 0) {
    console.log('no heavy modules on the --help path');
    return;
  }
  console.log('heavy modules on the --help path (move them behind `await import(...)` in the run function):');
  for (const file of entries) console.log(`  ${short(file)}  imported by ${short(importers.get(file) || '?')}`);
  process.exitCode = 1;
}

if (!args.check) timings();
if (args.modules || args.check) modules();
