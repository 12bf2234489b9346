// Webhook targets, through the real routes and the real delivery path: by default a consumer
// URL on a loopback, private, link-local, unique-local, … address (in every spelling) is a
// 400 naming url and saying why; every connection is checked again (a localhost consumer
// accepted under the operator's opt-in is refused once it is withdrawn; a name is resolved
// once per connection, so a second answer cannot redirect it); a refused attempt says only
// "address not allowed", with no latency, and is retried; the opt-ins let the receivers
// through; a test or a replay is refused as a creation would be.
import { rmSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { TARGET_REFUSED } from '../../src/service/webhooks/attempt.js';
import { deliverOnce } from '../../src/service/webhooks/deliver-once.js';
import { targetAgent, type Resolve } from '../../src/service/webhooks/target-agent.js';
import { TargetPolicy } from '../../src/service/webhooks/target-policy.js';
import { tempDir } from '../helpers/service.js';
import { startTestStack, type TestService } from '../helpers/stack.js';
import { FakeClock, waitFor } from '../helpers/sync.js';
import { startReceiver, type Receiver } from './support.js';

const cleanups: Array<() => Promise<unknown> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function receiver(): Promise<Receiver> {
  const r = await startReceiver();
  cleanups.push(() => r.close());
  return r;
}

const create = (t: TestService, apiKey: string, url: string, eventTypes = ['company.created']) => t.call('POST', '/webhooks', { apiKey, body: { url, eventTypes } });

async function consumer(t: TestService, apiKey: string, url: string): Promise<string> {
  const made = await create(t, apiKey, url);
  expect(made.status, made.text).toBe(201);
  return made.body.id;
}

const lastAttempt = async (t: TestService, apiKey: string, id: string) => (await t.call('GET', `/webhooks/${id}/deliveries`, { apiKey })).body.results[0]?.lastAttempt;

describe('a consumer url, with the default policy', () => {
  let t: TestService;
  let apiKey: string;
  beforeAll(async () => {
    // Nothing here is delivered: the routes alone.
    t = await startTestStack('service', { startWebhooks: false });
    apiKey = (await t.createClient('Probe Ltd', 'Paid')).apiKey;
  });
  afterAll(async () => {
    await t.stop();
  });

  const refused: Array<[string, RegExp]> = [
    ['http://127.0.0.1:5432/', /127\.0\.0\.1 is a loopback address/],
    ['http://169.254.169.254/latest/meta-data/iam/', /169\.254\.169\.254 is a link-local address/],
    ['http://2852039166/latest/meta-data/', /169\.254\.169\.254 is a link-local address/],
    ['http://0xa9fea9fe/', /169\.254\.169\.254 is a link-local address/],
    ['http://0x7f000001/', /127\.0\.0\.1 is a loopback address/],
    ['http://127.1/', /127\.0\.0\.1 is a loopback address/],
    ['http://[::ffff:127.0.0.1]/', /::ffff:7f00:1 is IPv4-mapped for 127\.0\.0\.1, a loopback address/],
    ['http://10.0.0.1/', /10\.0\.0\.1 is a private address/],
    ['http://[fd00::1]/', /fd00::1 is a unique-local address/],
    ['http://0177.0.0.1:8080/', /127\.0\.0\.1 is a loopback address/],
    ['http://127.0.0.1./hooks', /127\.0\.0\.1 is a loopback address/],
    ['https://localhost./hooks', /localhost is this machine/],
    ['http://LocalHost:9090/admin/tenants', /localhost is this machine/],
    ['http://100.64.0.1/', /shared address/],
    ['http://192.168.1.1/', /private address/],
    ['http://0.0.0.0:8080/', /unspecified address/],
    ['http://224.0.0.251/', /multicast address/],
    ['https://[::1]:8443/', /::1 is the loopback address/],
    ['http://[fe80::1]/', /link-local address/],
    ['http://[::127.0.0.1]/', /IPv4-compatible for 127\.0\.0\.1/],
    ['http://[64:ff9b::a9fe:a9fe]/', /NAT64 for 169\.254\.169\.254/],
    ['http://[2002:a00:1::]/', /6to4 for 10\.0\.0\.1/],
    ['http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/', /Teredo address/],
    ['http://240.0.0.1/', /reserved address/],
  ];
  it.each(refused)('refuses %s with a 400 naming url and saying why', async (url, reason) => {
    const result = await create(t, apiKey, url);
    expect(result.status, result.text).toBe(400);
    expect(result.body.validation.errors).toEqual([{ itemId: 'url', validatorName: 'WebhookConsumer', message: expect.stringMatching(/^url must reach a public address: /) }]);
    const [item] = result.body.validation.errors;
    expect(item.message).toMatch(reason);
    // What to do instead: the CLI forwards to one's own machine; the operator may opt in.
    expect(result.body.error).toContain('ferry listen --forward-to URL');
    expect(result.body.error).toContain('--webhook-allow-private');
  });

  it('refuses the service\'s own address and names every other problem of the body too', async () => {
    const own = await create(t, apiKey, `${t.baseUrl}/admin/clients`, ['nope.never']);
    expect(own.status).toBe(400);
    expect(own.body.validation.errors.map((e: any) => e.itemId)).toEqual(['url', 'eventTypes']);
    expect((await t.call('GET', '/webhooks', { apiKey })).body.results).toEqual([]);
  });

  it('takes public addresses and names (a name is judged when a delivery connects)', async () => {
    for (const url of ['https://example.com/hooks', 'http://8.8.8.8/x', 'http://[2606:4700:4700::1111]/', 'http://[::ffff:8.8.8.8]/', 'http://hooks.internal.example/']) {
      const made = await create(t, apiKey, url);
      expect(made.status, `${url}: ${made.text}`).toBe(201);
    }
  });
});

describe('the operator\'s opt-ins', () => {
  it('--webhook-allow-private takes any address and delivers to a receiver on 127.0.0.1', async () => {
    const r = await receiver();
    const t = await startTestStack('service', { webhookTargets: { allowPrivate: true } });
    cleanups.push(() => t.stop());
    const { apiKey } = await t.createClient('Local Ltd', 'Paid');
    await consumer(t, apiKey, r.url);
    expect((await create(t, apiKey, 'http://[fd00::1]/')).status).toBe(201);
    await t.call('POST', '/companies', { apiKey, body: { name: 'Delivered' } });
    await waitFor('the delivery', async () => r.received.length === 1, 10_000);
  });

  it('--webhook-allow HOST:PORT takes that host and port only, and delivers to it', async () => {
    const allowed = await receiver();
    const other = await receiver();
    const t = await startTestStack('service', { webhookTargets: { allow: [`127.0.0.1:${allowed.port}`] } });
    cleanups.push(() => t.stop());
    const { apiKey } = await t.createClient('Listed Ltd', 'Paid');
    await consumer(t, apiKey, `http://0x7f000001:${allowed.port}/hooks`);
    expect((await create(t, apiKey, other.url)).body.validation.errors[0].message).toMatch(/127\.0\.0\.1 is a loopback address/);
    expect((await create(t, apiKey, `http://localhost:${allowed.port}/hooks`)).status).toBe(400);
    await t.call('POST', '/companies', { apiKey, body: { name: 'Listed' } });
    await waitFor('the delivery', async () => allowed.received.length === 1, 10_000);
    expect(other.requests).toBe(0);
  });
});

describe('every connection is checked', () => {
  it('refuses consumers accepted under an opt-in once it is withdrawn (by name and by address), retries them, and delivers when it is back', async () => {
    const dataDir = tempDir('ferry-targets-');
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const r = await receiver();
    const backoff = { baseMs: 1_000, factor: 1, capMs: 1_000, giveUpMs: 600_000 };
    const open = await startTestStack('service', { dataDir, startWebhooks: false, webhookTargets: { allowPrivate: true } });
    const { apiKey } = await open.createClient('Withdrawn Ltd', 'Paid');
    const byName = await consumer(open, apiKey, `http://localhost:${r.port}/by-name`);
    const byAddress = await consumer(open, apiKey, `http://0x7f000001:${r.port}/by-address`);
    await open.stop();

    const strict = await startTestStack('service', { dataDir, webhookTuning: { backoff } });
    let strictUp = true;
    cleanups.push(() => (strictUp ? strict.stop() : undefined));
    await strict.call('POST', '/companies', { apiKey, body: { name: 'Refused' } });
    for (const id of [byName, byAddress]) {
      const attempt = await waitFor('a refused attempt', () => lastAttempt(strict, apiKey, id), 10_000);
      // No address, no latency: nothing that maps the service's network.
      expect(attempt).toEqual({ at: expect.any(String), error: TARGET_REFUSED, latencyMs: 0 });
      const [delivery] = (await strict.call('GET', `/webhooks/${id}/deliveries`, { apiKey })).body.results;
      expect(delivery).toMatchObject({ status: 'Pending' });
      // A test or a replay is refused as a creation would be.
      const test = await strict.call('POST', `/webhooks/${id}/test`, { apiKey });
      expect(test.status).toBe(400);
      expect(test.body.validation.errors).toEqual([expect.objectContaining({ itemId: 'url', message: expect.stringMatching(/^url must reach a public address: (localhost is this machine|127\.0\.0\.1 is a loopback address)/) })]);
      expect((await strict.call('POST', `/webhooks/${id}/deliveries/${delivery.id}/replay`, { apiKey })).status).toBe(400);
    }
    // Retried on the backoff, refused again; the receiver never heard of it.
    await waitFor('a second refused attempt', async () => (await strict.call('GET', `/webhooks/${byName}/deliveries`, { apiKey })).body.results[0].attempts >= 2, 10_000);
    expect(r.requests).toBe(0);
    await strict.stop();
    strictUp = false;

    // The operator opts in again: the Pending deliveries go out.
    const reopened = await startTestStack('service', { dataDir, webhookTuning: { backoff }, webhookTargets: { allowPrivate: true } });
    cleanups.push(() => reopened.stop());
    await waitFor('both deliveries', async () => r.received.length === 2, 15_000);
    expect(r.received.map((x) => x.path).sort()).toEqual(['/by-address', '/by-name']);
  });

  it('resolves a name once per connection and connects to the address it checked (DNS rebinding)', async () => {
    const clock = new FakeClock();
    const t = await startTestStack('service', { clock, startWebhooks: false });
    cleanups.push(() => t.stop());
    const { apiKey } = await t.createClient('Rebind Ltd', 'Paid');
    const r = await receiver();
    const id = await consumer(t, apiKey, `http://rebind.example:${r.port}/hooks`);
    // A resolver that answers a public address once, then the receiver's: a second lookup
    // for the same connection (check one answer, connect by another) would reach it.
    const lookups: string[] = [];
    const resolve: Resolve = async (host) => {
      lookups.push(host);
      // example.com's address: public, and nothing of this test listens there.
      return lookups.length === 1 ? [{ address: '93.184.215.14', family: 4 }] : [{ address: '127.0.0.1', family: 4 }];
    };
    const agent = targetAgent(new TargetPolicy(), resolve);
    cleanups.push(() => agent.close());
    const deps = { store: t.service.store, clock, sealer: t.service.context.sealer, random: () => 1, attempt: { timeoutMs: 500, dispatcher: agent } };
    await t.call('POST', '/companies', { apiKey, body: { name: 'Rebound' } });

    expect(await deliverOnce(deps)).toMatchObject({ claimed: 1, retried: 1 });
    expect(lookups).toEqual(['rebind.example']);
    expect(r.requests).toBe(0);
    expect((await lastAttempt(t, apiKey, id)).error).toMatch(/^(could not connect|no complete answer within 0\.5 s)$/);

    // The next connection asks again, is told 127.0.0.1, and is refused before connecting.
    clock.advance(5);
    expect(await deliverOnce(deps)).toMatchObject({ claimed: 1, retried: 1 });
    expect(lookups).toHaveLength(2);
    expect(r.requests).toBe(0);
    expect(await lastAttempt(t, apiKey, id)).toEqual({ at: expect.any(String), error: TARGET_REFUSED, latencyMs: 0 });
  });

  it('refuses a name when any of its addresses is not allowed, in any family or form', async () => {
    const clock = new FakeClock();
    const t = await startTestStack('service', { clock, startWebhooks: false });
    cleanups.push(() => t.stop());
    const { apiKey } = await t.createClient('Mixed Ltd', 'Paid');
    const r = await receiver();
    const answers: Record<string, Array<{ address: string; family: number }>> = {
      'mixed.example': [{ address: '93.184.215.14', family: 4 }, { address: '127.0.0.1', family: 4 }],
      'mapped.example': [{ address: '::ffff:127.0.0.1', family: 6 }],
      'metadata.example': [{ address: '2606:4700:4700::1111', family: 6 }, { address: '169.254.169.254', family: 4 }],
    };
    const asked: string[] = [];
    const agent = targetAgent(new TargetPolicy(), async (host) => {
      asked.push(host);
      return answers[host]!;
    });
    cleanups.push(() => agent.close());
    const ids = [];
    for (const host of Object.keys(answers)) ids.push(await consumer(t, apiKey, `http://${host}:${r.port}/hooks`));
    await t.call('POST', '/companies', { apiKey, body: { name: 'Mixed' } });
    const deps = { store: t.service.store, clock, sealer: t.service.context.sealer, attempt: { timeoutMs: 500, dispatcher: agent } };
    expect(await deliverOnce(deps)).toMatchObject({ claimed: 3, retried: 3 });
    expect(asked.sort()).toEqual(Object.keys(answers).sort());
    for (const id of ids) expect(await lastAttempt(t, apiKey, id)).toMatchObject({ error: TARGET_REFUSED, latencyMs: 0 });
    expect(r.requests).toBe(0);
  });

  it('a delivery pass given no dispatcher goes through the strict one', async () => {
    const clock = new FakeClock();
    const dataDir = tempDir('ferry-targets-');
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const r = await receiver();
    const open = await startTestStack('service', { dataDir, clock, startWebhooks: false, webhookTargets: { allowPrivate: true } });
    cleanups.push(() => open.stop());
    const { apiKey } = await open.createClient('Default Ltd', 'Paid');
    const id = await consumer(open, apiKey, r.url);
    await open.call('POST', '/companies', { apiKey, body: { name: 'Default' } });
    expect(await deliverOnce({ store: open.service.store, clock, sealer: open.service.context.sealer })).toMatchObject({ claimed: 1, retried: 1 });
    expect(await lastAttempt(open, apiKey, id)).toMatchObject({ error: TARGET_REFUSED, latencyMs: 0 });
    expect(r.requests).toBe(0);
  });
});
