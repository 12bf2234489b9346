// Pull operations: the durable sync queue and its history.
//
// A worker holds a pull by its lease_until: it takes the lease only once it has run out
// (claimPulls, leasePull), and sets a time later than the one it found, so no other holder
// of the pull can have written the value a worker last wrote. That value is its token:
// every write of a running pull is conditional on it (updatePull with `lease`), and one
// that finds another value changes nothing (its worker was paused past its lease and
// another took the pull).
// Freeing leases (releaseOpenPullLeases) breaks the chain of later times: only the only
// worker of a database may, when it starts.
import type { FieldResolver } from '../query/types.js';
import type { Db } from './db.js';
import { planPage, type PagePlan, type PageRequest } from './paging.js';
import { prepared } from './statements.js';
import { isFinished, type PullStatus } from '../sync/pull-status.js';

export type { PullStatus };

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
  /** The checks run over the records read (JSON: { errors, warnings }); null until the pull completes. */
  validation: string | null;
}

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

export function getPull(db: Db, id: string): PullRow | undefined {
  return prepared(db, 'SELECT * FROM pull_operations WHERE id = ?').get(id) as PullRow | undefined;
}

/** The queued or running pulls of a company, by data type. */
export function openPulls(db: Db, companyId: string): Map<string, PullRow> {
  const rows = prepared(db, `SELECT * FROM pull_operations WHERE company_id = ? AND status IN ('Queued', 'Fetching', 'Mapping') ORDER BY seq`)
    .all(companyId) as PullRow[];
  const byType = new Map<string, PullRow>();
  for (const row of rows) if (!byType.has(row.data_type)) byType.set(row.data_type, row);
  return byType;
}

/** The queued or running pull of this data set, if any: one at a time per (company, data type). */
export function openPull(db: Db, companyId: string, dataType: string): PullRow | undefined {
  return prepared(db, `SELECT * FROM pull_operations WHERE company_id = ? AND data_type = ?
                       AND status IN ('Queued', 'Fetching', 'Mapping') ORDER BY seq LIMIT 1`).get(companyId, dataType) as PullRow | undefined;
}

export function insertPull(db: Db, pull: { id: string; companyId: string; connectionId: string; dataType: string; status: PullStatus; generation: number; requested: string; statusDescription?: string }): PullRow {
  const finished = isFinished(pull.status);
  return prepared(db, `INSERT INTO pull_operations (id, company_id, connection_id, data_type, status, status_description, requested, completed, progress, generation)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`)
    .get(pull.id, pull.companyId, pull.connectionId, pull.dataType, pull.status, pull.statusDescription ?? null, pull.requested,
      finished ? pull.requested : null, finished ? 100 : 0, pull.generation) as PullRow;
}

export function pullsPage(companyId: string, request: PageRequest): PagePlan {
  return planPage({
    columns: '*', from: 'pull_operations', scope: 'company_id = ?', scopeParams: [companyId], resolve: pullFields, defaultOrder: 'seq DESC',
  }, request);
}

/**
 * Leases the oldest claimable pulls in one transaction. They are found before it, so an
 * idle worker never takes the write lock; each lease is conditional, so a pull another
 * connection took meanwhile is left out.
 */
export function claimPulls(db: Db, now: string, until: string, limit: number): PullRow[] {
  const claimable = prepared(db, `SELECT id FROM pull_operations WHERE status IN ('Queued', 'Fetching', 'Mapping')
                       AND (lease_until IS NULL OR lease_until <= ?) AND (not_before IS NULL OR not_before <= ?)
                       ORDER BY seq LIMIT ?`).all(now, now, limit) as Array<{ id: string }>;
  if (claimable.length === 0) return [];
  const lease = prepared(db, `UPDATE pull_operations SET lease_until = ?, status = CASE status WHEN 'Queued' THEN 'Fetching' ELSE status END
                       WHERE id = ? AND (lease_until IS NULL OR lease_until <= ?)
                       AND status IN ('Queued', 'Fetching', 'Mapping') RETURNING *`);
  return db.transaction(() => claimable.flatMap(({ id }) => (lease.get(until, id, now) as PullRow | undefined) ?? [])).immediate();
}

/**
 * Takes the lease if it is still free (false when another worker got there first); a
 * queued pull becomes Fetching in the same write, one commit fewer per pull.
 */
export function leasePull(db: Db, id: string, now: string, until: string): boolean {
  return prepared(db, `UPDATE pull_operations SET lease_until = ?, status = CASE status WHEN 'Queued' THEN 'Fetching' ELSE status END
                       WHERE id = ? AND (lease_until IS NULL OR lease_until <= ?)
                       AND status IN ('Queued', 'Fetching', 'Mapping')`).run(until, id, now).changes === 1;
}

/** Sets `fields`; with `lease`, only while that is the open pull's lease (the caller's hold on it). True when updated. */
export function updatePull(db: Db, id: string, fields: Partial<Omit<PullRow, 'seq' | 'id'>>, lease?: string): boolean {
  const entries = Object.entries(fields);
  if (entries.length === 0) return false;
  const sets = entries.map(([k]) => `${k} = ?`).join(', ');
  const held = lease === undefined ? '' : " AND lease_until = ? AND status IN ('Queued', 'Fetching', 'Mapping')";
  return prepared(db, `UPDATE pull_operations SET ${sets} WHERE id = ?${held}`)
    .run(...entries.map(([, v]) => v as never), id, ...(lease === undefined ? [] : [lease])).changes === 1;
}

/** Leases of pulls still open: void when the only worker of this database starts (a killed one left them). */
export function releaseOpenPullLeases(db: Db): void {
  prepared(db, "UPDATE pull_operations SET lease_until = NULL WHERE status IN ('Queued', 'Fetching', 'Mapping')").run();
}

/** The connection the latest pull of a company's data type used. */
export function latestPullConnectionId(db: Db, companyId: string, dataType: string): string | undefined {
  const row = prepared(db, 'SELECT connection_id FROM pull_operations WHERE company_id = ? AND data_type = ? ORDER BY seq DESC LIMIT 1')
    .get(companyId, dataType) as { connection_id: string } | undefined;
  return row?.connection_id;
}
