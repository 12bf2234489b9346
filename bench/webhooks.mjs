// Webhook delivery latency: from the transaction that commits an event to the receiver's
// 2xx, median and p99 over N events to C consumers, events spread over 100 companies and
// recorded at a steady rate. Side by side in one run, against the same receivers (a child
// process of their own, bench/webhook-receivers.mjs):
//   1. the baseline: a plain loop POSTing each event to the C receivers the moment it
//      happens (undici, the HTTP client ferry delivers with, keep-alive, signed the same
//      way), no store and no outbox: what the outbox adds is the difference;
//   2. ferry: the real service (dist/) records each event with recordEvent in a
//      transaction, and its delivery loop claims, signs, sends and records each delivery.
// Each event's payload carries `t`, stamped just before the send (1) or the transaction (2);
// the receiver measures from it on the same machine's clock.
// Each run starts with `warmup` seconds of events at the same rate that are not counted
// (connections opened, code warmed up), as the other benches warm up.
// Usage: npm run build && node bench/webhooks.mjs [--events=10000] [--consumers=10] [--rate=200] [--warmup=2]
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { Agent, request } from 'undici';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { basic, distDir, option, warnIfBusy } from './lib.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const events = option('events', 10_000);
const consumers = option('consumers', 10);
const rate = option('rate', 200);
const warmup = Math.round(option('warmup', 2) * rate);
const COMPANIES = 100;
const load = (path) => import(pathToFileURL(join(distDir, ...path.split('/'))).href);
const { createService } = await load('service/app.js');
const { eventsOf, recordEvent } = await load('service/events/record.js');
const { newSigningSecret, signatureHeaders } = await load('lib/webhook-signature.js');

const now = () => performance.timeOrigin + performance.now();
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The receivers' process: its URLs, and `report(n)` resolving with the summary once n deliveries arrived. */
async function startReceivers() {
  const child = spawn(process.execPath, [join(here, 'webhook-receivers.mjs'), String(consumers)], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout });
  const next = () => new Promise((resolve) => lines.once('line', (line) => resolve(JSON.parse(line))));
  const urls = await next();
  return {
    urls,
    async report(n, deadlineMs) {
      const answer = next();
      child.stdin.write(`report ${n}\n`);
      let timer;
      const timeout = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`not all ${n} deliveries arrived within ${deadlineMs / 1000} s`)), deadlineMs);
      });
      try {
        return await Promise.race([answer, timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
    reset: () => child.stdin.write('reset\n'),
    stop: () => {
      child.stdin.end();
      return new Promise((resolve) => child.once('exit', resolve));
    },
  };
}

/**
 * Calls fire(n) at `rate` per second (catching up in batches when timers run late): first
 * the warm-up events, n from -warmup to -1, then the counted ones, n from 0 to events-1.
 */
async function paced(fire) {
  const start = now();
  let i = 0;
  while (i < warmup + events) {
    const due = Math.min(warmup + events, Math.floor(((now() - start) * rate) / 1000) + 1);
    for (; i < due; i++) fire(i - warmup);
    await sleep(1);
  }
}

const ms = (v) => `${v.toFixed(1).padStart(7)} ms`;
const work = mkdtempSync(join(tmpdir(), 'ferry-bench-webhooks-'));
const receivers = await startReceivers();
let service;
try {
  await warnIfBusy();
  const total = events * consumers;
  const deadline = Math.max(120_000, (events / rate) * 1000 * 3);
  console.log(`Webhook deliveries: ${events.toLocaleString('en-US')} events to ${consumers} consumers at ${rate} events/s (${total.toLocaleString('en-US')} deliveries, after ${warmup / rate} s of warm-up), receivers in a child process:`);

  // 1. The baseline: the same POSTs, sent directly.
  const secret = newSigningSecret();
  const pending = new Set();
  const agent = new Agent({ keepAliveTimeout: 4_000 });
  await paced((n) => {
    const t = now();
    const id = randomUUID();
    const body = JSON.stringify({ id, eventType: 'read.completed', generatedDate: new Date().toISOString(), payload: { t, n } });
    for (const url of receivers.urls) {
      const sent = request(url, { method: 'POST', headers: { 'content-type': 'application/json', ...signatureHeaders(secret, id, body) }, body, dispatcher: agent })
        .then((response) => response.body.dump());
      pending.add(sent);
      void sent.finally(() => pending.delete(sent));
    }
  });
  const baseline = await receivers.report(total, deadline);
  await Promise.all(pending);
  await agent.close();
  receivers.reset();

  // 2. ferry: recorded in a transaction, delivered from the outbox.
  const dataDir = join(work, 'data');
  // The receivers listen on 127.0.0.1: the operator's opt-in (--webhook-allow-private).
  service = await createService({ dataDir, rateLimit: 0, webhookTargets: { allowPrivate: true } });
  const auth = basic(service.adminKey);
  const call = async (method, url, payload) => {
    const response = await service.app.inject({ method, url, headers: { authorization: auth }, payload });
    if (response.statusCode >= 300) throw new Error(`${method} ${url}: ${response.statusCode} ${response.body}`);
    return JSON.parse(response.body);
  };
  const clientId = service.db.prepare('SELECT id FROM clients WHERE is_admin = 1 ORDER BY seq LIMIT 1').pluck().get();
  const companies = [];
  for (let i = 0; i < COMPANIES; i++) companies.push(await service.store.getCompany((await call('POST', '/companies', { name: `Bench ${i}` })).id));
  const companyOf = (n) => companies[((n % COMPANIES) + COMPANIES) % COMPANIES];
  for (const url of receivers.urls) await call('POST', '/webhooks', { url, eventTypes: ['read.completed'] });
  const context = eventsOf(service.context);
  let failed;
  await paced((n) => {
    const t = now();
    service.store.transaction(() => recordEvent(context, { clientId, company: companyOf(n), eventType: 'read.completed', payload: { t, n } }))
      .catch((err) => { failed ??= err; });
  });
  if (failed) throw failed;
  const ferry = await receivers.report(total, deadline);

  const line = (name, r, extra = '') => console.log(`  ${name.padEnd(44)} p50 ${ms(r.p50)}  p99 ${ms(r.p99)}  max ${ms(r.max)}${extra}`);
  line('1. baseline: a plain loop POSTing each event', baseline);
  line('2. ferry: commit → outbox → receiver\'s 2xx', ferry, `  (p50 ${(ferry.p50 / baseline.p50).toFixed(1)}x, p99 ${(ferry.p99 / baseline.p99).toFixed(1)}x the baseline)`);
  if (ferry.duplicates > 0 || baseline.duplicates > 0) console.log(`  duplicates: ferry ${ferry.duplicates}, baseline ${baseline.duplicates}`);
} finally {
  await service?.close();
  await receivers.stop();
  rmSync(work, { recursive: true, force: true });
}
