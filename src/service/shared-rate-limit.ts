// The per-key rate limit of lib/rate-limit.ts held across several API instances on one database:
// `limit` requests per second with a burst of `limit`, whichever instance a request reaches.
//
// The bucket of record is the ledger's (one row per key, store/pg/rate-ledger.ts). take()
// never waits on it: each instance admits from a local share and settles with the ledger
// every `settleEveryMs`. A settle adds what the instance admitted since its last one to the
// shared bucket (refilled at `limit` per second, capped at `limit`) in one atomic statement
// and answers the bucket's new state and N, the instances that settled within
// `activeWithinMs`. The instance then sets its share of each key it sent to
// shared tokens / N, refilled at limit / N per second and capped at limit / N, less what it
// admitted while the settle was on its way.
//
// Why this stays within the limit over time: the N shares of one settled state add up to
// the shared bucket, and every admitted request reaches the ledger exactly once, so the
// ledger's count is exact. An instance can only overspend through a view that is one settle
// old (others' admissions not yet settled, a key it has not settled yet, a count of
// instances that just grew); the ledger then goes negative, down to -limit at most, and a
// negative share makes its instance wait until the debt is paid back. The excess in any
// window is the debt still open at its end: a fraction of the burst when settles come every
// 100 ms, not a multiple of the limit. Cost: one statement per instance per settle, not per
// request. A key seen by one instance only gets limit / N at once and the rest at the next
// settles, since the shares left unused go back into the bucket.
//
// When the ledger cannot be reached (or does not answer within `settleTimeoutMs`), each
// instance goes on with its local shares, limit / N of the last count it knew, and says so
// once through onError; the use a failed settle carried is not sent again, since the ledger
// may have applied it. With N = 1 (one instance) the decisions and headers are those of
// RateLimiter, up to float rounding at the edges.
//
// Instances count while they settle: one with traffic settles every settleEveryMs, an idle
// one every activeWithinMs / 2 (an empty settle), so N is the live instances, and a stopped
// one drops out after activeWithinMs. An instance that is the only one (N = 1 at its last
// settle) settles every loneSettleEveryMs (activeWithinMs / 2) even with traffic: its own
// share is then the whole bucket, so its decisions do not wait on the ledger, and a settle
// per 100 ms was most of the ledger's statements on a service of one instance. It stays
// counted all the while; one that joins is seen at the lone one's next settle (at most
// loneSettleEveryMs, not settleEveryMs), and from then on every instance settles every
// settleEveryMs, exactly as before.
import { randomUUID } from 'node:crypto';
import type { Clock } from '../lib/clock.js';
import type { RateDecision } from '../lib/rate-limit.js';

export interface SettleRequest {
  /** Which instance settles: the ledger counts instances by it. */
  instance: string;
  /** Bucket size and refill per second. */
  limit: number;
  /** The instance's clock, in ms: the refill runs up to it. */
  now: number;
  /** Instances that settled at or after now - activeWithinMs count as active. */
  activeWithinMs: number;
  /**
   * What the instance admitted per key since its last settle, and when it first took one
   * (ms): a key new to the ledger has had a full bucket since then. One entry per key.
   */
  used: Array<{ key: string; used: number; since: number }>;
}

export interface SettleAnswer {
  /** The shared bucket of each key sent, after this settle: tokens (below 0 is a debt) as of `at` (ms). */
  buckets: Map<string, { tokens: number; at: number }>;
  /** Active instances, this one included. */
  instances: number;
}

/** Adds an instance's use to the shared buckets and answers their state, atomically. */
export type SettleLedger = (request: SettleRequest) => Promise<SettleAnswer>;

/** setTimeout and clearTimeout, injected so tests run on simulated time. */
export interface Timers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** Node's timers, unref'd: a pending settle does not keep a process alive. */
export const systemTimers: Timers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms).unref(),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export interface SharedRateLimitOptions {
  limit: number;
  clock: Clock;
  settle: SettleLedger;
  timers?: Timers;
  /** 100 ms unless set. */
  settleEveryMs?: number;
  /** How recently an instance must have settled to count; 10 settles unless set. */
  activeWithinMs?: number;
  /** A settle not answered by then has failed; 10 settles unless set. */
  settleTimeoutMs?: number;
  /** How often an instance settles while it is the only one; activeWithinMs / 2 unless set. */
  loneSettleEveryMs?: number;
  /** This instance's id in the ledger; a random UUID unless set. */
  instance?: string;
  /** The ledger failed: said once per outage, again after a settle succeeds. */
  onError?: (err: Error) => void;
}

interface Share {
  /** This instance's part of the bucket; below 0 it is paying back a debt. */
  tokens: number;
  at: number;
  /** Admitted since the last settle was sent. */
  used: number;
  /** Taken (admitted or not) since the last settle was sent, first at `since`. */
  seen: boolean;
  since: number;
}

export class SharedRateLimiter {
  readonly instance: string;
  private readonly shares = new Map<string, Share>();
  private readonly timers: Timers;
  private readonly settleEveryMs: number;
  private readonly activeWithinMs: number;
  private readonly settleTimeoutMs: number;
  private readonly loneSettleEveryMs: number;
  private count = 1;
  /** When the last settle was sent (ms), answered or not. */
  private sentAt = -Infinity;
  /** When the last settle that succeeded was sent (ms). */
  private settledAt = -Infinity;
  private failing = false;
  private closed = false;
  private timer: unknown;
  private inFlight: Promise<void> | undefined;

  constructor(private readonly options: SharedRateLimitOptions) {
    if (!(options.limit > 0)) throw new Error('A shared rate limit needs a limit above 0.');
    this.instance = options.instance ?? randomUUID();
    this.timers = options.timers ?? systemTimers;
    this.settleEveryMs = options.settleEveryMs ?? 100;
    this.activeWithinMs = options.activeWithinMs ?? 10 * this.settleEveryMs;
    this.settleTimeoutMs = options.settleTimeoutMs ?? 10 * this.settleEveryMs;
    this.loneSettleEveryMs = options.loneSettleEveryMs ?? this.activeWithinMs / 2;
    // The first settle, sent at once, counts this instance in and learns N.
    this.schedule(0);
  }

  /** Active instances as of the last settle (1 until one succeeds). */
  get instances(): number {
    return this.count;
  }

  take(key: string): RateDecision {
    const { limit } = this.options;
    const now = this.options.clock.now().getTime();
    const perSecond = limit / this.count;
    let share = this.shares.get(key);
    if (!share) {
      share = { tokens: perSecond, at: now, used: 0, seen: false, since: now };
      this.shares.set(key, share);
    }
    refill(share, now, perSecond);
    if (!share.seen) share.since = now;
    share.seen = true;
    // A share below one request (limit < N) admits one when full, and pays it back.
    const cost = Math.min(1, perSecond);
    const allowed = share.tokens >= cost;
    if (allowed) {
      share.tokens -= 1;
      share.used += 1;
    }
    const secondsToFull = (perSecond - share.tokens) / perSecond;
    return {
      allowed,
      retryAfterSeconds: Math.max(1, Math.ceil((cost - share.tokens) / perSecond)),
      headers: {
        'X-Rate-Limit-Limit': String(limit),
        'X-Rate-Limit-Remaining': String(Math.max(0, Math.floor(share.tokens))),
        'X-Rate-Limit-Reset': String(Math.ceil(now / 1000 + secondsToFull)),
      },
    };
  }

  /** Settles now (or joins the settle under way); the timer calls it every settleEveryMs. */
  settle(): Promise<void> {
    this.inFlight ??= this.settleOnce().finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  /** Stops settling; a settle under way is let go. */
  close(): void {
    this.closed = true;
    if (this.timer !== undefined) this.timers.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(ms: number): void {
    if (this.closed) return;
    this.timer = this.timers.setTimeout(() => {
      this.timer = undefined;
      if (!this.inFlight && this.due()) void this.settle();
      this.schedule(this.settleEveryMs);
    }, ms);
  }

  /** The timer's settle is due: always among several instances, every loneSettleEveryMs when alone. */
  private due(): boolean {
    return this.count > 1 || this.options.clock.now().getTime() - this.sentAt >= this.loneSettleEveryMs;
  }

  private async settleOnce(): Promise<void> {
    const now = this.options.clock.now().getTime();
    const used: SettleRequest['used'] = [];
    for (const [key, share] of this.shares) {
      if (share.seen) {
        used.push({ key, used: share.used, since: share.since });
        share.used = 0;
        share.seen = false;
        continue;
      }
      refill(share, now, this.options.limit / this.count);
      // Idle since the last settle and full again: the same as no share at all.
      if (share.tokens >= this.options.limit / this.count) this.shares.delete(key);
    }
    // With nothing to send, a settle every activeWithinMs / 2 keeps this instance counted
    // and its N current, so a burst arriving on an idle instance gets the right share.
    if (used.length === 0 && now - this.settledAt < this.activeWithinMs / 2) return;
    let answer: SettleAnswer;
    this.sentAt = now;
    try {
      answer = await this.withTimeout(this.options.settle({
        instance: this.instance, limit: this.options.limit, now, activeWithinMs: this.activeWithinMs, used,
      }));
    } catch (err) {
      if (this.closed || this.failing) return;
      this.failing = true;
      const cause = err instanceof Error ? err.message : String(err);
      this.options.onError?.(new Error(
        `the rate-limit ledger failed (${cause}); each key is held to ${this.options.limit}/${this.count} requests per second on this instance until it answers`,
        { cause: err },
      ));
      return;
    }
    if (this.closed) return;
    this.failing = false;
    this.settledAt = now;
    this.count = Math.max(1, answer.instances);
    const perSecond = this.options.limit / this.count;
    const at = this.options.clock.now().getTime();
    for (const [key, shared] of answer.buckets) {
      const share = this.shares.get(key);
      if (!share) continue;
      // The shared state is as of shared.at; what was admitted since the settle left is
      // still to be sent, and already spent here.
      const settled = { tokens: shared.tokens / this.count, at: shared.at, used: 0, seen: false, since: shared.at };
      refill(settled, at, perSecond);
      share.tokens = settled.tokens - share.used;
      share.at = Math.max(settled.at, share.at);
    }
  }

  private withTimeout<T>(work: Promise<T>): Promise<T> {
    let timer: unknown;
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = this.timers.setTimeout(() => reject(new Error(`no answer within ${this.settleTimeoutMs} ms`)), this.settleTimeoutMs);
    });
    return Promise.race([work, timeout]).finally(() => this.timers.clearTimeout(timer));
  }
}

/** Refills a share up to `now` at `perSecond`, capped at one second's worth (its part of the burst). */
function refill(share: Share, now: number, perSecond: number): void {
  if (now > share.at) {
    share.tokens = Math.min(perSecond, share.tokens + ((now - share.at) / 1000) * perSecond);
    share.at = now;
  } else if (share.tokens > perSecond) {
    share.tokens = perSecond;
  }
}
