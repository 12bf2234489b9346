// What the operator's probes and metrics read of the database as a whole: whether its
// schema is current (readiness), and the backlog of pulls and webhook deliveries (the
// metrics a backlog alert watches). SQL in sqlite/monitoring.ts and pg/monitoring.ts; each
// is one read served by a partial index of open rows, so a scrape every few seconds costs
// the database next to nothing however many finished rows it holds.

/** The open pulls of one data type. */
export interface PullBacklogRow {
  data_type: string;
  /** Waiting for a worker: never claimed, waiting to retry, or left by a worker whose lease ran out. */
  queued: number;
  /** Held by a worker's live lease. */
  running: number;
}

/** A PostgreSQL pool's connections (pg's totalCount and idleCount) and the requests waiting for one (waitingCount). */
export interface PoolCounts {
  total: number;
  idle: number;
  waiting: number;
}
