// Tells the stream and the delivery loop when events were committed. Writers on the main
// thread say so at once (changed()); the sync worker writes from its own thread and
// connection, so while anyone listens the bus also looks at the newest sequence number
// every `intervalMs` (one indexed read), and tells listeners when it moved.
//
// Looks are at least `intervalMs` apart: a writer's call soon after a look is answered by
// one look when the gap is up, so a burst of writes costs one read, not one each (under a
// migration's load, four reads per migrated row, and as many delivery passes after them).
//
// A writer says so from inside its transaction's async context, before it commits. The
// look runs in the bus's own context instead (where it was made), so it never joins that
// transaction: its read waits for the commit and sees only committed events, and the
// listeners' own reads start outside any transaction too.
import { AsyncResource } from 'node:async_hooks';
import type { AsyncStore } from '../store/async-store.js';

export type EventListener = (latestSeq: number) => void;

export class EventBus {
  private readonly listeners = new Set<EventListener>();
  private timer: NodeJS.Timeout | undefined;
  private latest: number | undefined;
  /** One look at a time; asked again meanwhile, it looks once more when done (a commit may have come after its read). */
  private looking = false;
  private again = false;
  private closed = false;
  /** When the last look began (performance.now()), and the look waiting for the gap to pass. */
  private lastLook = Number.NEGATIVE_INFINITY;
  private soon: NodeJS.Timeout | undefined;

  constructor(private readonly store: Pick<AsyncStore, 'latestEventSeq'>, private readonly intervalMs = 20) {
    this.changed();
  }

  /** The newest sequence number seen (undefined until the first look has answered). */
  get latestSeq(): number | undefined {
    return this.latest;
  }

  subscribe(listener: EventListener): () => void {
    this.listeners.add(listener);
    if (!this.timer) {
      this.timer = setInterval(() => this.changed(), this.intervalMs);
      this.timer.unref();
    }
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0 && this.timer) {
        clearInterval(this.timer);
        this.timer = undefined;
      }
    };
  }

  /** Looks for new events and tells every listener if there are any. */
  changed = AsyncResource.bind((): void => {
    if (this.closed) return;
    if (this.looking) {
      this.again = true;
      return;
    }
    const wait = this.lastLook + this.intervalMs - performance.now();
    if (wait > 0) {
      this.soon ??= setTimeout(() => {
        this.soon = undefined;
        this.changed();
      }, wait);
      return;
    }
    this.lastLook = performance.now();
    this.looking = true;
    void this.look().finally(() => {
      this.looking = false;
      if (this.again) {
        this.again = false;
        this.changed();
      }
    });
  });

  close(): void {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    if (this.soon) clearTimeout(this.soon);
    this.timer = undefined;
    this.listeners.clear();
  }

  private async look(): Promise<void> {
    let seq: number;
    try {
      seq = await this.store.latestEventSeq();
    } catch {
      return; // the store is closing
    }
    if (seq === this.latest || this.closed) return;
    const first = this.latest === undefined;
    this.latest = seq;
    if (first) return;
    for (const listener of this.listeners) listener(seq);
  }
}
