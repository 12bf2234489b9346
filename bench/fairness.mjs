// One client's costly reads against another client's simple ones. Client A (8 connections,
// closed loop) reads a 20,000-invoice data set with the costliest query a request may
// carry (three ~ clauses over ||, three orderBy fields); client B meanwhile lists its
// companies one request at a time. Both load generators run in child processes, so only
// the service runs on this process's event loop. Side by side in one run, on the same data:
//   1. B alone (the baseline),
//   2. B while A's reads run on the request thread (readThreads 0: how ferry read before),
//   3. B while A's reads run in the reader thread, clients taking turns (the default).
// Target: B's p99 under 100 ms in 3.
// Then the delivery case (bench/fairness-deliveries.mjs): B's webhook deliveries while A's
// 50 consumers point at a receiver that never answers. Target: B's p99 under 2 s.
// Usage: npm run build && node bench/fairness.mjs [--invoices=20000] [--duration=8] [--flood=40]
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { runDeliveryCase } from './fairness-deliveries.mjs';
import { basic, distDir, option, runLoad, startSyncSetup, warnIfBusy } from './lib.mjs';

const TARGET_P99_MS = 100;
const invoices = option('invoices', 20_000);
const duration = option('duration', 8);
const { syncOnce } = await import(pathToFileURL(join(distDir, 'service', 'sync', 'sync-once.js')).href);
const { createService } = await import(pathToFileURL(join(distDir, 'service', 'app.js')).href);

const setup = await startSyncSetup({ invoices, listen: false });
const services = [];
try {
  await setup.queuePull('invoices');
  const pass = await syncOnce(setup.deps());
  if (pass.pulls !== 1) throw new Error(`the sync did not complete: ${JSON.stringify(pass)}`);
  const pooled = setup.service;
  const pooledUrl = await pooled.listen({ port: 0, host: '127.0.0.1' });
  const inline = await createService({ dataDir: setup.dataDir, rateLimit: 0, readThreads: 0 });
  services.push(inline);
  const inlineUrl = await inline.listen({ port: 0, host: '127.0.0.1' });

  // Client B: its own account with a page of companies.
  const created = await setup.call('POST', '/admin/clients', { name: 'Bystander Ltd', plan: 'Paid' });
  const bAuth = basic(created.apiKey);
  for (let i = 0; i < 20; i++) {
    const response = await pooled.app.inject({ method: 'POST', url: '/companies', headers: { authorization: bAuth }, payload: { name: `Bystander ${i}` } });
    if (response.statusCode !== 200) throw new Error(`create company: ${response.statusCode} ${response.body}`);
  }

  const query = encodeURIComponent('customerRef.id~C || status~paid || currency~GB');
  const heavyPath = `/companies/${setup.companyId}/data/invoices?pageSize=100&query=${query}&orderBy=-dueDate,currency,-issueDate`;
  const probe = (baseUrl) => runLoad({ url: `${baseUrl}/companies`, headers: { authorization: bAuth }, connections: 1, warmup: 1, duration, latency: true });
  const heavy = (baseUrl) => runLoad({ url: baseUrl + heavyPath, headers: { authorization: setup.auth }, connections: 8, warmup: 0.5, duration: duration + 1.5 });
  const under = async (baseUrl) => {
    const [b, a] = await Promise.all([probe(baseUrl), heavy(baseUrl)]);
    if (b.other + b.errors > 0 || a.errors > 0) throw new Error(`failed requests: B ${JSON.stringify(b)} A ${JSON.stringify(a)}`);
    return { b, a };
  };

  await warnIfBusy();
  console.log(`B's GET /companies (1 connection) while A reads ${invoices.toLocaleString('en-US')} invoices with 3 ~ clauses and 3 orderBy fields (8 connections), ${duration} s each:`);
  const alone = await probe(pooledUrl);
  const ms = (v) => `${v.toFixed(1).padStart(7)} ms`;
  const line = (name, b, a) => console.log(`  ${name.padEnd(34)} B p50 ${ms(b.p50)}  p99 ${ms(b.p99)}  max ${ms(b.max)}  (p99 ${(b.p99 / alone.p99).toFixed(1)}x alone)${a ? `  · A ${a.rps.toFixed(1)} reads/s, ${a.other} answered non-200` : ''}`);
  line('1. B alone', alone);
  const before = await under(inlineUrl);
  line('2. A on the request thread', before.b, before.a);
  const after = await under(pooledUrl);
  line('3. A in the reader thread (default)', after.b, after.a);
  console.log(`  target: B's p99 < ${TARGET_P99_MS} ms with A's load: ${after.b.p99 < TARGET_P99_MS ? 'met' : 'NOT met'} (${after.b.p99.toFixed(1)} ms; ${(before.b.p99 / after.b.p99).toFixed(1)}x better than on the request thread)`);
} finally {
  for (const service of services) await service.close();
  await setup.stop();
}

// The delivery case: one account's silent webhook receivers against another's deliveries.
await runDeliveryCase();
