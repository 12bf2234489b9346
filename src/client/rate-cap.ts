// The cap on requests a second: --max-rate, and what 429s with a Retry-After teach (a rate
// limit is a bucket refilled with time). The first such 429 caps the rate at half of what
// was sent in the second before, growing by a tenth a second; a later one at what the
// target admitted since an earlier 429 (answers other than 429) plus 5%, growing by 1% a
// second. At two 429s the bucket behind them was empty, so what it let through in between
// is its refill rate. Sends are spaced evenly under the cap (a bucket of one).
import type { SendRate } from './send-rate.js';

const FIRST_DROP = 0.5;
const DROP = 0.8;
const RATE_MARGIN = 1.05;
const PROBE_BEFORE_ESTIMATE = 0.1;
const PROBE_AFTER_ESTIMATE = 0.01;
/** An estimate of the admitted rate spans at least this much time, and starts at a 429 no older than ESTIMATE_SPAN_MS. */
const MIN_ESTIMATE_SPAN_MS = 1000;
const ESTIMATE_SPAN_MS = 60_000;

export class RateCap {
  private learned: { rate: number; at: number; growth: number } | undefined;
  private throttleEvents: Array<{ at: number; admitted: number }> = [];
  private lastThrottleAt = -Infinity;
  private nextSlot = -Infinity;

  constructor(private readonly maxRate: number | undefined) {}

  /** The cap now (Infinity: none). */
  at(now: number): number {
    let cap = this.maxRate ?? Infinity;
    if (this.learned) cap = Math.min(cap, this.learned.rate * (1 + this.learned.growth) ** (Math.max(0, now - this.learned.at) / 1000));
    return cap;
  }

  /** Reserves the next send time under the cap; the milliseconds to wait for it (0: send now). */
  reserve(now: number): number {
    const cap = this.at(now);
    if (!Number.isFinite(cap)) return 0;
    const slot = Math.max(now, this.nextSlot);
    this.nextSlot = slot + 1000 / cap;
    return slot - now;
  }

  /** A 429 with a Retry-After for a request sent at `sentAt`; `admitted` counts the answers other than 429 so far. */
  throttled(sentAt: number, now: number, admitted: number, sent: SendRate): void {
    // Sent before the last 429 was learned from: the same burst, nothing new.
    if (sentAt <= this.lastThrottleAt) return;
    let rate: number;
    let growth: number;
    const since = this.throttleEvents.find((e) => now - e.at <= ESTIMATE_SPAN_MS && now - e.at >= MIN_ESTIMATE_SPAN_MS);
    if (since) {
      rate = ((admitted - since.admitted) / ((now - since.at) / 1000)) * RATE_MARGIN;
      growth = PROBE_AFTER_ESTIMATE;
    } else if (this.learned) {
      rate = this.at(now) * DROP;
      growth = this.learned.growth;
    } else {
      rate = sent.lastSecond(now) * FIRST_DROP;
      growth = PROBE_BEFORE_ESTIMATE;
    }
    this.learned = { rate: Math.max(1, rate), at: now, growth };
    this.throttleEvents = this.throttleEvents.filter((e) => now - e.at <= ESTIMATE_SPAN_MS);
    this.throttleEvents.push({ at: now, admitted });
    this.lastThrottleAt = now;
  }
}
