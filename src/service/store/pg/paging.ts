// A page plan (store/paging.ts, compiled for PostgreSQL by the pg modules' builders) run on
// PostgreSQL: the count and the rows in one read-only REPEATABLE READ transaction, so they
// agree, as SQLite's one read transaction makes them.
import type { PoolClient } from 'pg';
import type { Page, PagePlan } from '../paging.js';
import { row, rows, type Queryable } from './query.js';

export async function runPgPagePlan<Row>(db: Queryable, plan: PagePlan): Promise<Page<Row>> {
  // Inside a transaction already (a client): its snapshot serves both statements.
  if (!('totalCount' in db)) return readPage<Row>(db, plan);
  const client = await db.connect();
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const page = await readPage<Row>(client, plan);
    await client.query('COMMIT');
    return page;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

async function readPage<Row>(db: PoolClient, plan: PagePlan): Promise<Page<Row>> {
  const total = (await row<{ n: number | string }>(db, plan.countSql, plan.params))?.n ?? 0;
  const count = Number(total);
  if (plan.offset >= count) return { rows: [], total: count };
  return { rows: await rows(db, plan.rowsSql, [...plan.params, plan.limit, plan.offset]) as Row[], total: count };
}
