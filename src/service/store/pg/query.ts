// How the PostgreSQL store talks to its pool: SQL written with `?` placeholders, as the
// SQLite modules and the query compiler write it, numbered `$1, $2…` once per statement
// text, and prepared once it repeats; rows typed as the SQLite store returns them (types.ts in pool.ts).
import { Pool, type PoolClient, type QueryResult, type QueryResultRow } from 'pg';
import { numberPlaceholders } from '../../query/placeholders.js';
import { isDatabaseLost } from './unavailable.js';

/** The pool, or the client a transaction holds. */
export type Queryable = Pool | PoolClient;

/**
 * A statement text as sent: numbered once, and given a name (a prepared statement on each
 * connection) once it has been used a few times. The server then parses and plans it once
 * per connection instead of on every call: parse, analysis and planning were a fifth of the
 * server's CPU in the main job, whose few dozen texts repeat for every company.
 */
interface Statement {
  text: string;
  uses: number;
  name?: string;
  /** Never named again: the server refused its prepared form (see `refused`). */
  unnamed?: true;
}

/** Uses before a text is prepared: a text met once or twice (a rare query's filter) stays unnamed. */
const PREPARE_AFTER = 3;
/** Named texts per thread at most: each is a prepared statement on every connection of its pool. */
const MAX_PREPARED = 200;

/** Statement texts met so far (the same few dozen texts, over and over). */
const statements = new Map<string, Statement>();
let prepared = 0;
/** Off for good in this thread once a connection lost a statement it had prepared (a pooler in transaction mode). */
let preparing = true;

function statementOf(sql: string): Statement {
  let found = statements.get(sql);
  if (found === undefined) {
    found = { text: numberPlaceholders(sql), uses: 0 };
    statements.set(sql, found);
  }
  found.uses += 1;
  if (preparing && !found.unnamed && found.name === undefined && found.uses >= PREPARE_AFTER && prepared < MAX_PREPARED) found.name = `ferry_${++prepared}`;
  return found;
}

/**
 * The two ways a prepared statement can fail where its text alone would not, each turned
 * off from then on: a statement prepared on a connection the next call does not reach
 * (PgBouncer in transaction mode before 1.21: 26000), and a plan whose columns a migration
 * changed while this process ran (a rolling upgrade: 0A000).
 */
function refused(found: Statement, err: unknown): boolean {
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  if (code === '26000') {
    preparing = false;
    for (const each of statements.values()) delete each.name;
    return true;
  }
  if (code === '0A000' && typeof message === 'string' && message.includes('cached plan must not change result type')) {
    found.unnamed = true;
    delete found.name;
    return true;
  }
  return false;
}

/**
 * Sends a statement, prepared once it repeats. A prepared form the server refused is sent
 * again as text when the pool itself was asked; in a transaction the error stands (the
 * transaction is over) and the caller's retry finds the text unnamed.
 */
async function send<R extends QueryResultRow>(db: Queryable, sql: string, params: readonly unknown[]): Promise<QueryResult<R>> {
  const found = statementOf(sql);
  const values = params as unknown[];
  if (found.name === undefined) return db.query<R>(found.text, values);
  try {
    return await db.query<R>({ name: found.name, text: found.text, values });
  } catch (err) {
    if (refused(found, err) && db instanceof Pool) return db.query<R>(found.text, values);
    throw err;
  }
}

export async function rows<R extends QueryResultRow>(db: Queryable, sql: string, params: readonly unknown[] = []): Promise<R[]> {
  return (await send<R>(db, sql, params)).rows;
}

export async function row<R extends QueryResultRow>(db: Queryable, sql: string, params: readonly unknown[] = []): Promise<R | undefined> {
  return (await rows<R>(db, sql, params))[0];
}

/** Runs a statement; returns the rows it changed. */
export async function run(db: Queryable, sql: string, params: readonly unknown[] = []): Promise<number> {
  return (await send(db, sql, params)).rowCount ?? 0;
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
