// Notices that events or webhook deliveries were committed, from whichever process wrote
// them: PostgreSQL sends them (pg/notices.ts); SQLite has none, its writers share a process
// and the event bus looks for what its sync thread wrote (events/bus.ts).

/** What a notice says was committed. */
export type NoticeKind = 'events' | 'deliveries';

export interface NoticeHandlers {
  /** A notice: for events, the highest seq of the statement that wrote them. */
  heard(kind: NoticeKind, seq?: number): void;
  /** Listening began (at start, or again after the connection was lost: notices may have been missed meanwhile), or stopped. */
  live(listening: boolean): void;
}

export interface CommitNotices {
  /** Listens until the answer's close(); connects again, without end, when the connection is lost. */
  listen(handlers: NoticeHandlers): { close(): Promise<void> };
}
