// A consumer's circuit breaker, on a fake clock, one deliverOnce() pass at a time with the
// breakers kept across passes as the loop keeps them: three attempts in a row without an
// answer open it, its deliveries wait (the log says until when), one trial goes out when
// the pause is over, a trial that hangs opens it again for twice as long, and one that is
// answered closes it and the rest follow. The give-up rules still hold.
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Breakers, DEFAULT_BREAKER } from '../../src/service/webhooks/breaker.js';
import { deliverOnce, type DeliveryDeps, type DeliveryPassResult } from '../../src/service/webhooks/deliver-once.js';
import { targetAgent } from '../../src/service/webhooks/target-agent.js';
import { TargetPolicy } from '../../src/service/webhooks/target-policy.js';
import { startTestStack, type TestService } from '../helpers/stack.js';
import { FakeClock } from '../helpers/sync.js';
import { startReceiver, type Mode, type Receiver } from './support.js';

let t: TestService;
let clock: FakeClock;
let key: string;
let deps: DeliveryDeps;
const receivers: Receiver[] = [];
// The receivers listen on 127.0.0.1: the operator's opt-in, for the routes and the deliveries.
const agent = targetAgent(new TargetPolicy({ allowPrivate: true }));

async function receiver(mode?: Mode): Promise<Receiver> {
  const r = await startReceiver(mode);
  receivers.push(r);
  return r;
}

const call = (method: string, path: string, body?: unknown) => t.call(method, path, { apiKey: key, ...(body === undefined ? {} : { body }) });

async function consumer(r: Receiver): Promise<string> {
  const created = await call('POST', '/webhooks', { url: r.url, eventTypes: ['company.created'] });
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

const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');

beforeEach(async () => {
  clock = new FakeClock();
  t = await startTestStack('service', { clock, startWebhooks: false, webhookTargets: { allowPrivate: true } });
  key = (await t.createClient('Breakers Ltd', 'Paid')).apiKey;
  // random 1: every retry waits the longest its step allows (5 s after the first failure).
  deps = {
    store: t.service.store, clock, sealer: t.service.context.sealer, changed: t.service.context.events.changed, random: () => 1,
    attempt: { timeoutMs: 300, dispatcher: agent }, breakers: new Breakers(),
  };
});

afterAll(async () => {
  await agent.close();
});

afterEach(async () => {
  await t.stop();
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

describe('a consumer\'s circuit breaker', () => {
  it('opens after three attempts without an answer, holds the deliveries, sends one trial at a time, and closes when the receiver answers', async () => {
    expect(DEFAULT_BREAKER).toMatchObject({ failures: 3, pauseMs: 30_000 });
    const dead = await receiver({ kind: 'hang' });
    const healthy = await receiver();
    const deadId = await consumer(dead);
    await consumer(healthy);
    for (let i = 0; i < 4; i++) await call('POST', '/companies', { name: `Lane ${i}` });
    const start = clock.now().getTime();

    // Four lanes each: the dead receiver's four attempts hang to their timeout.
    expect(await deliverOnce(deps)).toMatchObject({ claimed: 8, delivered: 4, retried: 4 });
    expect(dead.requests).toBe(4);

    // Their retries are due after 5 s, but the breaker holds them for 30 s, and the log says so.
    clock.advance(5);
    expect(await deliverOnce(deps)).toMatchObject({ claimed: 0 });
    const held = await deliveries(deadId);
    expect(held.map((d) => [d.status, d.attempts, d.nextAttempt])).toEqual(Array(4).fill(['Pending', 1, iso(start + 30_000)]));

    // Half open: one trial, which hangs too: open again, for 60 s.
    clock.advance(25);
    expect(await deliverOnce(deps)).toMatchObject({ claimed: 1, retried: 1 });
    expect(dead.requests).toBe(5);
    expect(await drain()).toEqual([]);
    clock.advance(59);
    expect(await deliverOnce(deps)).toMatchObject({ claimed: 0 });
    expect((await deliveries(deadId)).map((d) => d.nextAttempt)).toContain(iso(start + 90_000));

    // The receiver is back: the next trial is answered, the breaker closes, the rest follow.
    dead.mode = { kind: 'ok' };
    clock.advance(1);
    expect(await deliverOnce(deps)).toMatchObject({ claimed: 1, delivered: 1 });
    expect((await drain()).reduce((n, p) => n + p.delivered, 0)).toBe(3);
    expect(dead.requests).toBe(4 + 1 + 1 + 3);
    expect(dead.received).toHaveLength(4);
    expect(dead.received.every((r) => r.verified === true)).toBe(true);
    expect((await deliveries(deadId)).every((d) => d.status === 'Delivered')).toBe(true);
  });

  it('keeps the give-up rule: a delivery held by the breaker still fails after a day, and its consumer is disabled', async () => {
    const r = await receiver();
    const id = await consumer(r);
    await r.down();
    await call('POST', '/companies', { name: 'Never' });
    const start = clock.now().getTime();
    for (let passes = 0; ; passes++) {
      if (passes > 200) throw new Error('never gave up');
      await deliverOnce(deps);
      const [d] = await deliveries(id);
      if (d.status !== 'Pending') break;
      clock.set(d.nextAttempt);
    }
    const [d] = await deliveries(id);
    expect(d.status).toBe('Failed');
    expect(d.lastAttempt.error).toBe('could not connect');
    // On the 24th hour, or at the end of the breaker's pause after it (at most 15 minutes).
    const last = Date.parse(d.lastAttempt.at) - start;
    expect(last).toBeGreaterThanOrEqual(24 * 3600_000);
    expect(last).toBeLessThanOrEqual(24 * 3600_000 + DEFAULT_BREAKER.maxPauseMs);
    const after = (await call('GET', `/webhooks/${id}`)).body;
    expect(after).toMatchObject({ disabled: true, disabledReason: 'Deliveries failed for 24 hours; the last attempt: could not connect.' });
  });
});
