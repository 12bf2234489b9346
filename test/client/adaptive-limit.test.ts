// The adaptive concurrency limit (src/client/adaptive-limit.ts) against simulated targets
// on a fake clock: vitest's fake timers drive the tasks' latencies and the limit's waits
// alike, so every run is the same and nothing depends on the machine's speed. Each target
// decides a task's latency and outcome from what is in flight at the moment.
import { getEventListeners } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AdaptiveLimit, DEFAULT_INITIAL } from '../../src/client/adaptive-limit.js';
import { ApiClient } from '../../src/client/client.js';
import { ApiRequestError, ConnectionError } from '../../src/client/errors.js';

// vitest's fake timers replace the global setTimeout, not node:timers/promises' (the
// limit's own waits): the limit is given waits on the global timer, so the fake clock
// drives them too.
const wait = (ms: number, signal?: AbortSignal) => new Promise<void>((resolve, reject) => {
  if (signal?.aborted) return reject(signal.reason);
  const onAbort = () => {
    clearTimeout(timer);
    reject(signal!.reason);
  };
  const timer = setTimeout(() => {
    signal?.removeEventListener('abort', onAbort);
    resolve();
  }, ms);
  signal?.addEventListener('abort', onAbort, { once: true });
});

interface Target {
  /** The task to give the limit: one request to this target. */
  call(): Promise<void>;
  inFlight: number;
  peakInFlight: number;
  served: number;
  refused: number;
  /** Fake-clock times at which requests arrived, and at which refusals were answered. */
  starts: number[];
  refusedAt: number[];
}

/**
 * A target answering after `latency(inFlight)` ms; with `maxInFlight`, a request arriving
 * when more than that many are in flight is refused with `status` (429 by default),
 * carrying `retryAfter` seconds when given.
 */
function target(options: { latency: (inFlight: number) => number; maxInFlight?: number; status?: number; retryAfter?: number }): Target {
  const t: Target = {
    inFlight: 0, peakInFlight: 0, served: 0, refused: 0, starts: [], refusedAt: [],
    call: () => new Promise<void>((resolve, reject) => {
      t.starts.push(Date.now());
      t.inFlight += 1;
      t.peakInFlight = Math.max(t.peakInFlight, t.inFlight);
      const refused = options.maxInFlight !== undefined && t.inFlight > options.maxInFlight;
      setTimeout(() => {
        t.inFlight -= 1;
        if (refused) {
          t.refused += 1;
          t.refusedAt.push(Date.now());
          reject(new ApiRequestError('GET', '/x', options.status ?? 429, { error: 'Too many requests' }, options.retryAfter));
        } else {
          t.served += 1;
          resolve();
        }
      }, options.latency(t.inFlight));
    }),
  };
  return t;
}

/**
 * A target that works on `capacity` requests at once, `serviceMs` each, and queues the rest
 * (first come, first served): beyond `capacity` in flight, more only wait longer.
 */
function queueingTarget(capacity: number, serviceMs: number): Target {
  const queue: Array<() => void> = [];
  let busy = 0;
  const next = () => {
    while (busy < capacity && queue.length > 0) {
      busy += 1;
      const done = queue.shift()!;
      setTimeout(() => {
        busy -= 1;
        done();
        next();
      }, serviceMs);
    }
  };
  const t: Target = {
    inFlight: 0, peakInFlight: 0, served: 0, refused: 0, starts: [], refusedAt: [],
    call: () => new Promise<void>((resolve) => {
      t.starts.push(Date.now());
      t.inFlight += 1;
      t.peakInFlight = Math.max(t.peakInFlight, t.inFlight);
      queue.push(() => {
        t.inFlight -= 1;
        t.served += 1;
        resolve();
      });
      next();
    }),
  };
  return t;
}

/**
 * Keeps the limit busy with `tasks` tasks (never more queued than the window, as the
 * engines do) and records the window every `everyMs` of fake time until all are done.
 */
async function drive(limit: AdaptiveLimit, t: Target, tasks: number, everyMs = 50): Promise<{ windows: number[]; errors: number }> {
  const windows: number[] = [];
  let errors = 0;
  let left = tasks;
  const inFlight = new Set<Promise<void>>();
  const feed = async () => {
    while (left > 0) {
      while (inFlight.size < limit.concurrency && left > 0) {
        left -= 1;
        const task: Promise<void> = limit.run(() => t.call()).catch(() => {
          errors += 1;
        }).finally(() => inFlight.delete(task));
        inFlight.add(task);
      }
      await Promise.race(inFlight);
    }
    await Promise.all(inFlight);
  };
  let finished = false;
  const fed = feed().finally(() => (finished = true));
  for (let i = 0; !finished; i++) {
    await vi.advanceTimersByTimeAsync(everyMs);
    windows.push(limit.concurrency);
    if (i > 100_000) throw new Error('the tasks never finished');
  }
  await fed;
  return { windows, errors };
}

/** Awaits a promise while the fake clock runs on (the limit may be waiting for a pause or the rate). */
async function settled<T>(promise: Promise<T>): Promise<T | undefined> {
  let done = false;
  const result = promise.then((v) => v, () => undefined).finally(() => (done = true));
  while (!done) await vi.advanceTimersByTimeAsync(10);
  return result;
}

beforeEach(() => {
  vi.useFakeTimers({ now: 1_000_000 });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('AdaptiveLimit on a fake clock', () => {
  it('a fast target with room: the window grows from small, far past a fixed 8', async () => {
    const limit = new AdaptiveLimit({ clock: () => Date.now(), wait });
    expect(limit.concurrency).toBe(DEFAULT_INITIAL);
    const t = target({ latency: () => 50 });
    const { windows, errors } = await drive(limit, t, 4000);
    expect(errors).toBe(0);
    expect(Math.max(...windows)).toBeGreaterThan(100);
    expect(t.peakInFlight).toBeGreaterThan(100);
    expect(limit.stats().concurrency.peak).toBeGreaterThan(100);
    expect(limit.stats().requests).toBe(4000);
  });

  it('a fixed limit of 20 in flight (429 beyond it): the window settles around 20 and never runs away', async () => {
    const limit = new AdaptiveLimit({ clock: () => Date.now(), wait });
    const t = target({ latency: () => 50, maxInFlight: 20 });
    const started = Date.now();
    const { windows } = await drive(limit, t, 6000);
    const seconds = (Date.now() - started) / 1000;
    const settled = windows.slice(Math.floor(windows.length / 3));
    // The slow start overshoots once (about 1.5x), then AIMD saws between 0.8 K and K + 1.
    expect(Math.max(...windows)).toBeLessThanOrEqual(32);
    expect(Math.max(...settled)).toBeLessThanOrEqual(22);
    expect(Math.min(...settled)).toBeGreaterThanOrEqual(15);
    const mean = settled.reduce((a, b) => a + b, 0) / settled.length;
    expect(mean).toBeGreaterThan(17);
    expect(mean).toBeLessThan(21);
    // Most of what the target can do (20 per 50 ms) gets done; the probing above K costs some refusals.
    expect(t.served / seconds).toBeGreaterThan(0.75 * (20 / 0.05));
    expect(t.refused / (t.served + t.refused)).toBeLessThan(0.25);
  });

  it('backs off on a 429 and starts nothing new until its Retry-After has passed', async () => {
    const limit = new AdaptiveLimit({ clock: () => Date.now(), wait });
    const t = target({ latency: () => 50, maxInFlight: 12, retryAfter: 2 });
    const start = Date.now();
    const { windows } = await drive(limit, t, 600);
    expect(t.refusedAt.length).toBeGreaterThan(0);
    // After each refusal is answered, the next request starts 2 s later at the earliest.
    for (const at of t.refusedAt) {
      const next = t.starts.find((s) => s > at);
      if (next !== undefined) expect(next - at).toBeGreaterThanOrEqual(2000);
    }
    // The first refusal halved the window (the slow start had overshot), so it never ran far past 12.
    const at = (time: number) => windows[Math.floor((time - start) / 50)]!;
    const first = t.refusedAt[0]!;
    const before = limit.stats().concurrency.peak;
    expect(at(first + 50)).toBeLessThanOrEqual(Math.ceil(before / 2));
    expect(Math.max(...windows)).toBeLessThanOrEqual(24);
    expect(t.served).toBe(600 - t.refused);
    expect(t.refused / 600).toBeLessThan(0.1);
  });

  it('a 503 with Retry-After and a timeout shrink the window too; other errors do not', async () => {
    const limit = new AdaptiveLimit({ initial: 40, clock: () => Date.now(), wait });
    const fail = (err: unknown) => settled(limit.run(() => Promise.reject(err)));
    await fail(new ApiRequestError('GET', '/x', 404, { error: 'Not found' }));
    await fail(new ApiRequestError('POST', '/x', 400, { error: 'Bad' }));
    expect(limit.concurrency).toBe(40);
    // Started before that decrease: the same congestion, not counted again.
    const timeout = () => new ConnectionError('GET', '/x', 'http://h', { code: 'HEADERS_TIMEOUT' }, 1000);
    await settled(Promise.all([
      fail(new ApiRequestError('GET', '/x', 503, { error: 'Unavailable' }, 1)),
      // Started before that decrease: the same congestion, not counted again.
      settled(limit.run(() => new Promise((_, reject) => setTimeout(() => reject(timeout()), 10)))),
    ]));
    expect(limit.concurrency).toBe(20);
    await fail(timeout());
    expect(limit.concurrency).toBe(16);
  });

  it('a slow target (latency rising with what is in flight) does not grow the window', async () => {
    // Four at a time, 50 ms each; more in flight only queue. A fixed window of 256 would see 3.2 s latencies.
    const limit = new AdaptiveLimit({ clock: () => Date.now(), wait });
    const t = queueingTarget(4, 50);
    const { windows } = await drive(limit, t, 3000);
    const settled = windows.slice(Math.floor(windows.length / 3));
    expect(Math.max(...windows)).toBeLessThanOrEqual(16);
    expect(Math.max(...settled)).toBeLessThanOrEqual(12);
    // Not starved either: enough in flight to keep the target's four busy.
    expect(Math.min(...settled)).toBeGreaterThanOrEqual(4);
  });

  it('pinned stays pinned, whatever the target says', async () => {
    const limit = new AdaptiveLimit({ pinned: 6, clock: () => Date.now(), wait });
    const t = target({ latency: (n) => 20 * n, maxInFlight: 3 });
    const { windows } = await drive(limit, t, 500);
    expect(new Set(windows)).toEqual(new Set([6]));
    expect(t.peakInFlight).toBe(6);
    expect(limit.stats().concurrency).toEqual({ final: 6, peak: 6 });
  });

  it('maxRate caps starts a second', async () => {
    const limit = new AdaptiveLimit({ maxRate: 20, clock: () => Date.now(), wait });
    const t = target({ latency: () => 5 });
    await drive(limit, t, 200, 100);
    const first = t.starts[0]!;
    // 200 starts at 20 a second, evenly spaced: the last one 199 intervals after the first.
    expect(t.starts[t.starts.length - 1]! - first).toBeGreaterThanOrEqual(199 * 50);
    for (let i = 1; i < t.starts.length; i++) expect(t.starts[i]! - t.starts[i - 1]!).toBeGreaterThanOrEqual(50);
    expect(Math.round(limit.rate)).toBeLessThanOrEqual(20);
  });

  it('never below min nor above max', async () => {
    const limit = new AdaptiveLimit({ initial: 3, min: 2, max: 10, clock: () => Date.now(), wait });
    const { windows } = await drive(limit, target({ latency: () => 10 }), 500, 10);
    expect(Math.max(...windows)).toBe(10);
    for (let i = 0; i < 10; i++) {
      await vi.advanceTimersByTimeAsync(10);
      await settled(limit.run(() => Promise.reject(new ApiRequestError('GET', '/x', 429, {}))));
    }
    expect(limit.concurrency).toBe(2);
  });

  it('an interrupted wait for a slot rejects with the signal\'s reason and frees nothing it did not take', async () => {
    const limit = new AdaptiveLimit({ pinned: 1, clock: () => Date.now(), wait });
    let release!: () => void;
    const holding = limit.run(() => new Promise<void>((resolve) => (release = resolve)));
    const controller = new AbortController();
    const waiting = limit.run(async () => 'ran', controller.signal);
    controller.abort(new Error('stop'));
    await expect(waiting).rejects.toThrow('stop');
    release();
    await holding;
    await expect(limit.run(async () => 'next')).resolves.toBe('next');
  });
});

describe('AdaptiveLimit and the run\'s signal', () => {
  beforeEach(() => {
    vi.useRealTimers();
  });

  it('thousands of tasks waiting on one signal hold one abort listener, gone once they have started', async () => {
    const limit = new AdaptiveLimit({ pinned: 2 });
    const controller = new AbortController();
    const gates: Array<() => void> = [];
    const tasks = Array.from({ length: 5000 }, (_, i) => limit.run(() => new Promise<number>((resolve) => gates.push(() => resolve(i))), controller.signal));
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    // Let every task run: the last waiter to get its slot takes the listener away.
    for (let done = 0; done < 5000;) {
      await new Promise((resolve) => setImmediate(resolve));
      const open = gates.splice(0);
      for (const release of open) release();
      done += open.length;
    }
    expect(await Promise.all(tasks)).toHaveLength(5000);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('an abort rejects every task still waiting on that signal, and only those', async () => {
    const limit = new AdaptiveLimit({ pinned: 1 });
    let release!: () => void;
    const holding = limit.run(() => new Promise<void>((resolve) => (release = resolve)));
    const stopped = new AbortController();
    const other = new AbortController();
    const waiting = Array.from({ length: 3 }, () => limit.run(async () => 'ran', stopped.signal));
    const kept = limit.run(async () => 'kept', other.signal);
    expect(getEventListeners(stopped.signal, 'abort')).toHaveLength(1);
    stopped.abort(new Error('stop'));
    for (const w of waiting) await expect(w).rejects.toThrow('stop');
    release();
    await holding;
    await expect(kept).resolves.toBe('kept');
    expect(getEventListeners(other.signal, 'abort')).toHaveLength(0);
  });
});

describe('AdaptiveLimit attached to a real ApiClient', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('a request answered 429 three times, then 200: one decrease, every attempt counted', async () => {
    vi.useRealTimers();
    let n = 0;
    const server = createServer((req, res) => {
      n += 1;
      if (n <= 3) {
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '0' });
        res.end(JSON.stringify({ statusCode: 429, error: 'Rate limit exceeded' }));
      } else {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"ok":true}');
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const client = new ApiClient({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, apiKey: 'k' });
    try {
      const limit = new AdaptiveLimit({ initial: 8 });
      const detach = limit.attach(client);
      await expect(limit.run(() => client.get('/x'))).resolves.toEqual({ ok: true });
      detach();
      expect(limit.concurrency).toBe(4);
      expect(limit.stats()).toMatchObject({ requests: 4, throttled: 3 });
      // Detached: the client's requests no longer go through it.
      await client.get('/x');
      expect(limit.stats().requests).toBe(4);
    } finally {
      await client.close();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
