// The shared rate limit on simulated time: instances, their timers and an in-memory ledger
// that settles atomically as the PostgreSQL one does (store/pg/rate-ledger.ts), answering
// after a simulated round trip.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { Clock } from '../../src/lib/clock.js';
import { RateLimiter } from '../../src/lib/rate-limit.js';
import { SharedRateLimiter, type SettleAnswer, type SettleLedger, type Timers } from '../../src/service/shared-rate-limit.js';

const START = Date.UTC(2026, 0, 1);

/** A clock and timers that move only when told to. */
class SimTime implements Clock, Timers {
  ms = START;
  private readonly due = new Map<number, { at: number; fn: () => void }>();
  private nextId = 1;

  now(): Date {
    return new Date(this.ms);
  }

  setTimeout(fn: () => void, ms: number): unknown {
    const id = this.nextId++;
    this.due.set(id, { at: this.ms + ms, fn });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.due.delete(handle as number);
  }

  get pending(): number {
    return this.due.size;
  }

  /** Moves to `to`, firing the timers due on the way in order, each followed by the promise work it starts. */
  async advanceTo(to: number): Promise<void> {
    for (;;) {
      let next: [number, { at: number; fn: () => void }] | undefined;
      for (const entry of this.due) if (entry[1].at <= to && (!next || entry[1].at < next[1].at)) next = entry;
      if (!next) break;
      this.due.delete(next[0]);
      this.ms = Math.max(this.ms, next[1].at);
      next[1].fn();
      await nextTurn();
    }
    this.ms = to;
  }

  advance(ms: number): Promise<void> {
    return this.advanceTo(this.ms + ms);
  }
}

interface MemoryLedger {
  settle: SettleLedger;
  buckets: Map<string, { tokens: number; at: number }>;
  calls: number;
  /** Set to make every settle fail; 'silent' never answers. */
  down: false | 'refused' | 'silent';
}

/** The ledger's contract in memory: applied atomically when called, answered `latencyMs` later. */
function memoryLedger(time: SimTime, latencyMs = 5): MemoryLedger {
  const seen = new Map<string, number>();
  const ledger: MemoryLedger = {
    buckets: new Map(),
    calls: 0,
    down: false,
    settle: (request) => {
      ledger.calls++;
      if (ledger.down === 'refused') return Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:5432'));
      if (ledger.down === 'silent') return new Promise(() => undefined);
      const { limit, now } = request;
      let instances = 1;
      for (const [instance, at] of seen) if (instance !== request.instance && at >= now - request.activeWithinMs) instances++;
      seen.set(request.instance, Math.max(seen.get(request.instance) ?? -Infinity, now));
      const answer: SettleAnswer = { buckets: new Map(), instances };
      for (const { key, used, since } of request.used) {
        const old = ledger.buckets.get(key);
        const bucket = old
          ? { tokens: Math.min(limit, old.tokens + (Math.max(0, now - old.at) / 1000) * limit) - used, at: Math.max(old.at, now) }
          : { tokens: Math.min(limit, limit - used + (Math.max(0, now - since) / 1000) * limit), at: now };
        bucket.tokens = Math.max(-limit, bucket.tokens);
        ledger.buckets.set(key, bucket);
        answer.buckets.set(key, { ...bucket });
      }
      return new Promise((resolve) => time.setTimeout(() => resolve(answer), latencyMs));
    },
  };
  return ledger;
}

function limiters(time: SimTime, ledger: MemoryLedger, limit: number, count: number, onError?: (err: Error) => void): SharedRateLimiter[] {
  return Array.from({ length: count }, (_, i) => new SharedRateLimiter({
    limit, clock: time, timers: time, settle: ledger.settle, instance: `instance-${i + 1}`, ...(onError ? { onError } : {}),
  }));
}

/** Each instance takes `perMs[i]` requests every millisecond for `ms`; returns what each admitted. */
async function hammer(time: SimTime, instances: SharedRateLimiter[], key: string, ms: number, perMs: number[]): Promise<number[]> {
  const admitted = instances.map(() => 0);
  const end = time.ms + ms;
  while (time.ms < end) {
    instances.forEach((limiter, i) => {
      // Fractions of a request per ms: one every 1 / perMs ms.
      const due = Math.floor((time.ms - START + 1) * perMs[i]!) - Math.floor((time.ms - START) * perMs[i]!);
      for (let n = 0; n < due; n++) if (limiter.take(key).allowed) admitted[i]!++;
    });
    await time.advance(1);
  }
  return admitted;
}

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

describe('SharedRateLimiter', () => {
  it('on one instance decides and answers headers as RateLimiter does: the burst, then the refill', async () => {
    const time = new SimTime();
    const ledger = memoryLedger(time);
    const [shared] = limiters(time, ledger, 10, 1);
    const local = new RateLimiter(10, time);
    await time.advance(0);
    const both = () => {
      const [a, b] = [shared!.take('key:k1'), local.take('key:k1')];
      expect(a).toEqual(b);
      return a.allowed;
    };

    const burst = Array.from({ length: 12 }, both);
    expect(burst).toEqual([...Array(10).fill(true), false, false]);
    // Settles come and go in between; the refill is the same: one token per 100 ms.
    for (let step = 0; step < 30; step++) {
      await time.advance(37);
      both();
      both();
    }
    await time.advance(2_000);
    expect(Array.from({ length: 12 }, both).filter(Boolean)).toHaveLength(10);
    // Alone, it settled every 500 ms (activeWithinMs / 2) over the 3.1 s, traffic or not.
    expect(ledger.calls).toBeGreaterThanOrEqual(6);
    expect(ledger.calls).toBeLessThanOrEqual(8);
    shared!.close();
  });

  it('settles every 500 ms while it is the only instance, and every 100 ms once another has joined', async () => {
    const time = new SimTime();
    const ledger = memoryLedger(time);
    const calls = new Map<string, number>();
    const counted: SettleLedger = (request) => {
      calls.set(request.instance, (calls.get(request.instance) ?? 0) + 1);
      return ledger.settle(request);
    };
    const make = (instance: string) => new SharedRateLimiter({ limit: 100, clock: time, timers: time, settle: counted, instance });
    const first = make('instance-1');
    // Busy alone for 2 s: a settle at once, then one every 500 ms.
    for (let ms = 0; ms < 2_000; ms += 10) {
      first.take('key:k1');
      await time.advance(10);
    }
    expect(calls.get('instance-1')).toBe(5);
    expect(first.instances).toBe(1);
    const second = make('instance-2');
    // The second counts the first at once; the first counts the second at its next settle.
    await time.advance(600);
    expect([first.instances, second.instances]).toEqual([2, 2]);
    calls.clear();
    for (let ms = 0; ms < 1_000; ms += 10) {
      first.take('key:k1');
      second.take('key:k1');
      await time.advance(10);
    }
    expect(calls.get('instance-1')).toBeGreaterThanOrEqual(9);
    expect(calls.get('instance-2')).toBeGreaterThanOrEqual(9);
    first.close();
    second.close();
  });

  it.each([
    ['evenly', [1, 1, 1]],
    ['unevenly', [3, 0.5, 0.05]],
  ])('3 instances hammering one key %s for 10 s admit within 10%% of limit × 10 + the burst', async (_how, perMs) => {
    const time = new SimTime();
    const ledger = memoryLedger(time);
    const instances = limiters(time, ledger, 100, 3);
    await time.advance(1_000);
    expect(instances.map((limiter) => limiter.instances)).toEqual([3, 3, 3]);

    const admitted = await hammer(time, instances, 'key:k1', 10_000, perMs);
    const expected = 100 * 10 + 100;
    expect(Math.abs(sum(admitted) - expected) / expected).toBeLessThanOrEqual(0.1);
    for (const limiter of instances) limiter.close();
  });

  it('holds the burst across instances: 3 instances at once admit about one burst, not three', async () => {
    const time = new SimTime();
    const ledger = memoryLedger(time);
    const instances = limiters(time, ledger, 300, 3);
    await time.advance(1_000);
    let admitted = 0;
    for (let round = 0; round < 400; round++) for (const limiter of instances) if (limiter.take('key:k2').allowed) admitted++;
    expect(admitted).toBe(300);
    for (const limiter of instances) limiter.close();
  });

  it('when the ledger refuses, each instance says so once and holds each key to limit / N on its own', async () => {
    const time = new SimTime();
    const ledger = memoryLedger(time);
    const errors: string[] = [];
    const instances = limiters(time, ledger, 90, 3, (err) => errors.push(err.message));
    await time.advance(1_000);
    ledger.down = 'refused';

    const admitted = await hammer(time, instances, 'key:k3', 2_000, [1, 1, 1]);
    expect(errors).toEqual(Array(3).fill(
      'the rate-limit ledger failed (connect ECONNREFUSED 127.0.0.1:5432); each key is held to 90/3 requests per second on this instance until it answers',
    ));
    // Each: its share of the burst (30) and 30 a second for 2 s.
    for (const count of admitted) expect(count).toBeGreaterThanOrEqual(89);
    for (const count of admitted) expect(count).toBeLessThanOrEqual(91);

    // Back: settling again, and a later outage is told again.
    ledger.down = false;
    await time.advance(500);
    const calls = ledger.calls;
    await hammer(time, instances, 'key:k3', 500, [1, 1, 1]);
    expect(ledger.calls).toBeGreaterThanOrEqual(calls + 3 * 4);
    expect(errors).toHaveLength(3);
    ledger.down = 'refused';
    await hammer(time, instances, 'key:k3', 300, [1, 1, 1]);
    expect(errors).toHaveLength(6);
    for (const limiter of instances) limiter.close();
  });

  it('a ledger that does not answer fails the settle after settleTimeoutMs, and the next one is tried', async () => {
    const time = new SimTime();
    const ledger = memoryLedger(time);
    ledger.down = 'silent';
    const errors: string[] = [];
    const limiter = new SharedRateLimiter({
      limit: 10, clock: time, timers: time, settle: ledger.settle, settleTimeoutMs: 250, onError: (err) => errors.push(err.message),
    });
    expect(limiter.take('key:k4').allowed).toBe(true);
    await time.advance(260);
    expect(errors).toEqual(['the rate-limit ledger failed (no answer within 250 ms); each key is held to 10/1 requests per second on this instance until it answers']);
    const calls = ledger.calls;
    limiter.take('key:k4');
    await time.advance(400);
    expect(ledger.calls).toBeGreaterThan(calls);
    expect(errors).toHaveLength(1);
    limiter.close();
  });

  it('answers the headers of its share: limit, whole requests left here, when the bucket is full, and Retry-After', async () => {
    const time = new SimTime();
    const ledger = memoryLedger(time);
    const instances = limiters(time, ledger, 30, 3);
    await time.advance(1_000);
    const [first] = instances;
    const now = time.ms / 1000;

    expect(first!.take('key:k5')).toEqual({
      allowed: true,
      retryAfterSeconds: 1,
      // A share of 10, refilled at 10 a second: 9 left, full again in 0.1 s.
      headers: { 'X-Rate-Limit-Limit': '30', 'X-Rate-Limit-Remaining': '9', 'X-Rate-Limit-Reset': String(Math.ceil(now + 1 / 30)) },
    });
    for (let i = 0; i < 9; i++) expect(first!.take('key:k5').allowed).toBe(true);
    const refused = first!.take('key:k5');
    expect(refused.allowed).toBe(false);
    expect(refused.headers['X-Rate-Limit-Remaining']).toBe('0');
    expect(refused.headers['X-Rate-Limit-Reset']).toBe(String(Math.ceil(now + 1)));
    expect(refused.retryAfterSeconds).toBe(1);
    for (const limiter of instances) limiter.close();
  });

  it('a share below one request (limit < N) admits one when full and pays it back', async () => {
    const time = new SimTime();
    const ledger = memoryLedger(time);
    const instances = limiters(time, ledger, 2, 3);
    await time.advance(1_000);
    const admitted = await hammer(time, instances, 'key:k6', 10_000, [1, 1, 1]);
    expect(Math.abs(sum(admitted) - 22) / 22).toBeLessThanOrEqual(0.1);
    for (const limiter of instances) limiter.close();
  });

  it('close() stops its timers: nothing more is settled', async () => {
    const time = new SimTime();
    const ledger = memoryLedger(time);
    const [limiter] = limiters(time, ledger, 10, 1);
    await time.advance(150);
    limiter!.take('key:k7');
    limiter!.close();
    const calls = ledger.calls;
    await time.advance(5_000);
    expect(time.pending).toBe(0);
    expect(ledger.calls).toBe(calls);
  });
});
