// The receivers of bench/webhooks.mjs and bench/fairness-deliveries.mjs, in a process of
// their own (so they do not share the service's event loop): COUNT node:http servers on
// 127.0.0.1, each answering 204 at once and noting, per delivery, the time from the
// payload's `t` (stamped by the sender at commit, on the same machine's clock) to arrival;
// warm-up events (payload `n` below 0) are not counted. With HANG, one more server that
// reads each request and never answers. Prints its URLs as one JSON line (the hanging one
// last); on stdin, `report N` prints the latency summary once N deliveries have arrived,
// `summary` answers a pending `report` at once with what has arrived (a percentile among
// those not arrived is null), `reset` clears,
// `hangs` prints the hanging server's {requests, open, mostOpen}.
// Usage: node bench/webhook-receivers.mjs COUNT [HANG]
import { createServer } from 'node:http';
import { createInterface } from 'node:readline';

const count = Number(process.argv[2] ?? 10);
const hang = process.argv[3] === 'HANG';
const now = () => performance.timeOrigin + performance.now();
let latencies = [];
let ids = new Map();
let waiting;

/** Over `expected` deliveries: a percentile that falls among those not arrived yet is null. */
function summary(expected = latencies.length) {
  const sorted = [...latencies].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(expected - 1, Math.floor(q * expected))] ?? null;
  let duplicates = 0;
  for (const n of ids.values()) duplicates += n - 1;
  return { count: sorted.length, p50: at(0.5), p99: at(0.99), max: sorted.at(-1), duplicates };
}

function check() {
  if (waiting && latencies.length >= waiting) {
    waiting = undefined;
    process.stdout.write(`${JSON.stringify(summary())}\n`);
  }
}

const servers = await Promise.all(Array.from({ length: count }, (_, i) => new Promise((resolve) => {
  const server = createServer((request, response) => {
    const chunks = [];
    request.on('data', (c) => chunks.push(c));
    request.on('end', () => {
      const arrived = now();
      response.writeHead(204).end();
      const event = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      if (event.payload.n < 0) return;
      latencies.push(arrived - event.payload.t);
      const key = `${i}:${request.headers['webhook-id']}`;
      ids.set(key, (ids.get(key) ?? 0) + 1);
      check();
    });
  });
  server.keepAliveTimeout = 10_000;
  server.listen(0, '127.0.0.1', () => resolve(server));
})));

const hangs = { requests: 0, open: 0, mostOpen: 0 };
if (hang) {
  const server = createServer((request) => {
    request.resume();
    hangs.requests += 1;
    hangs.open += 1;
    hangs.mostOpen = Math.max(hangs.mostOpen, hangs.open);
    request.socket.once('close', () => (hangs.open -= 1));
  });
  server.requestTimeout = 0;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
}

process.stdout.write(`${JSON.stringify(servers.map((s) => `http://127.0.0.1:${s.address().port}/hooks`))}\n`);
createInterface({ input: process.stdin }).on('line', (line) => {
  const [command, arg] = line.trim().split(' ');
  if (command === 'reset') {
    latencies = [];
    ids = new Map();
  } else if (command === 'summary') {
    if (waiting === undefined) return;
    const expected = waiting;
    waiting = undefined;
    process.stdout.write(`${JSON.stringify(summary(expected))}\n`);
  } else if (command === 'hangs') {
    process.stdout.write(`${JSON.stringify(hangs)}\n`);
  } else if (command === 'report') {
    waiting = Number(arg);
    check();
  }
}).on('close', () => process.exit(0));
