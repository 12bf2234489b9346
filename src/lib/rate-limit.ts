// A token bucket per API key: `limit` requests per second with a burst of `limit`.
// Headers follow the public API: X-Rate-Limit-Limit (the bucket size),
// X-Rate-Limit-Remaining (whole requests left now), X-Rate-Limit-Reset (Unix seconds
// when the bucket is full again).
import type { Clock } from './clock.js';

interface Bucket {
  tokens: number;
  at: number;
}

export interface RateDecision {
  allowed: boolean;
  headers: Record<string, string>;
  retryAfterSeconds: number;
}

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(private readonly limit: number, private readonly clock: Clock) {}

  take(key: string): RateDecision {
    const now = this.clock.now().getTime();
    const bucket = this.buckets.get(key) ?? { tokens: this.limit, at: now };
    bucket.tokens = Math.min(this.limit, bucket.tokens + ((now - bucket.at) / 1000) * this.limit);
    bucket.at = now;
    const allowed = bucket.tokens >= 1;
    if (allowed) bucket.tokens -= 1;
    this.buckets.set(key, bucket);
    const secondsToFull = (this.limit - bucket.tokens) / this.limit;
    return {
      allowed,
      retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / this.limit)),
      headers: {
        'X-Rate-Limit-Limit': String(this.limit),
        'X-Rate-Limit-Remaining': String(Math.floor(bucket.tokens)),
        'X-Rate-Limit-Reset': String(Math.ceil(now / 1000 + secondsToFull)),
      },
    };
  }
}
