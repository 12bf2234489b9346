// A page plan (store/paging.ts, compiled for PostgreSQL by the pg modules' builders) run on
// PostgreSQL: the count and the rows in one read-only REPEATABLE READ transaction, so they
// agree, as SQLite's one read transaction makes them. A plan over rows that never change
// (a published generation's records) remembers its count and where pages start, as on
// SQLite (../fixed-scope.ts), so a deep page is a seek instead of an OFFSET scan.
import type { PoolClient } from 'pg';
import { fixedScope, nearestStart, rememberStart } from '../fixed-scope.js';
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

/** What this process remembers of fixed scopes (keys name the company, data type and generation). */
const REMEMBERED = {};

async function readPage<Row>(db: PoolClient, plan: PagePlan): Promise<Page<Row>> {
  const count = async () => Number((await row<{ n: number | string }>(db, plan.countSql, plan.params))?.n ?? 0);
  const scope = plan.fixed ? fixedScope(REMEMBERED, `${plan.countSql}\u0000${plan.params.join('\u0000')}`) : undefined;
  const total = scope ? (scope.total ??= await count()) : await count();
  if (plan.offset >= total) return { rows: [], total };
  const seek = plan.fixed;
  if (!scope || !seek?.seekSql) return { rows: await rows(db, plan.rowsSql, [...plan.params, plan.limit, plan.offset]) as Row[], total };
  const start = nearestStart(scope, plan.offset);
  const found = await rows<Record<string, unknown>>(db, seek.seekSql, [...plan.params, start.after, plan.limit, plan.offset - start.at]);
  const last = found[found.length - 1];
  if (last && typeof last[seek.seek] === 'number') rememberStart(scope, plan.offset + found.length, last[seek.seek] as number);
  return { rows: found as Row[], total };
}
