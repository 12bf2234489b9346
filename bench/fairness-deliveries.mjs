// The delivery case of bench/fairness.mjs: one account's webhook consumers at a receiver
// that never answers against another account's deliveries. Account A has 50 consumers
// (the most an account may have) at a server that reads each request and never answers,
// and records events over 100 companies (so each consumer has many lanes to try at once);
// account B has one consumer at a healthy receiver. B's latency is measured from the
// transaction that commits its event to the receiver's arrival, as bench/webhooks.mjs
// measures it; the receivers run in a child process (bench/webhook-receivers.mjs).
// Side by side in one run, on the real service (dist/) with its default delivery settings
// (256 slots, a 10 s timeout):
//   1. B alone (the baseline),
//   2. B while A's events flood in, for `flood` seconds (A's attempts time out, retry, and
//      its consumers' breakers open).
// Target: B's p99 under 2 s in 2.
// Usage: npm run build && node bench/fairness-deliveries.mjs [--flood=40] [--bRate=5] [--aRate=20]
// (or as part of node bench/fairness.mjs).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { basic, distDir, option, warnIfBusy } from './lib.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const TARGET_P99_MS = 2_000;
const A_CONSUMERS = 50;
const A_COMPANIES = 100;
const B_COMPANIES = 10;

/** The receivers' process: B's healthy receiver and A's hanging one. */
async function startReceivers() {
  const child = spawn(process.execPath, [join(here, 'webhook-receivers.mjs'), '1', 'HANG'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout });
  const next = () => new Promise((resolve) => lines.once('line', (line) => resolve(JSON.parse(line))));
  const [healthy, hanging] = await next();
  return {
    healthy,
    hanging,
    /** The latency summary once n deliveries arrived, or of those that did within `deadlineMs`. */
    async report(n, deadlineMs) {
      const answer = next();
      child.stdin.write(`report ${n}\n`);
      const timer = setTimeout(() => child.stdin.write('summary\n'), deadlineMs);
      try {
        return { ...(await answer), expected: n, waitedMs: deadlineMs };
      } finally {
        clearTimeout(timer);
      }
    },
    hangs() {
      const answer = next();
      child.stdin.write('hangs\n');
      return answer;
    },
    reset: () => child.stdin.write('reset\n'),
    stop: () => {
      child.stdin.end();
      return new Promise((resolve) => child.once('exit', resolve));
    },
  };
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Calls fire(n) `rate` times a second for `seconds` (catching up when timers run late). */
async function paced(rate, seconds, fire, stopped = () => false) {
  const start = performance.now();
  const total = Math.round(rate * seconds);
  let i = 0;
  while (i < total && !stopped()) {
    const due = Math.min(total, Math.floor(((performance.now() - start) * rate) / 1000) + 1);
    for (; i < due; i++) fire(i);
    await sleep(5);
  }
  return i;
}

export async function runDeliveryCase({ flood = option('flood', 40), bRate = option('bRate', 5), aRate = option('aRate', 20) } = {}) {
  const load = (path) => import(pathToFileURL(join(distDir, ...path.split('/'))).href);
  const { createService } = await load('service/app.js');
  const { eventsOf, recordEvent } = await load('service/events/record.js');
  const work = mkdtempSync(join(tmpdir(), 'ferry-bench-fair-deliveries-'));
  const receivers = await startReceivers();
  let service;
  try {
    // The receivers listen on 127.0.0.1: the operator's opt-in.
    service = await createService({ dataDir: join(work, 'data'), rateLimit: 0, webhookTargets: { allowPrivate: true } });
    const call = async (auth, method, url, payload) => {
      const response = await service.app.inject({ method, url, headers: { authorization: auth }, payload });
      if (response.statusCode >= 300) throw new Error(`${method} ${url}: ${response.statusCode} ${response.body}`);
      return JSON.parse(response.body);
    };
    const admin = basic(service.adminKey);
    const account = async (name, companies, consumerUrls) => {
      const client = await call(admin, 'POST', '/admin/clients', { name, plan: 'Paid' });
      const auth = basic(client.apiKey);
      const rows = [];
      for (let i = 0; i < companies; i++) rows.push(await service.store.getCompany((await call(auth, 'POST', '/companies', { name: `${name} ${i}` })).id));
      for (const url of consumerUrls) await call(auth, 'POST', '/webhooks', { url, eventTypes: ['read.completed'] });
      return { id: client.id, companies: rows };
    };
    const a = await account('Flood Ltd', A_COMPANIES, Array.from({ length: A_CONSUMERS }, (_, i) => `${receivers.hanging}/${i}`));
    const b = await account('Bystander Ltd', B_COMPANIES, [receivers.healthy]);
    const context = eventsOf(service.context);
    let failed;
    const emit = (owner, n, payload) => {
      service.store.transaction(() => recordEvent(context, {
        clientId: owner.id, company: owner.companies[n % owner.companies.length], eventType: 'read.completed', payload,
      })).catch((err) => { failed ??= err; });
    };
    const bEvents = (seconds) => paced(bRate, seconds, (n) => emit(b, n, { t: performance.timeOrigin + performance.now(), n }));

    await warnIfBusy();
    console.log(`B's webhook deliveries (1 consumer, ${bRate} events/s) while A's ${A_CONSUMERS} consumers point at a receiver that never answers (A: ${aRate} events/s over ${A_COMPANIES} companies, ${aRate * A_CONSUMERS} deliveries/s), 256 slots, 10 s timeout:`);
    // 1. B alone; its first few seconds warm the connection and the code, uncounted.
    await paced(bRate, 2, (n) => emit(b, n, { t: performance.timeOrigin + performance.now(), n: -1 - n }));
    await sleep(500);
    const alone = await receivers.report(await bEvents(Math.max(10, flood / 4)), 60_000);
    receivers.reset();

    // 2. A floods; B goes on as before.
    let floodOver = false;
    const flooding = paced(aRate, flood, (n) => emit(a, n, { n }), () => floodOver);
    const bSent = await bEvents(flood);
    floodOver = true;
    await flooding;
    const during = await receivers.report(bSent, 120_000);
    const hangs = await receivers.hangs();
    if (failed) throw failed;

    const ms = (v) => `${v.toFixed(1).padStart(8)} ms`;
    // A delivery that had not arrived when the wait ended took longer than the wait: a
    // percentile that falls among those is shown as "> wait".
    const late = (r) => `> ${(r.waitedMs / 1000).toFixed(0)} s`;
    const at = (r, value) => (value === null ? late(r).padStart(11) : ms(value));
    const line = (name, r) => {
      const ratio = r.p99 === null ? `> ${(r.waitedMs / alone.p99).toFixed(0)}` : (r.p99 / alone.p99).toFixed(1);
      const arrived = r.count < r.expected ? `; ${r.count} of ${r.expected} arrived within ${r.waitedMs / 1000} s of the last event` : `; ${r.count} deliveries`;
      console.log(`  ${name.padEnd(36)} B p50 ${at(r, r.p50)}  p99 ${at(r, r.p99)}  (p99 ${ratio}x alone${arrived})`);
    };
    line('1. B alone', alone);
    line(`2. B during A's flood (${flood} s)`, during);
    console.log(`  A's attempts at the silent receiver: ${hangs.requests} in all, at most ${hangs.mostOpen} at once`);
    const met = during.p99 !== null && during.p99 < TARGET_P99_MS;
    console.log(`  target: B's p99 < ${TARGET_P99_MS} ms during A's flood: ${met ? 'met' : 'NOT met'} (${at(during, during.p99).trim()})`);
    if (during.duplicates > 0) console.log(`  duplicates: ${during.duplicates}`);
  } finally {
    await service?.close();
    await receivers.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await runDeliveryCase();
