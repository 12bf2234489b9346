// The delivery loop of a running service: it wakes on committed events and on its retry
// timer, a hanging receiver never holds up the other consumers, and a stop cuts attempts
// in flight, frees their leases, and the next start delivers them (same webhook-id).
import { rmSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { atRest } from '../helpers/at-rest.js';
import { tempDir } from '../helpers/service.js';
import { startTestStack, type TestService } from '../helpers/stack.js';
import { waitFor } from '../helpers/sync.js';
import { countsById, startReceiver, type Receiver } from './support.js';

/** The receivers listen on 127.0.0.1: the operator's opt-in. */
const local = { webhookTargets: { allowPrivate: true } };

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function receiver(mode?: Parameters<typeof startReceiver>[0]): Promise<Receiver> {
  const r = await startReceiver(mode);
  cleanups.push(() => r.close());
  return r;
}

async function consumer(t: TestService, apiKey: string, url: string, eventTypes = ['company.created']): Promise<{ id: string; secret: string }> {
  const created = await t.call('POST', '/webhooks', { apiKey, body: { url, eventTypes } });
  expect(created.status, created.text).toBe(201);
  return created.body;
}

describe('the delivery loop', () => {
  it('delivers everything to 49 consumers promptly while the 50th hangs', async () => {
    // The hanging receiver is given 30 s: every healthy delivery landing well before that
    // shows nobody waited for it, however slow a loaded machine makes the rest.
    const t = await startTestStack('service', { ...local, webhookTuning: { attempt: { timeoutMs: 30_000 } } });
    cleanups.push(() => t.stop());
    const { apiKey } = await t.createClient('Fifty Ltd', 'Paid');
    const healthy = await receiver();
    const hanging = await receiver({ kind: 'hang' });
    const hung = await consumer(t, apiKey, hanging.url);
    for (let i = 0; i < 49; i++) {
      const made = await consumer(t, apiKey, `${healthy.url}/${i}`);
      healthy.secrets.set(`/hooks/${i}`, made.secret);
    }
    const started = Date.now();
    const companies = 20;
    for (let i = 0; i < companies; i++) expect((await t.call('POST', '/companies', { apiKey, body: { name: `Fan ${i}` } })).status).toBe(200);
    await waitFor('every healthy delivery', async () => healthy.received.length >= 49 * companies, 20_000, 20);
    const elapsed = Date.now() - started;
    expect(elapsed).toBeLessThan(20_000);
    expect(healthy.received.every((r) => r.verified === true)).toBe(true);
    const byPath = new Map<string, Set<string>>();
    for (const r of healthy.received) byPath.set(r.path, (byPath.get(r.path) ?? new Set()).add(r.id));
    expect(byPath.size).toBe(49);
    for (const ids of byPath.values()) expect(ids.size).toBe(companies);
    // The hanging consumer holds no more than its share of attempts.
    expect(hanging.requests).toBeGreaterThan(0);
    expect(hanging.requests).toBeLessThanOrEqual(8);
    const log = await t.call('GET', `/webhooks/${hung.id}/deliveries?status=Delivered`, { apiKey });
    expect(log.body.totalResults).toBe(0);

    // Stopping does not wait out the hanging attempts.
    const stopping = Date.now();
    await t.service.close();
    expect(Date.now() - stopping).toBeLessThan(3_000);
  });

  it('retries on its timer and delivers once the receiver is up', async () => {
    const t = await startTestStack('service', { ...local, webhookTuning: { backoff: { baseMs: 1_000, factor: 1, capMs: 1_000, giveUpMs: 60_000 } } });
    cleanups.push(() => t.stop());
    const { apiKey } = await t.createClient('Timer Ltd', 'Paid');
    const r = await receiver();
    const made = await consumer(t, apiKey, r.url);
    r.secret = made.secret;
    await r.down();
    await t.call('POST', '/companies', { apiKey, body: { name: 'Later' } });
    const attempts = async () => (await t.call('GET', `/webhooks/${made.id}/deliveries`, { apiKey })).body.results[0]?.attempts ?? 0;
    await waitFor('two refused attempts', async () => (await attempts()) >= 2, 10_000);
    await r.up();
    await waitFor('the delivery', async () => r.received.length === 1, 10_000);
    const [d] = (await t.call('GET', `/webhooks/${made.id}/deliveries`, { apiKey })).body.results;
    await waitFor('the delivery recorded', async () => (await t.call('GET', `/webhooks/${made.id}/deliveries/${d.id}`, { apiKey })).body.status === 'Delivered');
    expect(r.received[0]!.verified).toBe(true);
    expect(r.received[0]!.id).toBe(d.eventId);
  });

  it('frees the leases of attempts cut off by a stop, and the next start sends them again under the same webhook-id', async () => {
    const dataDir = tempDir('ferry-webhooks-');
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const r = await receiver({ kind: 'hang' });
    const first = await startTestStack('service', { ...local, dataDir });
    const { apiKey } = await first.createClient('Restart Ltd', 'Paid');
    const made = await consumer(first, apiKey, r.url);
    r.secret = made.secret;
    await first.call('POST', '/companies', { apiKey, body: { name: 'In flight' } });
    await waitFor('the attempt in flight', async () => r.requests === 1);
    await first.stop();

    const rows = await atRest(first).all('SELECT status, attempts, lease_until FROM webhook_deliveries');
    expect(rows).toEqual([{ status: 'Pending', attempts: 0, lease_until: null }]);

    r.mode = { kind: 'ok' };
    const second = await startTestStack('service', { ...local, dataDir });
    cleanups.push(() => second.stop());
    await waitFor('the delivery after restart', async () => r.received.length === 1);
    expect(r.received[0]!.verified).toBe(true);
    expect([...countsById(r.received).keys()]).toHaveLength(1);
  });
});
