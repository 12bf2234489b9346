// The outbox survives kill -9: the real `ferry serve` is killed with 500 deliveries pending
// (the receiver answering 503), restarted on the same data dir, and every event arrives,
// duplicates only ever under the same webhook-id with the same body.
import { rmSync } from 'node:fs';
import pLimit from 'p-limit';
import { afterEach, expect, it } from 'vitest';
import { tempDir } from '../helpers/service.js';
import { startTestStack, type ServeProcess } from '../helpers/stack.js';
import { createClient, waitFor } from '../helpers/sync.js';
import { startReceiver, type Receiver } from './support.js';

const COMPANIES = 500;
const cleanups: Array<() => Promise<unknown> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

it('delivers all 500 events after a kill -9 and a restart on the same data dir', { timeout: 180_000 }, async () => {
  const dataDir = tempDir('ferry-kill-');
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  const receiver: Receiver = await startReceiver({ kind: 'status', status: 503 });
  cleanups.push(() => receiver.close());

  const first: ServeProcess = await startTestStack('process', { dataDir, args: ['--webhook-allow-private'] });
  let firstAlive = true;
  cleanups.push(() => (firstAlive ? first.stop('SIGKILL') : undefined));
  const apiKey = await createClient(first.api, first.adminKey, 'Kill Ltd', 'Paid');
  const created = await first.api.call('POST', '/webhooks', { apiKey, body: { url: receiver.url, eventTypes: ['company.created'] } });
  expect(created.status, created.text).toBe(201);
  receiver.secret = created.body.secret;

  const limit = pLimit(16);
  const companyIds = await Promise.all(Array.from({ length: COMPANIES }, (_, i) => limit(async () => {
    const made = await first.api.call('POST', '/companies', { apiKey, body: { name: `Killed ${i}` } });
    expect(made.status, made.text).toBe(200);
    return made.body.id as string;
  })));
  // Deliveries are being tried (and refused) when the process dies.
  await waitFor('attempts under way', async () => receiver.requests >= 50);
  const killed = await first.stop('SIGKILL');
  firstAlive = false;
  expect(killed.signal).toBe('SIGKILL');
  expect(receiver.received).toHaveLength(0);

  receiver.mode = { kind: 'ok' };
  const second = await startTestStack('process', { dataDir, args: ['--webhook-allow-private'] });
  cleanups.push(() => second.stop());
  await waitFor('every event delivered', async () => new Set(receiver.received.map((r) => r.id)).size >= COMPANIES, 90_000, 100);

  const bodies = new Map<string, string>();
  for (const r of receiver.received) {
    expect(r.verified).toBe(true);
    expect(r.event.eventType).toBe('company.created');
    // A duplicate is the same event: same webhook-id, same body.
    if (bodies.has(r.id)) expect(r.body).toBe(bodies.get(r.id));
    bodies.set(r.id, r.body);
  }
  expect(new Set(receiver.received.map((r) => r.event.payload.id))).toEqual(new Set(companyIds));
  expect(bodies.size).toBe(COMPANIES);

  await waitFor('the log says Delivered', async () => {
    const log = await second.api.call('GET', `/webhooks/${created.body.id}/deliveries?status=Delivered&pageSize=1`, { apiKey });
    return log.body.totalResults === COMPANIES;
  });
  const pending = await second.api.call('GET', `/webhooks/${created.body.id}/deliveries?status=Pending&pageSize=1`, { apiKey });
  expect(pending.body.totalResults).toBe(0);
});
