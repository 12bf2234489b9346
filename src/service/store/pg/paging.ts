// A page plan (store/paging.ts, compiled for PostgreSQL by the pg modules' builders) run on
// PostgreSQL: the count and the rows in one read-only REPEATABLE READ transaction, so they
// agree, as SQLite's one read transaction makes them. A plan over rows that never change
// (a published generation's records) remembers its count and where pages start, as on
// SQLite (../fixed-scope.ts), so a deep page is a seek instead of an OFFSET scan.
//
// A table whose rows do change (companies) is paged by planPgPage: the count and the page in
// one statement, so one snapshot serves both, with no transaction's round trips. Past the
// first page, the rows before the page are never read whole: under a filter or an orderBy
// the count's own pass gathers the matches' keys in order; on the plain list the walk reads
// keys from the scope's index. Then the page's rows are read by key, and a deep page costs
// about what the first does (docs/performance.md, bench/store-postgres.mjs).
import type { PoolClient } from 'pg';
import { compileOrderBy, compileQuery } from '../../query/index.js';
import type { FieldResolver } from '../../query/types.js';
import { fixedScope, nearestStart, rememberStart } from '../fixed-scope.js';
import { planPage, type Page, type PagePlan, type PageRequest } from '../paging.js';
import { rollback, row, rows, type Queryable } from './query.js';

/** A table paged by planPgPage: its own rows (`*`), in scope, ordered by orderBy and then its key. */
export interface PgPagedTable {
  table: string;
  /**
   * A unique integer column, never NULL: the default order and the tie-breaker after
   * orderBy. An index on the scope's column and then the key (companies_client) lets the
   * plain list walk to a deep page in the index alone.
   */
  key: string;
  /** Fixed scope (ownership) with `?` placeholders. */
  scope: string;
  scopeParams: Array<string | number>;
  resolve: FieldResolver;
}

/** A page plan whose count and page are one statement: every row carries the count, and a page with no rows is one row of NULLs. */
export interface OneStatementPlan extends PagePlan {
  oneStatement: { sql: string; params: Array<string | number>; key: string };
}

/** PostgreSQL's largest array subscript: no array holds that many keys, so a page from there on is empty. */
const MAX_SUBSCRIPT = 2 ** 31 - 1;

/** Compiles a page request on a table into one statement; throws the query language's 400s. */
export function planPgPage(source: PgPagedTable, request: PageRequest): OneStatementPlan {
  const { table, key, scope, scopeParams, resolve } = source;
  const plan = planPage({ columns: '*', from: table, scope, scopeParams, resolve, defaultOrder: key, dialect: 'postgres' }, request);
  // The WHERE and ORDER BY planPage compiled, to build the one statement around them.
  const where = `(${scope}) AND (${compileQuery(request.query, resolve, 'postgres').sql})`;
  const orderBy = compileOrderBy(request.orderBy, resolve, 'postgres');
  const order = orderBy ? `${orderBy}, ${key}` : key;
  const { params, limit, offset } = plan;
  let oneStatement: OneStatementPlan['oneStatement'];
  if (offset === 0) {
    // The first page: the count, and beside it a walk over the page's own rows.
    oneStatement = {
      sql: `SELECT page.*, ferry_total FROM (SELECT count(*) AS ferry_total FROM ${table} WHERE ${where}) counted`
        + ` LEFT JOIN (SELECT * FROM ${table} WHERE ${where} ORDER BY ${order} LIMIT ?) page ON TRUE ORDER BY ${order}`,
      params: [...params, ...params, limit],
      key,
    };
  } else if (!orderBy && (request.query ?? '').trim() === '') {
    // A later page of the plain list: the walk past the rows before it reads keys alone,
    // from the scope's index (without the heap once vacuum has marked its pages all-visible),
    // then the page's rows are read by key. OFFSET past 2^53 rows is as empty as beyond it.
    const keys = `ARRAY(SELECT ${key} FROM ${table} WHERE ${where} ORDER BY ${key} LIMIT ? OFFSET ?)`;
    oneStatement = {
      sql: `SELECT ${table}.*, ferry_total FROM (SELECT count(*) AS ferry_total, ${keys} AS ferry_keys FROM ${table} WHERE ${where}) counted`
        + ` LEFT JOIN ${table} ON ${key} = ANY (ferry_keys) ORDER BY ${key}`,
      params: [...params, limit, Math.min(offset, Number.MAX_SAFE_INTEGER), ...params],
      key,
    };
  } else {
    // A later page under a filter or an orderBy, where a walk would read or sort every row
    // before the page after the count had read them all: one pass counts the matches and
    // gathers their keys in order (one sort of narrow keys), then the page's rows are read
    // by key. A slice past the end is empty.
    const keys = `(array_agg(${key} ORDER BY ${order}))[?::int : ?::int]`;
    oneStatement = {
      sql: `SELECT ${table}.*, ferry_total FROM (SELECT count(*) AS ferry_total, ${keys} AS ferry_keys FROM ${table} WHERE ${where}) counted`
        + ` LEFT JOIN ${table} ON ${key} = ANY (ferry_keys) ORDER BY array_position(ferry_keys, ${key})`,
      params: [Math.min(offset + 1, MAX_SUBSCRIPT), Math.min(offset + limit, MAX_SUBSCRIPT), ...params],
      key,
    };
  }
  return { ...plan, oneStatement };
}

export async function runPgPagePlan<Row>(db: Queryable, plan: PagePlan): Promise<Page<Row>> {
  if ('oneStatement' in plan) return readOneStatement<Row>(db, plan as OneStatementPlan);
  // Inside a transaction already (a client): its snapshot serves both statements.
  if (!('totalCount' in db)) return readPage<Row>(db, plan);
  const client = await db.connect();
  let broken = false;
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const page = await readPage<Row>(client, plan);
    await client.query('COMMIT');
    return page;
  } catch (err) {
    broken = await rollback(client, err);
    throw err;
  } finally {
    client.release(broken);
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

async function readOneStatement<Row>(db: Queryable, plan: OneStatementPlan): Promise<Page<Row>> {
  const { sql, params, key } = plan.oneStatement;
  const found = await rows<Record<string, unknown>>(db, sql, params);
  const total = Number(found[0]?.ferry_total ?? 0);
  const page = found.filter((r) => r[key] !== null).map(({ ferry_total: _total, ...r }) => r as Row);
  return { rows: page, total };
}
