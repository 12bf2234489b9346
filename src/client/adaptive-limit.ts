// An adaptive concurrency limit: how many tasks (migration rows, export pages, companies
// being synced or checked) one command run keeps in flight, learned as it goes, in the
// manner of TCP congestion control and Netflix's concurrency-limits:
// - It starts small and grows: by half a slot per task finished while nothing has pushed
//   back yet (so about ×1.5 per round trip: a slow start), then by one slot per window of
//   tasks. It grows only while the window is in use (half of it or more in flight).
// - It shrinks multiplicatively on a 429, a 503 or a timeout (to half the first time, when
//   the slow start has overshot, then by a fifth), at most once per round trip: only a
//   failure of a task or request started after the last decrease counts, and a request
//   that is answered 429 on several attempts counts once.
// - It shrinks by a tenth when latency climbs: the mean of the last tasks' latency above
//   twice its lowest mean in this run means the target is queueing work, not doing more of
//   it. A slow target therefore does not grow the window.
// - A Retry-After on a 429 or 503 holds every new start until it has passed (at most 2 min).
// - A 429 with a Retry-After (a rate limit: a bucket refilled with time) also caps the rate
//   of requests (rate-cap.ts). This is how a target without X-Rate-Limit-* headers is
//   learned; with them, the client's pacer (pacer.ts) spaces the requests and no 429 comes.
// - `pinned` fixes the window (--concurrency N); `maxRate` caps requests a second
//   (--max-rate R) with a token bucket of one, so they are spaced evenly.
//
// One limit per command run, shared by all its work. Attached to the run's ApiClient
// (attach()), it sees every attempt the client sends: the rate caps apply per request,
// retries included, and a 429 the client retries is still learned from. Not attached, it
// caps task starts and learns from how tasks end (the error they throw). Tasks are the
// unit of latency: give one limit tasks of one kind.
import { setTimeout as sleep } from 'node:timers/promises';
import type { ApiClient } from './client.js';
import { ApiRequestError, ConnectionError } from './errors.js';
import { RateCap } from './rate-cap.js';
import { SendRate } from './send-rate.js';
import type { AttemptOutcome, AttemptTicket, RequestGate } from './request-gate.js';

export interface AdaptiveLimitOptions {
  /** The window to start with (default 4). */
  initial?: number;
  /** Never fewer than this in flight (default 1). */
  min?: number;
  /** Never more than this in flight (default 256). */
  max?: number;
  /** A fixed window (--concurrency N): nothing is learned for it. */
  pinned?: number;
  /** At most this many requests a second (--max-rate R). */
  maxRate?: number;
  /** Milliseconds; Date.now by default. Waits are timers set from it. */
  clock?: () => number;
  /** A wait of `ms` that an abort of `signal` ends; node:timers/promises' by default (a fake clock brings its own). */
  wait?: (ms: number, signal?: AbortSignal) => Promise<unknown>;
}

/** What a run reports in its --json summary. */
export interface LimitStats {
  concurrency: { final: number; peak: number };
  /** Requests a second, on average from the first request to the last answer. */
  rate: number;
  /** Requests sent (attempts, retries included). */
  requests: number;
  /** Of them, answered 429. */
  throttled: number;
}

export const DEFAULT_INITIAL = 4;
export const DEFAULT_MAX = 256;

const SLOW_START_STEP = 0.5;
const FIRST_DROP = 0.5;
const DROP = 0.8;
const LATENCY_DROP = 0.9;
/** Latency this many times the lowest seen means queueing. */
const TOLERANCE = 2;
const SAMPLES = 16;
const MIN_SAMPLES = 4;
const MAX_PAUSE_MS = 120_000;

type Congestion = { kind: 'throttled' | 'unavailable' | 'timeout'; retryAfterSeconds?: number };

interface Waiter {
  resolve(): void;
  reject(reason: unknown): void;
  signal?: AbortSignal;
}

/** The one abort listener on a signal, and how many waiters it speaks for. */
interface Watch {
  onAbort(): void;
  waiting: number;
}

export class AdaptiveLimit implements RequestGate {
  private window: number;
  private readonly min: number;
  private readonly max: number;
  private readonly pinned: boolean;
  private readonly now: () => number;
  private readonly wait: (ms: number, signal?: AbortSignal) => Promise<unknown>;

  private inFlight = 0;
  private peak: number;
  private readonly waiters: Waiter[] = [];
  /**
   * One listener per signal, however many tasks wait on it: a batch queues every company at
   * once (thousands), and a listener each would pass Node's listener limit on the run's one
   * Ctrl-C signal.
   */
  private readonly watches = new Map<AbortSignal, Watch>();
  private pauseUntil = 0;
  /** Counts pauses: a task that lived through one says nothing by its latency. */
  private pauses = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private timerAt = Infinity;

  private slowStart = true;
  private lastDecreaseAt = -Infinity;
  private samples: number[] = [];
  private baseline = Infinity;
  /** Requests already counted as congested (their retries are not counted again). */
  private readonly congestedRequests = new WeakSet<object>();

  /** Attached to a client: requests are gated and counted one by one, not tasks. */
  private gated = 0;
  private throttled = 0;
  /** Answers other than 429 (what the target admitted). */
  private admitted = 0;
  private readonly sent = new SendRate();
  private readonly cap: RateCap;

  constructor(options: AdaptiveLimitOptions = {}) {
    this.now = options.clock ?? Date.now;
    this.wait = options.wait ?? ((ms, signal) => sleep(ms, undefined, { signal }));
    this.min = Math.max(1, Math.floor(options.min ?? 1));
    this.max = Math.max(this.min, Math.floor(options.max ?? DEFAULT_MAX));
    this.pinned = options.pinned !== undefined;
    this.window = this.pinned ? Math.max(1, Math.floor(options.pinned!)) : clamp(options.initial ?? DEFAULT_INITIAL, this.min, this.max);
    this.peak = Math.floor(this.window);
    this.cap = new RateCap(options.maxRate !== undefined && options.maxRate > 0 ? options.maxRate : undefined);
  }

  /** The window: how many tasks may be in flight now. */
  get concurrency(): number {
    return Math.max(1, Math.floor(this.window));
  }

  /** Requests a second over the last few seconds (task starts when not attached to a client). */
  get rate(): number {
    return this.sent.recent(this.now());
  }

  /** The figures for a summary. */
  stats(): LimitStats {
    return {
      concurrency: { final: this.concurrency, peak: this.peak },
      rate: this.sent.overall(),
      requests: this.sent.requests,
      throttled: this.throttled,
    };
  }

  /**
   * Sends every request of `client` through this limit from now on (rate caps, what 429s
   * and timeouts teach); returns the function that undoes it.
   */
  attach(client: ApiClient): () => void {
    const previous = client.useGate(this);
    this.gated += 1;
    let undone = false;
    return () => {
      if (undone) return;
      undone = true;
      this.gated -= 1;
      client.useGate(previous);
    };
  }

  /**
   * Waits for a slot (and, not attached, the rate), runs the task and learns from how it
   * ended. `sample` says whether a result is a fair latency sample (false: a task that
   * failed early or had nothing to do; its time teaches nothing and the window does not grow).
   */
  async run<T>(task: () => Promise<T>, signal?: AbortSignal, options?: { sample?: (result: T) => boolean }): Promise<T> {
    await this.acquire(signal);
    // From here: a task's latency includes the waits for the rate and a pause, as an
    // attached client's requests do (they wait inside the task): queueing all the same.
    const started = this.now();
    if (!this.gated) {
      try {
        await this.rateSlot(signal);
        // A 429 may have come while this task waited for its turn: its pause applies too.
        for (let now = this.now(); now < this.pauseUntil; now = this.now()) await this.wait(this.pauseUntil - now, signal).catch(() => signal?.throwIfAborted());
      } catch (err) {
        this.release();
        throw err;
      }
      this.sent.count(this.now());
    }
    const pauses = this.pauses;
    let result: T;
    try {
      result = await task();
    } catch (err) {
      this.taskFailed(err, started);
      this.release();
      throw err;
    }
    this.taskDone(started, pauses, options?.sample ? options.sample(result) : true);
    this.release();
    return result;
  }

  /** Before each attempt (the API client calls this): waits for the rate cap, if any. */
  async admit(signal?: AbortSignal): Promise<AttemptTicket> {
    await this.rateSlot(signal);
    const now = this.now();
    this.sent.count(now);
    return { sentAt: now };
  }

  /** An attempt's outcome (the API client calls this); `request` is the same object for every attempt of one request. */
  answered(ticket: AttemptTicket, request: object, outcome: AttemptOutcome): void {
    const now = this.now();
    this.sent.seen(now);
    if (outcome.status === 429) this.throttled += 1;
    else if (outcome.status !== undefined) this.admitted += 1;
    const congestion = congestionOf(outcome.status, outcome.timedOut ?? false, outcome.retryAfterSeconds);
    if (!congestion) return;
    const again = this.congestedRequests.has(request);
    this.congestedRequests.add(request);
    this.congested(congestion, ticket.sentAt, now, !again);
  }

  private acquire(signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.waiters.length === 0 && this.canStart(this.now())) {
      this.inFlight += 1;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = { resolve, reject, ...(signal ? { signal } : {}) };
      if (signal) this.watch(signal);
      this.waiters.push(waiter);
      this.pump();
    });
  }

  /** Counts a waiter on `signal`, adding the signal's one listener if it has none yet. */
  private watch(signal: AbortSignal): void {
    const watch = this.watches.get(signal);
    if (watch) {
      watch.waiting += 1;
      return;
    }
    const onAbort = () => {
      this.watches.delete(signal);
      const dropped = this.waiters.filter((w) => w.signal === signal);
      this.waiters.splice(0, this.waiters.length, ...this.waiters.filter((w) => w.signal !== signal));
      if (this.waiters.length === 0 && this.timer !== undefined) {
        // Nobody left to wake: a long Retry-After must not keep the process alive.
        clearTimeout(this.timer);
        this.timer = undefined;
        this.timerAt = Infinity;
      }
      for (const w of dropped) w.reject(signal.reason);
    };
    this.watches.set(signal, { onAbort, waiting: 1 });
    signal.addEventListener('abort', onAbort, { once: true });
  }

  /** A waiter on `signal` got its slot: the last one takes the signal's listener away. */
  private unwatch(signal: AbortSignal): void {
    const watch = this.watches.get(signal);
    if (!watch) return;
    watch.waiting -= 1;
    if (watch.waiting > 0) return;
    this.watches.delete(signal);
    signal.removeEventListener('abort', watch.onAbort);
  }

  private canStart(now: number): boolean {
    return now >= this.pauseUntil && this.inFlight < this.concurrency;
  }

  private release(): void {
    this.inFlight -= 1;
    this.pump();
  }

  /** Starts waiting tasks while the window and the pause allow. */
  private pump(): void {
    const now = this.now();
    if (now < this.pauseUntil) {
      if (this.waiters.length > 0) this.wakeAt(this.pauseUntil);
      return;
    }
    while (this.waiters.length > 0 && this.inFlight < this.concurrency) {
      const waiter = this.waiters.shift()!;
      if (waiter.signal) this.unwatch(waiter.signal);
      this.inFlight += 1;
      waiter.resolve();
    }
  }

  private wakeAt(at: number): void {
    if (this.timer !== undefined && this.timerAt <= at) return;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.timerAt = Infinity;
      this.pump();
    }, Math.max(1, at - this.now()));
  }

  /** Waits for this send's turn under the rate cap. */
  private async rateSlot(signal?: AbortSignal): Promise<void> {
    const wait = this.cap.reserve(this.now());
    // An abort rejects with the signal's reason, not the timers' AbortError.
    if (wait > 0) await this.wait(wait, signal).catch(() => signal?.throwIfAborted());
  }

  private taskDone(started: number, pauses: number, sampled: boolean): void {
    const now = this.now();
    this.sent.seen(now);
    if (!this.gated) this.admitted += 1;
    if (this.pinned || !sampled || pauses !== this.pauses) return;
    this.samples.push(now - started);
    if (this.samples.length > SAMPLES) this.samples.shift();
    if (this.samples.length >= MIN_SAMPLES) {
      const mean = this.samples.reduce((a, b) => a + b, 0) / this.samples.length;
      this.baseline = Math.min(this.baseline, mean);
      if (mean > TOLERANCE * this.baseline) {
        // Once per round trip: tasks started before the last decrease still show the old queue.
        if (started > this.lastDecreaseAt) this.decrease(LATENCY_DROP, now);
        return;
      }
    }
    // Grow only a window in use: tasks in flight (this one included) fill half of it or more.
    if (this.inFlight * 2 >= this.window) this.resize(this.window + (this.slowStart ? SLOW_START_STEP : 1 / this.window));
  }

  private taskFailed(err: unknown, started: number): void {
    const now = this.now();
    this.sent.seen(now);
    const congestion = err instanceof ApiRequestError
      ? congestionOf(err.status, false, err.retryAfterSeconds)
      : err instanceof ConnectionError ? congestionOf(undefined, err.timedOut, undefined) : undefined;
    if (this.gated) {
      // The client told us of each attempt already; a failure after the last decrease is still one.
      if (congestion) this.congested({ kind: congestion.kind }, started, now, true, false);
      return;
    }
    if (!congestion) {
      this.admitted += 1;
      return;
    }
    if (congestion.kind === 'throttled') this.throttled += 1;
    this.congested(congestion, started, now, true);
  }

  private congested(congestion: Congestion, sentAt: number, now: number, shrink: boolean, learnRate = true): void {
    const ra = congestion.retryAfterSeconds;
    if (ra !== undefined && ra > 0) this.pause(now + Math.min(ra * 1000, MAX_PAUSE_MS));
    // A 429 with a Retry-After comes from a rate limit (a bucket refilled with time): learn its rate.
    if (learnRate && congestion.kind === 'throttled' && ra !== undefined && ra > 0) this.cap.throttled(sentAt, now, this.admitted, this.sent);
    if (!shrink || this.pinned || sentAt <= this.lastDecreaseAt) return;
    this.decrease(this.slowStart ? FIRST_DROP : DROP, now);
  }

  private decrease(factor: number, now: number): void {
    this.slowStart = false;
    this.lastDecreaseAt = now;
    this.samples = [];
    this.resize(this.window * factor);
  }

  private resize(window: number): void {
    this.window = clamp(window, this.min, this.max);
    this.peak = Math.max(this.peak, this.concurrency);
    this.pump();
  }

  private pause(until: number): void {
    if (until <= this.pauseUntil) return;
    this.pauseUntil = until;
    this.pauses += 1;
  }
}

/** The limit for an engine's options: `concurrency` pins it (--concurrency N), `maxRate` caps requests a second (--max-rate R). */
export function limitOptions(options: { concurrency?: number; maxRate?: number }): AdaptiveLimitOptions {
  return { ...(options.concurrency !== undefined ? { pinned: options.concurrency } : {}), ...(options.maxRate !== undefined ? { maxRate: options.maxRate } : {}) };
}

function congestionOf(status: number | undefined, timedOut: boolean, retryAfterSeconds: number | undefined): Congestion | undefined {
  const kind = status === 429 ? 'throttled' : status === 503 ? 'unavailable' : timedOut ? 'timeout' : undefined;
  if (!kind) return undefined;
  return retryAfterSeconds !== undefined ? { kind, retryAfterSeconds } : { kind };
}

function clamp(n: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, n));
}
