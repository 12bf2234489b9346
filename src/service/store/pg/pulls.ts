// Pull operations on PostgreSQL: the durable sync queue and its history, as ../sqlite/pulls.ts
// keeps them in SQLite. A lease is one conditional UPDATE: of workers in any number of
// processes racing for a pull, the row lock lets exactly one through (the others re-check
// the lease under it and find it taken).
import { postgresDate } from '../../query/json-fields.js';
import type { FieldResolver } from '../../query/types.js';
import { isFinished } from '../pull-status.js';
import type { AsyncStore } from '../async-store.js';
import type { JobStore, PullStore } from '../store.js';
import { planPage } from '../paging.js';
import { checkDistinctDataSets, openByKey, pullFields, type NewPull, type PullFields, type PullRow } from '../pulls.js';
import type { PullChange } from '../grouped-writes.js';
import { row, rows, run, type Queryable } from './query.js';

type PullMethods = Pick<AsyncStore, Exclude<keyof PullStore, keyof JobStore> | 'pullsPage'>;

/**
 * A resolver of text columns for PostgreSQL: date columns hold ISO text, which the query
 * language compares as instants (timestamptz here).
 */
export function pgDates(resolve: FieldResolver): FieldResolver {
  return (path) => {
    const field = resolve(path);
    return field?.type === 'date' ? { sql: postgresDate(field.sql), type: 'date' } : field;
  };
}

const pgPullFields = pgDates(pullFields);

/** The columns updatePull may set: field names become SQL text. */
const UPDATABLE = new Set<string>(['company_id', 'connection_id', 'data_type', 'status', 'status_description', 'error_message', 'requested',
  'completed', 'progress', 'generation', 'cursor', 'fetched', 'attempts', 'not_before', 'lease_until', 'validation']);

/** The UPDATE behind updatePull, and its parameters; undefined when there is nothing to set. */
function pullUpdate(id: string, fields: PullFields, lease: string | undefined): { sql: string; params: unknown[] } | undefined {
  const entries = Object.entries(fields);
  if (entries.length === 0) return undefined;
  for (const [key] of entries) if (!UPDATABLE.has(key)) throw new Error(`No pull column ${JSON.stringify(key)} to update.`);
  const held = lease === undefined ? '' : ` AND lease_until = ? AND ${openByKey()}`;
  return {
    sql: `UPDATE pull_operations SET ${entries.map(([key]) => `${key} = ?`).join(', ')} WHERE id = ?${held}`,
    params: [...entries.map(([, value]) => value), id, ...(lease === undefined ? [] : [lease])],
  };
}

/** The columns of pull_operations that are not text: what updatePulls casts their JSON text to. */
const CASTS: Record<string, string> = { progress: '::integer', generation: '::integer', fetched: '::integer', attempts: '::integer', validation: '::json' };

/**
 * updatePull of many pulls in one statement: each change's fields go in as JSON, and a
 * column takes the change's value where the change names it, its own value elsewhere.
 * Only the columns some change names are in the text. The ids go in again as an array,
 * so the rows are found by key whatever the planner guesses of the JSON's length: joined
 * to the JSON alone, stale statistics made it hash every open pull, a scan per job that
 * grew with the backlog.
 */
function pullsUpdate(changes: PullChange[], lease: string): { sql: string; params: unknown[] } {
  const named = new Set(changes.flatMap(({ fields }) => Object.keys(fields)));
  for (const key of named) if (!UPDATABLE.has(key)) throw new Error(`No pull column ${JSON.stringify(key)} to update.`);
  const sets = [...UPDATABLE].filter((key) => named.has(key)).map((key) =>
    `${key} = CASE WHEN u.f->'set'->'${key}' IS NULL THEN p.${key} ELSE (u.f->'set'->>'${key}')${CASTS[key] ?? ''} END`);
  return {
    sql: `UPDATE pull_operations p SET ${sets.join(', ')} FROM jsonb_array_elements(?::jsonb) AS u(f)
      WHERE p.id = ANY(?::text[]) AND p.id = u.f->>'id' AND p.lease_until = ? AND ${openByKey('p.status')} RETURNING p.*`,
    params: [JSON.stringify(changes.map(({ id, fields }) => ({ id, set: fields }))), changes.map(({ id }) => id), lease],
  };
}

/** The pulls to queue, as given, in order (`n`). */
const QUEUE_INPUT = `SELECT * FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::int[], ?::int[])
  WITH ORDINALITY AS x (id, company_id, connection_id, data_type, status, status_description, requested, completed, progress, priority, n)`;

/**
 * reserveGeneration and insertPull for a whole list (`input`) in one statement: the data
 * sets' rows are upserted in the list's order, and each pull takes the generation its
 * upsert reserved.
 */
const RESERVE = `INSERT INTO datasets (company_id, data_type, next_generation, latest_sync_id, last_requested)
  SELECT company_id, data_type, 2, id, requested FROM input ORDER BY n
  ON CONFLICT (company_id, data_type) DO UPDATE SET next_generation = datasets.next_generation + 1,
  latest_sync_id = excluded.latest_sync_id, last_requested = excluded.last_requested
  RETURNING company_id, data_type, next_generation`;
const INSERT_RESERVED = `INSERT INTO pull_operations (id, company_id, connection_id, data_type, status, status_description, requested, completed, progress, generation, priority)
  SELECT i.id, i.company_id, i.connection_id, i.data_type, i.status, i.status_description, i.requested, i.completed, i.progress, r.next_generation - 1, i.priority
  FROM input i JOIN reserved r ON r.company_id = i.company_id AND r.data_type = i.data_type ORDER BY i.n
  RETURNING *`;

const QUEUE = `WITH input AS (${QUEUE_INPUT}), reserved AS (${RESERVE}) ${INSERT_RESERVED}`;

/**
 * QUEUE for the pulls whose data set has no open pull, and the company's open pulls beside
 * them (each data set's oldest, as openPulls): the lock on the company is held already, so
 * no open pull can come between the look and the insert.
 */
const QUEUE_UNLESS_OPEN = `WITH open AS (
    SELECT DISTINCT ON (data_type) * FROM pull_operations WHERE company_id = ? AND ${openByKey()} ORDER BY data_type, seq
  ), input AS (SELECT * FROM (${QUEUE_INPUT}) given WHERE data_type NOT IN (SELECT data_type FROM open)),
  reserved AS (${RESERVE}), queued AS (${INSERT_RESERVED})
  SELECT * FROM open UNION ALL SELECT * FROM queued`;

/** queuePulls' parameters: its pulls as columns. */
function queueColumns(pulls: NewPull[]): unknown[] {
  const column = <T>(value: (pull: NewPull) => T): T[] => pulls.map(value);
  const finished = pulls.map((pull) => isFinished(pull.status));
  return [column((p) => p.id), column((p) => p.companyId), column((p) => p.connectionId), column((p) => p.dataType),
    column((p) => p.status), column((p) => p.statusDescription ?? null), column((p) => p.requested),
    pulls.map((p, i) => (finished[i] ? p.requested : null)), finished.map((done) => (done ? 100 : 0)), column((p) => p.priority ?? 0)];
}

export function pullMethods(db: Queryable): PullMethods {
  return {
    getPull: (id) => row<PullRow>(db, 'SELECT * FROM pull_operations WHERE id = ?', [id]),
    getPulls: async (ids) => (ids.length === 0 ? [] : rows<PullRow>(db, 'SELECT * FROM pull_operations WHERE id = ANY(?::text[]) ORDER BY seq', [ids])),
    openPulls: async (companyId) => {
      const open = await rows<PullRow>(db, `SELECT * FROM pull_operations WHERE company_id = ? AND ${openByKey()} ORDER BY seq`, [companyId]);
      const byType = new Map<string, PullRow>();
      for (const pull of open) if (!byType.has(pull.data_type)) byType.set(pull.data_type, pull);
      return byType;
    },
    openPull: (companyId, dataType) => row<PullRow>(db, `SELECT * FROM pull_operations WHERE company_id = ? AND data_type = ?
      AND ${openByKey()} ORDER BY seq LIMIT 1`, [companyId, dataType]),
    insertPull: async (pull) => {
      const finished = isFinished(pull.status);
      return (await row<PullRow>(db, `INSERT INTO pull_operations (id, company_id, connection_id, data_type, status, status_description, requested, completed, progress, generation, priority)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`, [pull.id, pull.companyId, pull.connectionId, pull.dataType, pull.status,
        pull.statusDescription ?? null, pull.requested, finished ? pull.requested : null, finished ? 100 : 0, pull.generation, pull.priority ?? 0]))!;
    },
    queuePulls: async (pulls) => {
      checkDistinctDataSets(pulls);
      if (pulls.length === 0) return [];
      const byId = new Map((await rows<PullRow>(db, QUEUE, queueColumns(pulls))).map((pull) => [pull.id, pull]));
      return pulls.map((pull) => byId.get(pull.id)!);
    },
    queueUnlessOpen: async (companyId, pulls) => {
      checkDistinctDataSets(pulls);
      const open = new Map<string, PullRow>();
      for (const pull of await rows<PullRow>(db, QUEUE_UNLESS_OPEN, [companyId, ...queueColumns(pulls)])) open.set(pull.data_type, pull);
      return open;
    },
    pullsPage: (companyId, request) => planPage({
      columns: '*', from: 'pull_operations', scope: 'company_id = ?', scopeParams: [companyId], resolve: pgPullFields, defaultOrder: 'seq DESC', dialect: 'postgres',
    }, request),
    leasePull: async (id, now, until) => (await run(db, `UPDATE pull_operations SET lease_until = ?, status = CASE status WHEN 'Queued' THEN 'Fetching' ELSE status END
      WHERE id = ? AND (lease_until IS NULL OR lease_until <= ?)
      AND ${openByKey()}`, [until, id, now])) === 1,
    // With `lease`: the row lock makes a write racing a takeover wait for it, then re-check the lease and change nothing.
    updatePull: async (id, fields, lease) => {
      const update = pullUpdate(id, fields, lease);
      return update !== undefined && (await run(db, update.sql, update.params)) === 1;
    },
    // In the order given (a job's writer gives them in its pulls' order); a pull another worker took over is not matched, so not locked.
    updatePulls: async (changes, lease) => {
      // A change with nothing to set writes nothing, as updatePull's.
      const given = changes.filter(({ fields }) => Object.keys(fields).length > 0);
      if (given.length === 0) return [];
      const update = pullsUpdate(given, lease);
      return rows<PullRow>(db, update.sql, update.params);
    },
    latestPullConnectionId: async (companyId, dataType) => (await row<{ connection_id: string }>(db,
      'SELECT connection_id FROM pull_operations WHERE company_id = ? AND data_type = ? ORDER BY seq DESC LIMIT 1', [companyId, dataType]))?.connection_id,
  };
}
