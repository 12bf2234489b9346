// The delivery loop shares its slots between accounts: account A's consumers at a receiver
// that never answers take no more than A's share of them, and account B's deliveries all
// arrive while A's attempts are still hanging. Eight slots here, so the shares are small.
import { afterEach, describe, expect, it } from 'vitest';
import { startTestStack, type TestService } from '../helpers/stack.js';
import { waitFor } from '../helpers/sync.js';
import { startReceiver, type Receiver } from './support.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function receiver(mode?: Parameters<typeof startReceiver>[0]): Promise<Receiver> {
  const r = await startReceiver(mode);
  cleanups.push(() => r.close());
  return r;
}

async function consumer(t: TestService, apiKey: string, url: string): Promise<{ id: string; secret: string }> {
  const created = await t.call('POST', '/webhooks', { apiKey, body: { url, eventTypes: ['company.created'] } });
  expect(created.status, created.text).toBe(201);
  return created.body;
}

describe('delivery slots shared between accounts', () => {
  it('delivers account B\'s events while account A\'s consumers hang, A holding no more than its share of the slots', async () => {
    // Attempts that hang far longer than the test: none of A's ends while B's are delivered.
    const t = await startTestStack('service', { webhookTargets: { allowPrivate: true }, webhookTuning: { maxInFlight: 8, perConsumer: 2, attempt: { timeoutMs: 120_000 } } });
    cleanups.push(() => t.stop());
    const a = await t.createClient('Flood Ltd', 'Paid');
    const b = await t.createClient('Bystander Ltd', 'Paid');
    const hanging = await receiver({ kind: 'hang' });
    const healthy = await receiver();
    const aConsumers: string[] = [];
    for (let i = 0; i < 6; i++) aConsumers.push((await consumer(t, a.apiKey, `${hanging.url}/${i}`)).id);
    const bConsumer = await consumer(t, b.apiKey, healthy.url);
    healthy.secret = bConsumer.secret;

    // A's six consumers want two attempts each (12) of the 8 slots; alone, A may hold
    // min(128, 8 / (1 + 1)) = 4, leaving room for an account that comes next.
    for (let i = 0; i < 3; i++) expect((await t.call('POST', '/companies', { apiKey: a.apiKey, body: { name: `Flood ${i}` } })).status).toBe(200);
    await waitFor('A holding its share', async () => hanging.hanging() >= 4);

    const bCompanies = 5;
    for (let i = 0; i < bCompanies; i++) expect((await t.call('POST', '/companies', { apiKey: b.apiKey, body: { name: `Bystander ${i}` } })).status).toBe(200);
    await waitFor('every delivery of B', async () => healthy.received.length === bCompanies, 30_000);
    expect(healthy.received.every((r) => r.verified === true)).toBe(true);
    await waitFor('B\'s deliveries recorded', async () => {
      const log = await t.call('GET', `/webhooks/${bConsumer.id}/deliveries?status=Delivered`, { apiKey: b.apiKey });
      return log.body.totalResults === bCompanies;
    });

    // A's attempts are all still hanging: not one has ended, none more was started, and A
    // never held more than its share.
    expect(hanging.hanging()).toBe(4);
    expect(hanging.requests).toBe(4);
    expect(hanging.mostHanging).toBe(4);
    for (const id of aConsumers) {
      const log = await t.call('GET', `/webhooks/${id}/deliveries`, { apiKey: a.apiKey });
      expect(log.body.results.map((d: any) => [d.status, d.attempts])).toEqual(Array(3).fill(['Pending', 0]));
    }
  });
});
