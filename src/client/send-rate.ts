// Requests sent, counted in 100 ms buckets over the last five seconds: the rate a command
// shows on its progress line, and what the rate cap starts from at the first 429.
const BUCKET_MS = 100;
const BUCKETS = 50;
export const RATE_WINDOW_MS = BUCKET_MS * BUCKETS;

export class SendRate {
  /** Requests counted (attempts, retries included). */
  requests = 0;
  firstAt: number | undefined;
  lastAt = 0;
  private readonly bucketIndex = new Array<number>(BUCKETS).fill(-1);
  private readonly bucketCount = new Array<number>(BUCKETS).fill(0);

  count(now: number): void {
    this.requests += 1;
    this.firstAt ??= now;
    this.seen(now);
    const index = Math.floor(now / BUCKET_MS);
    const slot = index % BUCKETS;
    if (this.bucketIndex[slot] !== index) {
      this.bucketIndex[slot] = index;
      this.bucketCount[slot] = 0;
    }
    this.bucketCount[slot]! += 1;
  }

  /** Something happened at `now` (an answer): the span of the run reaches it. */
  seen(now: number): void {
    this.lastAt = Math.max(this.lastAt, now);
  }

  /** Requests counted in the last `ms` (at most RATE_WINDOW_MS). */
  since(now: number, ms: number): number {
    const last = Math.floor(now / BUCKET_MS);
    const first = last - Math.ceil(ms / BUCKET_MS) + 1;
    let total = 0;
    for (let i = 0; i < BUCKETS; i++) {
      const index = this.bucketIndex[i]!;
      if (index >= first && index <= last) total += this.bucketCount[i]!;
    }
    return total;
  }

  /** Requests a second over the last few seconds. */
  recent(now: number): number {
    if (this.firstAt === undefined) return 0;
    const seconds = Math.min(RATE_WINDOW_MS, Math.max(1000, now - this.firstAt)) / 1000;
    return this.since(now, RATE_WINDOW_MS) / seconds;
  }

  /** Requests a second from the first request to the last answer (one decimal). */
  overall(): number {
    const seconds = this.firstAt === undefined ? 0 : (this.lastAt - this.firstAt) / 1000;
    return seconds > 0 ? Math.round((this.requests / seconds) * 10) / 10 : this.requests;
  }

  /** The rate sent over the last second (or since the first request, if that is sooner). */
  lastSecond(now: number): number {
    const span = Math.max(BUCKET_MS, Math.min(1000, now - (this.firstAt ?? now)));
    return this.since(now, 1000) / (span / 1000);
  }
}
