// CPU per request of one `ferry serve` process under the companies-list load, thread by
// thread (/proc/<pid>/task: the main thread, the sync worker, libuv's pool, V8's GC helpers),
// plain and with metrics and a JSON log line per request (stderr to a file), one after the
// other, each over its own seeded data dir: what the observed path costs, apart from how
// the two cores share the load generator's work. Linux only.
// Usage: npm run build && node bench/serve-cpu.mjs [--store=sqlite|postgres] [--duration=9] [--connections=16] [--rounds=1] [--kinds=plain,metrics,log,observed]
// (--kinds: which services, in turn; metrics and log are each half of observed; default plain,observed)
// FERRY_BENCH_NODE_ARGS='--cpu-prof --cpu-prof-dir=DIR' profiles each process (written at its exit).
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { median, option, runLoad, startSeededServe } from './lib.mjs';

const store = process.argv.find((a) => a.startsWith('--store='))?.slice(8) ?? 'sqlite';
const load = { connections: option('connections', 16), warmup: option('warmup', 1), duration: option('duration', 9) };
const rounds = option('rounds', 1);
const PATH = '/companies?pageSize=100';
const TICK_US = 1e6 / 100; // USER_HZ

/** CPU ticks per thread name (utime + stime), from /proc. */
function threads(pid) {
  const by = {};
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      // The main thread by its id (worker threads share its name).
      const name = tid === String(pid) ? 'main' : stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')).replace(/\d+$/, '#');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      by[name] = (by[name] ?? 0) + Number(fields[11]) + Number(fields[12]);
    } catch {
      // the thread ended
    }
  }
  return by;
}

const logDir = mkdtempSync(join(tmpdir(), 'ferry-serve-cpu-'));
const KINDS = {
  plain: { args: ['--log-format', 'off'] },
  metrics: { args: ['--metrics-port', '0', '--log-format', 'off'] },
  log: { args: ['--log-format', 'json'], log: true },
  observed: { args: ['--metrics-port', '0', '--log-format', 'json'], log: true },
};
const kinds = (process.argv.find((a) => a.startsWith('--kinds='))?.slice(8) ?? 'plain,observed').split(',').map((name) => ({ name, ...KINDS[name] }));
const results = Object.fromEntries(kinds.map((k) => [k.name, []]));
try {
  for (let round = 0; round < rounds; round++) {
    for (const kind of round % 2 ? [...kinds].reverse() : kinds) {
      const svc = await startSeededServe({ store, args: kind.args, ...(kind.log ? { stderrFile: join(logDir, 'observed.log') } : {}) });
      try {
        await runLoad({ ...load, duration: 2, url: svc.baseUrl + PATH, headers: { authorization: svc.auth } });
        const before = threads(svc.pid);
        const result = await runLoad({ ...load, warmup: 0, url: svc.baseUrl + PATH, headers: { authorization: svc.auth } });
        const after = threads(svc.pid);
        const per = {};
        for (const [name, ticks] of Object.entries(after)) per[name] = ((ticks - (before[name] ?? 0)) * TICK_US) / result.ok;
        const total = Object.values(per).reduce((a, b) => a + b, 0);
        results[kind.name].push({ rps: result.rps, total });
        const shown = Object.entries(per).filter(([, us]) => us >= 0.5).sort((a, b) => b[1] - a[1]).map(([n, us]) => `${n} ${us.toFixed(1)}`).join(', ');
        console.log(`${kind.name.padEnd(8)} ${result.rps.toFixed(0)} req/s, ${total.toFixed(1)} µs CPU/request (${shown})`);
      } finally {
        await svc.stop();
      }
    }
  }
  if (rounds > 1) {
    for (const [name, list] of Object.entries(results)) console.log(`${name}: median ${median(list.map((r) => r.total)).toFixed(1)} µs/request, ${median(list.map((r) => r.rps)).toFixed(0)} req/s`);
  }
} finally {
  rmSync(logDir, { recursive: true, force: true });
}
