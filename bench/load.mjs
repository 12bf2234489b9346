// A small closed-loop HTTP load generator: `connections` workers on an undici Pool
// (pipelining 1), each sending the next request as soon as the last one's body is read.
// Runs `warmup` seconds unmeasured, then counts for `duration` seconds; prints JSON.
// With "latency": true it also reports each measured request's latency (p50, p99, max, in ms).
// With "retryAfter": true a worker answered 429 waits its Retry-After seconds before the next
// request, as a well-behaved client does. "paths": [...] gives each worker its own path on the
// url's origin (worker i asks for paths[i % paths.length]).
// Usage: node bench/load.mjs '{"url":"http://127.0.0.1:1234/path","headers":{},"connections":16}'
import { Pool } from 'undici';

const { url, headers = {}, connections = 16, warmup = 1, duration = 5, latency = false, retryAfter = false, paths } = JSON.parse(process.argv[2] ?? '{}');
const { origin, pathname, search } = new URL(url);
const pathOf = (worker) => (paths ? paths[worker % paths.length] : pathname + search);
const pool = new Pool(origin, { connections, pipelining: 1 });

let measuring = false;
let stopping = false;
const counts = { ok: 0, other: 0, errors: 0, bytes: 0 };
const latencies = [];

async function worker(_, n) {
  const path = pathOf(n);
  while (!stopping) {
    try {
      const sent = performance.now();
      const { statusCode, headers: answered, body } = await pool.request({ method: 'GET', path, headers });
      const bytes = (await body.arrayBuffer()).byteLength;
      if (retryAfter && statusCode === 429) await sleep(Number(answered['retry-after'] ?? 1));
      if (!measuring) continue;
      if (latency) latencies.push(performance.now() - sent);
      if (statusCode === 200) counts.ok++;
      else counts.other++;
      counts.bytes += bytes;
    } catch {
      if (measuring) counts.errors++;
    }
  }
}

const sleep = (s) => new Promise((resolve) => setTimeout(resolve, s * 1000));
const workers = Array.from({ length: connections }, worker);
await sleep(warmup);
measuring = true;
const started = performance.now();
await sleep(duration);
measuring = false;
const seconds = (performance.now() - started) / 1000;
stopping = true;
await Promise.all(workers);
await pool.close();
latencies.sort((a, b) => a - b);
const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
const timing = latency && latencies.length > 0 ? { p50: at(0.5), p99: at(0.99), max: latencies.at(-1) } : {};
process.stdout.write(JSON.stringify({ rps: counts.ok / seconds, ...counts, seconds, ...timing }));
