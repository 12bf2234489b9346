// Tells the streams and the delivery loop when events or deliveries were committed.
//
// On PostgreSQL the database says so (store/pg/notices.ts): a notice comes when a
// transaction that wrote events, or deliveries, commits, in whichever process wrote them.
// While the notices are heard, a look at the newest sequence number every `safetyMs` is all
// the bus reads: for a notice that never came. Without them (SQLite, whose sync worker
// writes from its own thread and connection; a PostgreSQL process whose listening
// connection is lost) the bus looks every `intervalMs` while anyone listens (one indexed
// read) and when a writer on this thread says it wrote (changed()), and tells listeners when
// the number moved. On SQLite it cannot tell events from deliveries: every move wakes both.
//
// Looks, and tells, are at least `intervalMs` apart: a burst of writes costs one read and
// one wake of each listener, not one each (under a migration's load, four events per
// migrated row).
//
// A writer says so from inside its transaction's async context, before it commits. The
// look runs in the bus's own context instead (where it was made), so it never joins that
// transaction: its read waits for the commit and sees only committed events, and the
// listeners' own reads start outside any transaction too.
import { AsyncResource } from 'node:async_hooks';
import type { AsyncStore } from '../store/async-store.js';
import type { CommitNotices, NoticeKind } from '../store/commit-notices.js';

export type EventListener = () => void;

export interface WakeSource {
  subscribe(listener: EventListener): () => void;
}

export interface EventBusOptions {
  /** The shortest gap between looks, and between wakes of one listener (20 ms). */
  intervalMs?: number;
  /** The database's notices of commits (PostgreSQL). */
  notices?: CommitNotices;
  /** While notices are heard, a look this often (1 s): for one that never came. */
  safetyMs?: number;
}

export class EventBus implements WakeSource {
  private readonly listeners: Record<NoticeKind, Set<EventListener>> = { events: new Set(), deliveries: new Set() };
  private readonly intervalMs: number;
  private readonly safetyMs: number;
  private timer: NodeJS.Timeout | undefined;
  private latest: number | undefined;
  /** One look at a time; asked again meanwhile, it looks once more when done (a commit may have come after its read). */
  private looking = false;
  private again = false;
  private closed = false;
  /** When the last look began (performance.now()), and the look waiting for the gap to pass. */
  private lastLook = Number.NEGATIVE_INFINITY;
  private soon: NodeJS.Timeout | undefined;
  /** What the next wake tells, when the last one was, and the wake waiting for the gap to pass. */
  private readonly due: Record<NoticeKind, boolean> = { events: false, deliveries: false };
  private lastWake = Number.NEGATIVE_INFINITY;
  private wakeSoon: NodeJS.Timeout | undefined;
  /** Notices are heard now: no look but the safety net's. */
  private hearing = false;
  private readonly notices: { close(): Promise<void> } | undefined;

  /** Subscribing here wakes on deliveries committed (on SQLite: on any event). */
  readonly deliveries: WakeSource = { subscribe: (listener) => this.add('deliveries', listener) };

  constructor(private readonly store: Pick<AsyncStore, 'latestEventSeq'>, options: EventBusOptions = {}) {
    this.intervalMs = options.intervalMs ?? 20;
    this.safetyMs = options.safetyMs ?? 1_000;
    this.notices = options.notices?.listen({ heard: (kind, seq) => this.heard(kind, seq), live: (hearing) => this.live(hearing) });
    this.look();
  }

  /** Wakes on events committed. */
  subscribe(listener: EventListener): () => void {
    return this.add('events', listener);
  }

  /** A writer on this thread wrote events: look, unless the database's notice will say so. */
  changed = AsyncResource.bind((): void => {
    if (!this.hearing) this.look();
  });

  async close(): Promise<void> {
    this.closed = true;
    for (const timer of [this.soon, this.wakeSoon]) if (timer) clearTimeout(timer);
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.listeners.events.clear();
    this.listeners.deliveries.clear();
    await this.notices?.close();
  }

  private add(kind: NoticeKind, listener: EventListener): () => void {
    this.listeners[kind].add(listener);
    this.poll();
    return () => {
      this.listeners[kind].delete(listener);
      this.poll();
    };
  }

  /** Looks on a timer while anyone listens: every intervalMs, or every safetyMs while notices are heard. */
  private poll(restart = false): void {
    const wanted = !this.closed && this.listeners.events.size + this.listeners.deliveries.size > 0;
    if (this.timer && (restart || !wanted)) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
    if (wanted && !this.timer) {
      this.timer = setInterval(() => this.look(), this.hearing ? this.safetyMs : this.intervalMs);
      this.timer.unref();
    }
  }

  private heard(kind: NoticeKind, seq?: number): void {
    if (kind === 'events' && seq !== undefined && seq > (this.latest ?? 0)) this.latest = seq;
    this.wake(kind === 'events', kind === 'deliveries');
  }

  /** Listening began (anything may have been missed before it: a look, and a wake of all) or stopped (looks every intervalMs again). */
  private live(hearing: boolean): void {
    if (this.closed) return;
    this.hearing = hearing;
    this.poll(true);
    if (hearing) {
      this.look();
      this.wake(true, true);
    }
  }

  /** Reads the newest sequence number, at most every intervalMs, and wakes every listener if it moved. */
  private look = AsyncResource.bind((): void => {
    if (this.closed) return;
    if (this.looking) {
      this.again = true;
      return;
    }
    const wait = this.lastLook + this.intervalMs - performance.now();
    if (wait > 0) {
      this.soon ??= setTimeout(() => {
        this.soon = undefined;
        this.look();
      }, wait);
      return;
    }
    this.lastLook = performance.now();
    this.looking = true;
    void this.read().finally(() => {
      this.looking = false;
      if (this.again) {
        this.again = false;
        this.look();
      }
    });
  });

  private async read(): Promise<void> {
    let seq: number;
    try {
      seq = await this.store.latestEventSeq();
    } catch {
      return; // the store is closing
    }
    if (this.closed || seq <= (this.latest ?? -1)) return;
    const first = this.latest === undefined;
    this.latest = seq;
    if (!first) this.wake(true, true);
  }

  /** Tells the listeners of each kind due, at most every intervalMs. */
  private wake(events: boolean, deliveries: boolean): void {
    this.due.events ||= events;
    this.due.deliveries ||= deliveries;
    if (this.closed || this.wakeSoon) return;
    const wait = this.lastWake + this.intervalMs - performance.now();
    if (wait > 0) {
      this.wakeSoon = setTimeout(() => {
        this.wakeSoon = undefined;
        this.wake(false, false);
      }, wait);
      return;
    }
    this.lastWake = performance.now();
    for (const kind of ['events', 'deliveries'] as const) {
      if (!this.due[kind]) continue;
      this.due[kind] = false;
      for (const listener of this.listeners[kind]) listener();
    }
  }
}
