// Counting what a pool sends (statement-count.ts), installed only when the count is on:
// each connection's query() is wrapped as the pool opens it, so the pool's own queries,
// transactions' BEGIN and COMMIT and a COPY are all seen where they leave.
import type { Pool, PoolClient } from 'pg';
import { WRITES, type StatementTally } from '../statement-count.js';

/** The SQL of whatever query() was given: a text, a config, or a submittable such as a COPY. */
function sqlOf(query: unknown): string {
  if (typeof query === 'string') return query;
  const { text, sql } = (query ?? {}) as { text?: unknown; sql?: unknown };
  return typeof text === 'string' ? text : typeof sql === 'string' ? sql : '';
}

function countClient(client: PoolClient, tally: StatementTally): void {
  let inTransaction = false;
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as { query: unknown }).query = (...args: unknown[]) => {
    const sql = sqlOf(args[0]);
    const word = /^\s*(\w+)/.exec(sql)?.[1]?.toUpperCase();
    let commit = false;
    if (word === 'BEGIN') inTransaction = true;
    else if (word === 'COMMIT' || word === 'ROLLBACK') {
      commit = word === 'COMMIT' && inTransaction;
      inTransaction = false;
    } else commit = !inTransaction && WRITES.test(sql);
    tally.count(sql, commit);
    return query(...args);
  };
}

export function countPoolStatements(pool: Pool, tally: StatementTally): void {
  pool.on('connect', (client) => countClient(client, tally));
  // The last counts are written once the pool has ended (a thread may end right after).
  const end = pool.end.bind(pool) as (...args: unknown[]) => unknown;
  pool.end = ((...args: unknown[]) => {
    const ended = end(...args);
    void Promise.resolve(ended).catch(() => undefined).finally(() => tally.flush());
    return ended;
  }) as Pool['end'];
}
