// client.rateLimit.reached when an account's key is first refused for its rate limit, and
// client.rateLimit.reset when a request of that account is admitted again: one pair per
// episode, however many requests were refused in between.
import { isoSeconds } from '../../lib/clock.js';
import { recordEvent, type EventContext } from './record.js';

export class RateLimitWatch {
  /** Accounts refused since their last admitted request. */
  private readonly limited = new Set<string>();

  constructor(private readonly ctx: EventContext, private readonly perSecond: number) {}

  // The episode's state changes at once, before any await, so two requests never both
  // record the same event.
  async refused(clientId: string, retryAfterSeconds: number): Promise<void> {
    if (this.limited.has(clientId)) return;
    this.limited.add(clientId);
    const expiry = new Date(this.ctx.clock.now().getTime() + retryAfterSeconds * 1000);
    await this.record(clientId, 'client.rateLimit.reached', 0, expiry);
  }

  async admitted(clientId: string, remaining: number): Promise<void> {
    if (!this.limited.delete(clientId)) return;
    await this.record(clientId, 'client.rateLimit.reset', remaining, this.ctx.clock.now());
  }

  private async record(clientId: string, eventType: string, quotaRemaining: number, expiry: Date): Promise<void> {
    // ferry's limit is per second per key; the catalogue's field names are kept.
    await this.ctx.store.transaction(() => recordEvent(this.ctx, {
      clientId, eventType, payload: { dailyQuota: this.perSecond, quotaRemaining, expiryDate: isoSeconds(expiry) },
    }));
  }
}
