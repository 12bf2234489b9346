// What a wait sees of the service's events: a feed it asks for the next relevant one. The
// poll loop (poll.ts) wakes on one; wait-for-change.ts opens one over the event stream.
import type { EventRecord } from './wire.js';

/** An event as the stream carries it (docs/events.md). */
export type ChangeEvent = EventRecord;

/** What a feed is doing: `live` once the stream has delivered, `unavailable` when the target has none. */
export type FeedState = 'connecting' | 'live' | 'unavailable' | 'stopped';

/** What one wait learned: the events that woke it (none: its time ran out; undefined: too many to keep, look at everything) and where it got to. */
export interface Wakeup {
  events: ChangeEvent[] | undefined;
  mark: number;
}

export interface ChangeFeed {
  readonly state: FeedState;
  /** The position after the newest event received: a later wait from here sees only newer ones. */
  mark(): number;
  /**
   * Resolves at the first event after `since` that `relevant` accepts (at once when one has
   * already come), after `ms`, or when `signal` aborts; never rejects.
   */
  next(since: number, relevant: (event: ChangeEvent) => boolean, ms: number, signal: AbortSignal): Promise<Wakeup>;
  close(): void;
}
