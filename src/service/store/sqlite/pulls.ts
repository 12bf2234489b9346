// Pull operations: the durable sync queue and its history.
//
// A worker holds a pull by its lease_until: it takes the lease only once it has run out
// (claimJobs, sqlite/jobs.ts; leasePull), and sets a time later than the one it found, so no other holder
// of the pull can have written the value a worker last wrote. That value is its token:
// every write of a running pull is conditional on it (updatePull with `lease`), and one
// that finds another value changes nothing (its worker was paused past its lease and
// another took the pull).
// Freeing leases (db.ts: releaseOpenPullLeases) breaks the chain of later times: only the
// only worker of a database may, before its threads start.
import type { Db } from './db.js';
import { reserveGeneration } from './datasets.js';
import { planPage, type PagePlan, type PageRequest } from '../paging.js';
import { prepared } from './statements.js';
import { isFinished } from '../pull-status.js';
import { type PullRow, type PullFields, pullFields, type NewPull, checkDistinctDataSets } from '../pulls.js';
import type { PullChange } from '../grouped-writes.js';

export function getPull(db: Db, id: string): PullRow | undefined {
  return prepared(db, 'SELECT * FROM pull_operations WHERE id = ?').get(id) as PullRow | undefined;
}

/** The pulls of these ids that exist, oldest first. */
export function getPulls(db: Db, ids: string[]): PullRow[] {
  if (ids.length === 0) return [];
  return prepared(db, 'SELECT * FROM pull_operations WHERE id IN (SELECT value FROM json_each(?)) ORDER BY seq').all(JSON.stringify(ids)) as PullRow[];
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

export function insertPull(db: Db, pull: NewPull & { generation: number }): PullRow {
  const finished = isFinished(pull.status);
  return prepared(db, `INSERT INTO pull_operations (id, company_id, connection_id, data_type, status, status_description, requested, completed, progress, generation, priority)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`)
    .get(pull.id, pull.companyId, pull.connectionId, pull.dataType, pull.status, pull.statusDescription ?? null, pull.requested,
      finished ? pull.requested : null, finished ? 100 : 0, pull.generation, pull.priority ?? 0) as PullRow;
}

/**
 * Reserves each new pull's generation and inserts it, in the order given (seq follows it);
 * all or none. Inside a transaction (the queuing routes' and the schedule's), that
 * transaction is the unit, as a failed statement ends one on PostgreSQL: a savepoint here
 * cost the queue-all request a tenth of its speed.
 */
export function queuePulls(db: Db, pulls: NewPull[]): PullRow[] {
  checkDistinctDataSets(pulls);
  if (pulls.length === 0) return [];
  const queue = () => pulls.map((pull) =>
    insertPull(db, { ...pull, generation: reserveGeneration(db, pull.companyId, pull.dataType, pull.id, pull.requested) }));
  return db.inTransaction ? queue() : db.transaction(queue).immediate();
}

export function queueUnlessOpen(db: Db, companyId: string, pulls: NewPull[]): Map<string, PullRow> {
  const open = openPulls(db, companyId);
  for (const pull of queuePulls(db, pulls.filter((p) => !open.has(p.dataType)))) open.set(pull.data_type, pull);
  return open;
}

export function pullsPage(companyId: string, request: PageRequest): PagePlan {
  return planPage({
    columns: '*', from: 'pull_operations', scope: 'company_id = ?', scopeParams: [companyId], resolve: pullFields, defaultOrder: 'seq DESC',
  }, request);
}

/** Takes the lease if it is still free (false when another worker got there first); a queued pull becomes Fetching in the same write. */
export function leasePull(db: Db, id: string, now: string, until: string): boolean {
  return prepared(db, `UPDATE pull_operations SET lease_until = ?, status = CASE status WHEN 'Queued' THEN 'Fetching' ELSE status END
                       WHERE id = ? AND (lease_until IS NULL OR lease_until <= ?)
                       AND status IN ('Queued', 'Fetching', 'Mapping')`).run(until, id, now).changes === 1;
}

/** The UPDATE behind updatePull and updatePulls, and its parameters; undefined when there is nothing to set. */
function pullUpdate(id: string, fields: PullFields, lease: string | undefined): { sql: string; params: unknown[] } | undefined {
  const entries = Object.entries(fields);
  if (entries.length === 0) return undefined;
  const sets = entries.map(([k]) => `${k} = ?`).join(', ');
  const held = lease === undefined ? '' : " AND lease_until = ? AND status IN ('Queued', 'Fetching', 'Mapping')";
  return { sql: `UPDATE pull_operations SET ${sets} WHERE id = ?${held}`, params: [...entries.map(([, v]) => v), id, ...(lease === undefined ? [] : [lease])] };
}

/** Sets `fields`; with `lease`, only while that is the open pull's lease (the caller's hold on it). True when updated. */
export function updatePull(db: Db, id: string, fields: PullFields, lease?: string): boolean {
  const update = pullUpdate(id, fields, lease);
  return update !== undefined && prepared(db, update.sql).run(...update.params as never[]).changes === 1;
}

/** updatePull of each change with `lease`, answering the pulls as written (those still held by `lease`). */
export function updatePulls(db: Db, changes: PullChange[], lease: string): PullRow[] {
  const written: PullRow[] = [];
  for (const { id, fields } of changes) {
    const update = pullUpdate(id, fields, lease);
    const row = update && prepared(db, `${update.sql} RETURNING *`).get(...update.params as never[]) as PullRow | undefined;
    if (row) written.push(row);
  }
  return written;
}

/** The connection the latest pull of a company's data type used. */
export function latestPullConnectionId(db: Db, companyId: string, dataType: string): string | undefined {
  const row = prepared(db, 'SELECT connection_id FROM pull_operations WHERE company_id = ? AND data_type = ? ORDER BY seq DESC LIMIT 1')
    .get(companyId, dataType) as { connection_id: string } | undefined;
  return row?.connection_id;
}
