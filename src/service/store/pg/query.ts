// How the PostgreSQL store talks to its pool: SQL written with `?` placeholders, as the
// SQLite modules and the query compiler write it, numbered `$1, $2…` once per statement
// text; rows typed as the SQLite store returns them (types.ts in pool.ts).
import type { Pool, PoolClient, QueryResultRow } from 'pg';
import { numberPlaceholders } from '../../query/placeholders.js';
import { isDatabaseLost } from './unavailable.js';

/** The pool, or the client a transaction holds. */
export type Queryable = Pool | PoolClient;

/** Statement texts numbered so far (the same few dozen texts, over and over). */
const numbered = new Map<string, string>();

function text(sql: string): string {
  let out = numbered.get(sql);
  if (out === undefined) {
    out = numberPlaceholders(sql);
    numbered.set(sql, out);
  }
  return out;
}

export async function rows<R extends QueryResultRow>(db: Queryable, sql: string, params: readonly unknown[] = []): Promise<R[]> {
  return (await db.query<R>(text(sql), params as unknown[])).rows;
}

export async function row<R extends QueryResultRow>(db: Queryable, sql: string, params: readonly unknown[] = []): Promise<R | undefined> {
  return (await rows<R>(db, sql, params))[0];
}

/** Runs a statement; returns the rows it changed. */
export async function run(db: Queryable, sql: string, params: readonly unknown[] = []): Promise<number> {
  return (await db.query(text(sql), params as unknown[])).rowCount ?? 0;
}

/**
 * Ends a failed transaction on `client`; true when the client must be destroyed rather
 * than pooled. A connection the server ended is not asked to roll back: pg would queue the
 * ROLLBACK on it and never answer, holding up whoever waits for this transaction.
 */
export async function rollback(client: PoolClient, err: unknown): Promise<boolean> {
  if (isDatabaseLost(err)) return true;
  try {
    await client.query('ROLLBACK');
    return false;
  } catch {
    return true; // a connection that cannot even roll back is not given back to the pool
  }
}
