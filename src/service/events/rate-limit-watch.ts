// client.rateLimit.reached when an account's key is first refused for its rate limit, and
// client.rateLimit.reset when a request of that account is admitted again: one pair per
// episode, however many requests were refused in between.
import { isoSeconds } from '../../lib/clock.js';
import { recordEvent, type EventContext } from './record.js';

export class RateLimitWatch {
  /** Accounts refused since their last admitted request. */
  private readonly limited = new Set<string>();

  constructor(private readonly ctx: EventContext, private readonly perSecond: number) {}

  refused(clientId: string, retryAfterSeconds: number): void {
    if (this.limited.has(clientId)) return;
    this.limited.add(clientId);
    const expiry = new Date(this.ctx.clock.now().getTime() + retryAfterSeconds * 1000);
    this.record(clientId, 'client.rateLimit.reached', 0, expiry);
  }

  admitted(clientId: string, remaining: number): void {
    if (!this.limited.delete(clientId)) return;
    this.record(clientId, 'client.rateLimit.reset', remaining, this.ctx.clock.now());
  }

  private record(clientId: string, eventType: string, quotaRemaining: number, expiry: Date): void {
    // ferry's limit is per second per key; the catalogue's field names are kept.
    this.ctx.store.transaction(() => recordEvent(this.ctx, {
      clientId, eventType, payload: { dailyQuota: this.perSecond, quotaRemaining, expiryDate: isoSeconds(expiry) },
    }));
  }
}
