// Tells the stream and the delivery loop when events were committed. Writers on the main
// thread say so at once (changed()); the sync worker writes from its own thread and
// connection, so while anyone listens the bus also looks at the newest sequence number
// every `intervalMs` (one indexed read), and tells listeners when it moved.
import type { Store } from '../store/store.js';

export type EventListener = (latestSeq: number) => void;

export class EventBus {
  private readonly listeners = new Set<EventListener>();
  private timer: NodeJS.Timeout | undefined;
  private latest: number;

  constructor(private readonly store: Store, private readonly intervalMs = 20) {
    this.latest = store.latestEventSeq();
  }

  /** The newest sequence number seen. */
  get latestSeq(): number {
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
  changed = (): void => {
    let seq: number;
    try {
      seq = this.store.latestEventSeq();
    } catch {
      return; // the store is closing
    }
    if (seq === this.latest) return;
    this.latest = seq;
    for (const listener of this.listeners) listener(seq);
  };

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.listeners.clear();
  }
}
