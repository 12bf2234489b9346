// Pull operations as both stores keep them: the row, what a write may set, the list's
// query fields, and the rule both apply to a queuing (SQL in sqlite/pulls.ts and pg/pulls.ts).
import type { FieldResolver } from '../query/types.js';
import { OPEN_STATUSES, type PullStatus } from './pull-status.js';

export interface PullRow {
  seq: number;
  id: string;
  company_id: string;
  connection_id: string;
  data_type: string;
  status: PullStatus;
  status_description: string | null;
  error_message: string | null;
  requested: string;
  completed: string | null;
  progress: number;
  generation: number;
  cursor: string | null;
  fetched: number;
  attempts: number;
  not_before: string | null;
  lease_until: string | null;
  /** 1 in the interactive lane (a sync asked for one company, sync/lanes.ts), else 0: claimed first. */
  priority: number;
  /** The checks run over the records read (JSON: { errors, warnings }); null until the pull completes. */
  validation: string | null;
}

/** What a pull's writes may set. */
export type PullFields = Partial<Omit<PullRow, 'seq' | 'id'>>;

/** OPEN_STATUSES as an SQL list. */
const OPEN_LIST = OPEN_STATUSES.map((status) => `'${status}'`).join(', ');

/**
 * "The pull has not ended", for pulls found by another key (an id, a company). It is an
 * expression no index is built on, so that PostgreSQL cannot join the queue's partial
 * indexes to the key's in a bitmap scan: those indexes keep an entry for each version of
 * every pull that was open, until a vacuum removes it, and a bitmap scan walks them all
 * and marks none dead (13 ms a statement at 2,500 companies, growing with the migration),
 * where the key alone finds the company's few rows.
 */
export const openByKey = (column = 'status'): string => `(${column} || '') IN (${OPEN_LIST})`;

export const pullFields: FieldResolver = (path) => {
  switch (path) {
    case 'id': return { sql: 'id', type: 'string' };
    case 'dataType': return { sql: 'data_type', type: 'string' };
    case 'status': return { sql: 'status', type: 'string' };
    case 'connectionId': return { sql: 'connection_id', type: 'string' };
    case 'requested': return { sql: 'requested', type: 'date' };
    case 'completed': return { sql: 'completed', type: 'date' };
    case 'progress': return { sql: 'progress', type: 'number' };
    default: return undefined;
  }
};

/** A pull to queue: its generation is reserved when it is queued (queuePulls). */
export interface NewPull {
  id: string;
  companyId: string;
  connectionId: string;
  dataType: string;
  status: PullStatus;
  requested: string;
  statusDescription?: string;
  /** 1: the interactive lane. */
  priority?: number;
}

/** A company's claimable pulls, leased together by one worker: `lease` is their token (each pull's lease_until). */
export interface PullJob {
  companyId: string;
  lease: string;
  pulls: PullRow[];
}

/**
 * A data set appears once in a queuing: PostgreSQL's upsert cannot reserve two generations
 * of one data set in one statement, and both stores refuse the same lists.
 */
export function checkDistinctDataSets(pulls: readonly NewPull[]): void {
  const seen = new Set<string>();
  for (const pull of pulls) {
    const key = JSON.stringify([pull.companyId, pull.dataType]);
    if (seen.has(key)) throw new Error(`Data type ${pull.dataType} of company ${pull.companyId} is queued twice in one call.`);
    seen.add(key);
  }
}
