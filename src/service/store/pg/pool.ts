// Opens a PostgreSQL store: a pg Pool on the given URL, checked by connecting once, with
// the schema brought up to date (migrate.ts). A database that cannot be reached, or a server
// too old for the statements, fails here, at start, with one line naming where and why
// (unavailable.ts).
import { Pool, types, type CustomTypesConfig } from 'pg';
import type { PoolCounts } from '../monitoring.js';
import { statementTally } from '../statement-count.js';
import { countPoolStatements } from './count-statements.js';
import { markDriverError, markPoolErrors } from './driver-errors.js';
import { migratePostgres } from './migrate.js';
import { parseTarget, tooOld, unavailable, type Target } from './unavailable.js';

/** Long enough for a database across a network, short enough that a wrong URL fails fast. */
export const CONNECT_TIMEOUT_MS = 5_000;

export interface PostgresOptions {
  /** Connections the pool may open; each ferry process holds at most this many. */
  max?: number;
  /**
   * An idle connection broke (the server restarted, a proxy dropped it). The pool discards
   * it and opens another on the next query; without a listener the error would end the process.
   */
  onIdleError?: (err: Error) => void;
  /** Where the migrations are; the ones beside migrate.ts unless a test says otherwise. */
  migrationsDir?: string;
}

/**
 * Rows as the SQLite store returns them: bigint keys (seq, generations) as numbers (they
 * stay far below 2^53) and json columns as their text, spliced or parsed by the callers as
 * they are today. Per pool, not pg's global table, so nothing else in the process changes.
 */
export const ROW_TYPES: CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    if (oid === types.builtins.INT8) return (value: string) => Number(value);
    if (oid === types.builtins.JSON) return (value: string) => value;
    return types.getTypeParser(oid, format ?? 'text');
  }) as CustomTypesConfig['getTypeParser'],
};

export async function openPostgres(url: string, options: PostgresOptions = {}): Promise<Pool> {
  const target = parseTarget(url);
  const pool = new Pool({
    connectionString: url,
    max: options.max ?? 10,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    application_name: 'ferry',
    types: ROW_TYPES,
  });
  markPoolErrors(pool);
  // Only for a bench that asks (FERRY_STATEMENT_COUNTS): otherwise nothing is wrapped.
  const tally = statementTally();
  if (tally) countPoolStatements(pool, tally);
  pool.on('error', (err) => options.onIdleError?.(markDriverError(err)));
  // A client checked out (in a transaction, between its statements) whose connection the
  // server ends emits 'error'; unheard, that would end the process or thread. The statement
  // in flight or the next one fails with the cause, which is where it is handled.
  pool.on('connect', (client) => client.on('error', () => undefined));
  let version: number;
  try {
    const client = await pool.connect();
    try {
      version = Number((await client.query<{ server_version_num: string }>('SHOW server_version_num')).rows[0]!.server_version_num);
    } finally {
      client.release();
    }
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw unavailable(err, target, CONNECT_TIMEOUT_MS);
  }
  try {
    checkServerVersion(version, target);
    await migratePostgres(pool, options.migrationsDir);
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw err;
  }
  return pool;
}

/** The oldest server the statements run on: the records' write splits its page with string_to_table (14). */
export const MIN_SERVER_VERSION = 140000;

/** Refuses, at start and naming both versions, a server older than MIN_SERVER_VERSION (server_version_num). */
export function checkServerVersion(version: number, target: Target): void {
  if (version < MIN_SERVER_VERSION) throw tooOld(version, MIN_SERVER_VERSION, target);
}

/** The pool's connections and waiting requests, for the metrics. */
export function poolCounts(pool: Pool): PoolCounts {
  return { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount };
}
