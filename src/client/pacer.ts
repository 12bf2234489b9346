// Client-side pacing from the service's X-Rate-Limit-* headers, so that many concurrent
// requests of one client share the key's token bucket instead of firing into a wall of
// 429s. The service's bucket holds `limit` requests and refills at `limit` per second
// (X-Rate-Limit-Limit; X-Rate-Limit-Remaining is what is left after that request).
//
// The pacer keeps its own copy of that bucket, counting every request it lets through
// (including the ones still in flight, which the service may not have counted yet):
// - acquire() takes a token synchronously, so any number of concurrent callers each get
//   their own send time: the first `tokens` go at once, the rest are spaced at the refill
//   rate. Nothing is decided on a stale "remaining" read before the others were sent.
// - Each response corrects the copy by what the service said: `remaining`, minus the
//   requests this client sent after that one (the service had not counted those yet).
//   It only ever lowers the estimate (other processes using the same key show up here);
//   the copy's own refill raises it.
// - Until the first response, PROBES requests go (probes) and the others wait for an
//   answer, since the size of the bucket is not known yet. Two, not one: no limit worth the
//   name refuses a burst of two, and a command's first two requests (an export's first page
//   and its snapshot read) then cost one round trip instead of two. While no answer has
//   come, one more goes every PROBE_WAIT_MS.
// - After a 429, nobody sends until its Retry-After has passed, including callers that
//   were already waiting for a later slot.
// A response without the headers (a service with no limit) turns pacing off.
// An abort rejects with the signal's reason, as the client's requests do (the timers'
// AbortError is turned back into it).
import { setTimeout as sleep } from 'node:timers/promises';

export interface RateHeaders {
  limit: number;
  remaining: number;
}

/** Handed out by acquire(); give it back to observe() or settle() when the attempt ends. */
export interface Permit {
  readonly seq: number;
}

/** Requests sent before the first answer. */
export const PROBES = 2;
/** While no answer has come, one more request goes this often (the others keep waiting). */
export const PROBE_WAIT_MS = 2000;

export class Pacer {
  /** Bucket size and refill per second; 0 = no limit seen (unpaced). */
  private limit = 0;
  /** Has any attempt finished yet (so the bucket is known, or known to be absent)? */
  private known = false;
  /** Our estimate of the service's bucket after every request we let through; may go negative (reserved slots). */
  private tokens = 0;
  private at = 0;
  /** After a 429: no request is sent before this time. */
  private holdUntil = 0;
  private issued = 0;
  /** Probes sent and not yet ended (before the first answer). */
  private probes = 0;
  /** Wakes the callers waiting for a probe; replaced each time it fires. */
  private change: { done: Promise<void>; release: () => void } | undefined;

  constructor(private readonly now: () => number = Date.now) {}

  /** Resolves when the caller may send its next request. */
  async acquire(signal?: AbortSignal): Promise<Permit> {
    for (;;) {
      if (signal?.aborted) throw signal.reason;
      const now = this.now();
      if (now < this.holdUntil) {
        await sleep(Math.max(1, this.holdUntil - now), undefined, { signal }).catch(() => signal?.throwIfAborted());
        continue;
      }
      if (!this.known) {
        if (this.probes < PROBES) {
          this.probes += 1;
          return this.issue();
        }
        const change = (this.change ??= changeSignal());
        const timedOut = await waitAtMost(change.done, PROBE_WAIT_MS, signal);
        if (timedOut && this.change === change && !this.known) {
          // Slow first answers (long requests, or a busy service): one more caller goes as a
          // probe, and the others wait for whichever answers first.
          this.wake();
          this.probes += 1;
          return this.issue();
        }
        continue;
      }
      if (this.limit === 0) return this.issue();
      this.refill(now);
      this.tokens -= 1;
      const permit = this.issue();
      if (this.tokens >= 0) return permit;
      // Our slot is when the refill brings the bucket back to zero. A 429 may arrive while
      // we wait: its hold applies to slots reserved before it too. (Checked against the
      // clock, since a timer set during a long event-loop turn can fire early.)
      const slot = now + (-this.tokens / this.limit) * 1000;
      for (let at = this.now(); at < Math.max(slot, this.holdUntil); at = this.now()) {
        await sleep(Math.max(1, Math.max(slot, this.holdUntil) - at), undefined, { signal }).catch(() => signal?.throwIfAborted());
      }
      return permit;
    }
  }

  /** The attempt got a response; `headers` are its X-Rate-Limit-* values, if any. */
  observe(permit: Permit, headers: RateHeaders | undefined): void {
    if (!headers || !(headers.limit > 0)) {
      if (!this.known) this.learn();
      return;
    }
    // What the service's bucket will hold once it has counted everything we sent after this one.
    const implied = Math.min(headers.limit, headers.remaining - (this.issued - 1 - permit.seq));
    const now = this.now();
    if (this.limit === 0) {
      this.tokens = implied;
      this.at = now;
    } else {
      // Only ever lower the estimate: an older answer, or one that left the service
      // before some refill, under-counts; our own refill catches up at the real rate.
      this.refill(now);
      this.tokens = Math.min(this.tokens, implied);
    }
    this.limit = headers.limit;
    this.learn();
  }

  /** The attempt ended without a response (connection error): let the next caller probe. */
  settle(_permit: Permit): void {
    if (!this.known && this.probes > 0) {
      this.probes -= 1;
      this.wake();
    }
  }

  /** After a 429, hold every request until the service's Retry-After has passed. */
  backOff(ms: number): void {
    const now = this.now();
    this.holdUntil = Math.max(this.holdUntil, now + ms);
    if (this.limit > 0) {
      // The service's bucket was empty; it refills during the hold.
      this.refill(now);
      this.tokens = Math.min(this.tokens, 0);
    }
  }

  private issue(): Permit {
    const permit = { seq: this.issued };
    this.issued += 1;
    return permit;
  }

  private refill(now: number): void {
    if (now > this.at) {
      this.tokens = Math.min(this.limit, this.tokens + ((now - this.at) / 1000) * this.limit);
      this.at = now;
    }
  }

  private learn(): void {
    this.known = true;
    this.wake();
  }

  /** Wakes every caller waiting for a probe's end. */
  private wake(): void {
    const change = this.change;
    this.change = undefined;
    change?.release();
  }
}

function changeSignal(): { done: Promise<void>; release: () => void } {
  let release!: () => void;
  const done = new Promise<void>((resolve) => (release = resolve));
  return { done, release };
}

/** Waits for `promise` or `ms`, whichever is first; true when the time ran out. */
function waitAtMost(promise: Promise<void>, ms: number, signal?: AbortSignal): Promise<boolean> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const finish = (timedOut: boolean) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      resolve(timedOut);
    };
    const timer = setTimeout(() => finish(true), ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    void promise.then(() => finish(false));
  });
}
