// Client-side pacing from the service's X-Rate-Limit-* headers: while the key's bucket is
// nearly empty, requests are spaced at the bucket's refill rate instead of being fired
// into a wall of 429s. Shared by every request of one client, so concurrent workers pace
// together.

export interface RateHeaders {
  limit: number;
  remaining: number;
}

export class Pacer {
  private spacingMs = 0;
  private nextSlot = 0;

  constructor(private readonly now: () => number = Date.now) {}

  /** Resolves when the caller may send its next request. */
  async acquire(signal?: AbortSignal): Promise<void> {
    if (this.spacingMs === 0) return;
    const now = this.now();
    const slot = Math.max(now, this.nextSlot);
    this.nextSlot = slot + this.spacingMs;
    if (slot > now) await sleep(slot - now, signal);
  }

  observe(headers: RateHeaders | undefined): void {
    if (!headers || headers.limit <= 0) {
      this.spacingMs = 0;
      return;
    }
    const lowWater = Math.max(2, headers.limit * 0.2);
    this.spacingMs = headers.remaining <= lowWater ? 1000 / headers.limit : 0;
  }

  /** After a 429, hold every request until the service's Retry-After has passed. */
  backOff(ms: number): void {
    this.nextSlot = Math.max(this.nextSlot, this.now() + ms);
    if (this.spacingMs === 0) this.spacingMs = 1;
  }
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
