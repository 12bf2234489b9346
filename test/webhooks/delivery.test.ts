// Deliveries on a fake clock, one deliverOnce() pass at a time (the loop is off): retries
// with backoff until the receiver is up, each event once per webhook-id; a 410 disables;
// receivers that hang, reset, redirect or answer 2 MB are recorded with the reason and
// retried; a day of failures gives up; order per company and consumer holds.
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readCompletedPayload } from '../../src/service/events/payloads.js';
import { eventsOf, recordEvent } from '../../src/service/events/record.js';
import type { CompanyRow } from '../../src/service/store/companies.js';
import { DEFAULT_BACKOFF } from '../../src/service/webhooks/backoff.js';
import { deliverOnce, type DeliveryDeps, type DeliveryPassResult } from '../../src/service/webhooks/deliver-once.js';
import { targetAgent } from '../../src/service/webhooks/target-agent.js';
import { TargetPolicy } from '../../src/service/webhooks/target-policy.js';
import { atRest } from '../helpers/at-rest.js';
import { startTestStack, type TestService } from '../helpers/stack.js';
import { FakeClock } from '../helpers/sync.js';
import { countsById, emit, startReceiver, type Mode, type Receiver } from './support.js';

/** A read.completed payload as the service writes one, for the test's own events of that type. */
const readCompleted = (company: CompanyRow) => readCompletedPayload(company, [], null);

let t: TestService;
let clock: FakeClock;
let key: string;
let clientId: string;
let deps: DeliveryDeps;
const receivers: Receiver[] = [];
// The receivers listen on 127.0.0.1: the operator's opt-in, for the routes and the deliveries.
const local = new TargetPolicy({ allowPrivate: true });
const agent = targetAgent(local);

async function receiver(mode?: Mode): Promise<Receiver> {
  const r = await startReceiver(mode);
  receivers.push(r);
  return r;
}

const call = (method: string, path: string, body?: unknown) => t.call(method, path, { apiKey: key, ...(body === undefined ? {} : { body }) });

async function consumer(r: Receiver, eventTypes: string[], extra: Record<string, unknown> = {}): Promise<string> {
  const created = await call('POST', '/webhooks', { url: r.url, eventTypes, ...extra });
  expect(created.status, created.text).toBe(201);
  r.secret = created.body.secret;
  return created.body.id;
}

async function deliveries(consumerId: string): Promise<any[]> {
  const page = await call('GET', `/webhooks/${consumerId}/deliveries`);
  expect(page.status, page.text).toBe(200);
  return page.body.results;
}

/** Passes until one claims nothing. */
async function drain(): Promise<DeliveryPassResult[]> {
  const passes: DeliveryPassResult[] = [];
  for (let i = 0; i < 100; i++) {
    const pass = await deliverOnce(deps);
    if (pass.claimed === 0) return passes;
    passes.push(pass);
  }
  throw new Error('still claiming after 100 passes');
}

beforeEach(async () => {
  clock = new FakeClock();
  t = await startTestStack('service', { clock, startWebhooks: false, webhookTargets: { allowPrivate: true } });
  const client = await t.createClient('Deliveries Ltd', 'Paid');
  key = client.apiKey;
  clientId = client.id;
  // random 1: every wait is the longest its step allows, so the test knows when a retry is due.
  deps = { store: t.service.store, clock, sealer: t.service.context.sealer, changed: t.service.context.events.changed, random: () => 1, attempt: { timeoutMs: 300, dispatcher: agent } };
});

afterEach(async () => {
  await t.stop();
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

afterAll(async () => {
  await agent.close();
});

describe('deliveries on a fake clock', () => {
  it('retries a receiver that refuses connections until it is up, then delivers each event once, signed', async () => {
    const r = await receiver();
    const id = await consumer(r, ['company.created']);
    await r.down();
    const companies: string[] = [];
    for (let i = 0; i < 3; i++) companies.push((await call('POST', '/companies', { name: `Down ${i}` })).body.id);

    expect(await deliverOnce(deps)).toMatchObject({ claimed: 3, retried: 3 });
    const failed = await deliveries(id);
    for (const d of failed) {
      expect(d).toMatchObject({ status: 'Pending', attempts: 1, lastAttempt: { error: 'could not connect' } });
      expect(d.lastAttempt).not.toHaveProperty('statusCode');
      // The first retry waits at most the base delay (5 s).
      expect(Date.parse(d.nextAttempt) - clock.now().getTime()).toBe(DEFAULT_BACKOFF.baseMs);
    }
    expect(await deliverOnce(deps)).toMatchObject({ claimed: 0 });

    clock.advance(5);
    expect(await deliverOnce(deps)).toMatchObject({ claimed: 3, retried: 3 });
    expect((await deliveries(id))[0].nextAttempt).toBe(new Date(clock.now().getTime() + 10_000).toISOString().replace('.000', ''));

    await r.up();
    clock.advance(9);
    expect(await deliverOnce(deps)).toMatchObject({ claimed: 0 });
    clock.advance(1);
    expect(await deliverOnce(deps)).toMatchObject({ claimed: 3, delivered: 3 });
    expect(await drain()).toEqual([]);

    expect(r.received).toHaveLength(3);
    expect(r.received.every((x) => x.verified === true)).toBe(true);
    expect(r.received.map((x) => x.event.payload.id).sort()).toEqual([...companies].sort());
    for (const x of r.received) expect(x.id).toBe(x.event.id);
    expect([...countsById(r.received).values()]).toEqual([1, 1, 1]);
    const log = await deliveries(id);
    expect(log.map((d) => [d.status, d.attempts])).toEqual([['Delivered', 3], ['Delivered', 3], ['Delivered', 3]]);
    const detail = await call('GET', `/webhooks/${id}/deliveries/${log[0].id}`);
    expect(detail.body.attemptLog.map((a: any) => a.error ?? a.statusCode)).toEqual(['could not connect', 'could not connect', 204]);
  });

  it('disables a consumer at once on a 410, and says so with a ferry.webhook.disabled event', async () => {
    const gone = await receiver({ kind: 'status', status: 410 });
    const watcher = await receiver();
    const goneId = await consumer(gone, ['company.created']);
    await consumer(watcher, ['ferry.webhook.disabled']);
    await call('POST', '/companies', { name: 'Gone 1' });
    await call('POST', '/companies', { name: 'Gone 2' });

    const pass = await deliverOnce(deps);
    expect(pass).toMatchObject({ claimed: 2, failed: 2 });
    const after = await call('GET', `/webhooks/${goneId}`);
    expect(after.body).toMatchObject({ disabled: true, disabledReason: 'The receiver answered 410 Gone.' });
    expect((await deliveries(goneId)).map((d) => [d.status, d.lastAttempt.statusCode])).toEqual([['Failed', 410], ['Failed', 410]]);

    // The watcher hears of it once; nothing more goes to the disabled consumer.
    await drain();
    expect(watcher.received.map((x) => x.event.eventType)).toEqual(['ferry.webhook.disabled']);
    expect(watcher.received[0]!.verified).toBe(true);
    expect(watcher.received[0]!.event.payload).toEqual({ id: goneId, url: gone.url, reason: 'The receiver answered 410 Gone.' });
    await call('POST', '/companies', { name: 'Gone 3' });
    await drain();
    expect(gone.requests).toBe(2);
    expect(await deliveries(goneId)).toHaveLength(2);
    const replay = await call('POST', `/webhooks/${goneId}/deliveries/${(await deliveries(goneId))[0].id}/replay`);
    expect(replay.status).toBe(409);
  });

  it('records a receiver that hangs, resets, redirects or answers 2 MB with the reason, and retries it', async () => {
    const hang = await receiver({ kind: 'hang' });
    const reset = await receiver({ kind: 'reset' });
    const redirect = await receiver({ kind: 'redirect', location: 'http://127.0.0.1:9/elsewhere' });
    const big = await receiver({ kind: 'big', status: 500, bytes: 2 * 1024 * 1024 });
    const bigOk = await receiver({ kind: 'big', status: 200, bytes: 2 * 1024 * 1024 });
    const ids = new Map<Receiver, string>();
    for (const r of [hang, reset, redirect, big, bigOk]) ids.set(r, await consumer(r, ['company.created']));
    await call('POST', '/companies', { name: 'Troubled' });

    const started = Date.now();
    expect(await deliverOnce(deps)).toMatchObject({ claimed: 5, retried: 4, delivered: 1 });
    // Every attempt ended within its timeout (0.3 s here): none waited for another.
    expect(Date.now() - started).toBeLessThan(3_000);
    const last = async (r: Receiver) => (await deliveries(ids.get(r)!))[0];
    expect(await last(hang)).toMatchObject({ status: 'Pending', lastAttempt: { error: 'no complete answer within 0.3 s' } });
    expect(await last(reset)).toMatchObject({ status: 'Pending', lastAttempt: { error: 'no complete answer: the connection broke off' } });
    expect(await last(redirect)).toMatchObject({ status: 'Pending', lastAttempt: { statusCode: 307, error: 'redirect not followed' } });
    expect(await last(big)).toMatchObject({ status: 'Pending', lastAttempt: { statusCode: 500, error: 'answer longer than 64 KiB, cut off' } });
    // A 2xx is delivered whatever follows it; the long answer is only noted.
    expect(await last(bigOk)).toMatchObject({ status: 'Delivered', lastAttempt: { statusCode: 200, error: 'answer longer than 64 KiB, cut off' } });
    for (const r of [hang, reset, redirect, big]) expect(r.requests).toBe(1);

    for (const r of [hang, reset, redirect, big]) r.mode = { kind: 'ok' };
    clock.advance(5);
    expect(await deliverOnce(deps)).toMatchObject({ claimed: 4, delivered: 4 });
    for (const r of [hang, reset, redirect, big]) {
      expect(r.received).toHaveLength(1);
      expect(r.received[0]!.verified).toBe(true);
      expect(await last(r)).toMatchObject({ status: 'Delivered', attempts: 2 });
    }
  });

  it('honours Retry-After up to the cap', async () => {
    const r = await receiver({ kind: 'status', status: 429, headers: { 'retry-after': '120' } });
    const id = await consumer(r, ['company.created']);
    await call('POST', '/companies', { name: 'Slow down' });
    deps.random = () => 0;
    await deliverOnce(deps);
    const [d] = await deliveries(id);
    expect(d.lastAttempt.statusCode).toBe(429);
    expect(Date.parse(d.nextAttempt) - clock.now().getTime()).toBe(120_000);
  });

  it('gives up after a day of failures: the delivery Failed, the consumer disabled, an event recorded', async () => {
    const r = await receiver({ kind: 'status', status: 503 });
    const watcher = await receiver();
    const id = await consumer(r, ['company.created']);
    await consumer(watcher, ['ferry.webhook.disabled']);
    watcher.secret = undefined; // its timestamps are a day ahead of the real clock the verifier uses
    await call('POST', '/companies', { name: 'Never' });
    const start = clock.now().getTime();
    let passes = 0;
    for (;;) {
      await deliverOnce(deps);
      passes += 1;
      const [d] = await deliveries(id);
      if (d.status !== 'Pending') break;
      clock.set(new Date(Date.parse(d.nextAttempt)));
      if (passes > 100) throw new Error('never gave up');
    }
    const [d] = await deliveries(id);
    expect(d.status).toBe('Failed');
    // The last attempt falls on the 24th hour after the first failure, not later.
    expect(Date.parse(d.lastAttempt.at) - start).toBe(24 * 3600_000);
    expect(d.attempts).toBe(passes);
    const after = (await call('GET', `/webhooks/${id}`)).body;
    expect(after.disabled).toBe(true);
    expect(after.disabledReason).toBe('Deliveries failed for 24 hours; the last attempt: HTTP 503.');
    const events = (await t.service.store.eventsAfter(clientId, 0, 100)).filter((e) => e.event_type === 'ferry.webhook.disabled');
    expect(events).toHaveLength(1);
    expect(JSON.parse(events[0]!.body).payload).toEqual({ id, url: r.url, reason: after.disabledReason });
    await drain();
    expect(watcher.received.map((x) => x.event.payload.id)).toEqual([id]);
  });

  it('keeps each company\'s order per consumer, one delivery of a lane at a time', async () => {
    const r = await receiver({ kind: 'status', status: 503 });
    const id = await consumer(r, ['read.completed', 'client.rateLimit.reached']);
    const companies = [];
    for (const name of ['A', 'B']) companies.push((await t.service.store.getCompany((await call('POST', '/companies', { name })).body.id))!);
    for (let n = 1; n <= 5; n++) {
      for (const company of companies) await emit(t.service, clientId, 'read.completed', { ...readCompleted(company), company: company.name, n }, company);
      await emit(t.service, clientId, 'client.rateLimit.reached', { dailyQuota: 10, quotaRemaining: 0, expiryDate: '2026-01-01T00:00:00Z', n });
    }
    // Three lanes (A, B, and the events of no company): one head each.
    expect(await deliverOnce(deps)).toMatchObject({ claimed: 3, retried: 3 });
    r.mode = { kind: 'ok' };
    clock.advance(5);
    const passes = await drain();
    expect(passes.map((p) => p.claimed)).toEqual([3, 3, 3, 3, 3]);
    const order = (match: (x: any) => boolean) => r.received.filter((x) => match(x.event)).map((x) => x.event.payload.n);
    expect(order((e) => e.payload.company === 'A')).toEqual([1, 2, 3, 4, 5]);
    expect(order((e) => e.payload.company === 'B')).toEqual([1, 2, 3, 4, 5]);
    expect(order((e) => e.eventType === 'client.rateLimit.reached')).toEqual([1, 2, 3, 4, 5]);
    expect((await deliveries(id)).every((d) => d.status === 'Delivered')).toBe(true);
  });

  it('holds a consumer to its share of attempts in flight, and takes its other lanes as slots free', async () => {
    deps.perConsumer = 2;
    const r = await receiver();
    const other = await receiver();
    const id = await consumer(r, ['company.created']);
    await consumer(other, ['company.created']);
    for (let i = 0; i < 5; i++) await call('POST', '/companies', { name: `Lane ${i}` });
    // Five lanes per consumer, two at a time each.
    expect((await drain()).map((p) => p.claimed)).toEqual([4, 4, 2]);
    expect(r.received).toHaveLength(5);
    expect(other.received).toHaveLength(5);
    expect((await deliveries(id)).every((d) => d.status === 'Delivered')).toBe(true);
    expect(await atRest(t).value("SELECT count(*) FROM webhook_deliveries WHERE next_attempt LIKE 'BUSY:%' OR lease_until IS NOT NULL")).toBe(0);
  });

  it('lets a replay wait its turn behind the lane and delivers it under the same webhook-id', async () => {
    const r = await receiver();
    const id = await consumer(r, ['read.completed']);
    const company = (await t.service.store.getCompany((await call('POST', '/companies', { name: 'Replayed' })).body.id))!;
    await t.service.store.transaction(() => recordEvent(eventsOf(t.service.context), { clientId, company, eventType: 'read.completed', payload: { ...readCompleted(company), n: 1 } }));
    await drain();
    const [first] = await deliveries(id);
    r.mode = { kind: 'status', status: 500 };
    await emit(t.service, clientId, 'read.completed', { ...readCompleted(company), n: 2 }, company);
    await deliverOnce(deps);
    const replay = await call('POST', `/webhooks/${id}/deliveries/${first.id}/replay`);
    expect(replay.status).toBe(202);
    // n = 2 is failing at the head of the lane: the replay waits behind it.
    expect(await deliverOnce(deps)).toMatchObject({ claimed: 0 });
    r.mode = { kind: 'ok' };
    clock.advance(5);
    await drain();
    expect(r.received.map((x) => x.event.payload.n)).toEqual([1, 2, 1]);
    expect(r.received[2]!.id).toBe(first.eventId);
  });

  it('sends nothing for a company the consumer\'s tags leave out', async () => {
    const r = await receiver();
    const id = await consumer(r, ['company.created'], { companyTags: ['region:eu'] });
    await call('POST', '/companies', { name: 'EU', tags: { region: 'eu' } });
    await call('POST', '/companies', { name: 'US', tags: { region: 'us' } });
    await drain();
    expect(r.received.map((x) => x.event.payload.name)).toEqual(['EU']);
    expect(await deliveries(id)).toHaveLength(1);
  });
});
