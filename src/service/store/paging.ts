// One paged SELECT for every list endpoint: the query language and orderBy are compiled
// to SQL, so filtering, counting and ordering happen in SQLite, never in JavaScript.
import { compileOrderBy, compileQuery } from '../query/index.js';
import type { FieldResolver } from '../query/types.js';
import type { Db } from './db.js';
import { prepared } from './statements.js';

export interface PageRequest {
  page: number;
  pageSize: number;
  query?: string;
  orderBy?: string;
}

export interface PagedSource {
  /** Columns to select, e.g. `c.*`. */
  columns: string;
  /** FROM clause body, e.g. `companies c`. */
  from: string;
  /** Fixed scope (ownership, parent id) with `?` placeholders. */
  scope: string;
  scopeParams: Array<string | number>;
  resolve: FieldResolver;
  /** Stable creation order, used alone by default and as the tie-breaker after orderBy. */
  defaultOrder: string;
}

export interface Page<Row> {
  rows: Row[];
  total: number;
}

export function selectPage<Row>(db: Db, source: PagedSource, request: PageRequest): Page<Row> {
  const filter = compileQuery(request.query, source.resolve);
  const orderBy = compileOrderBy(request.orderBy, source.resolve);
  const where = `(${source.scope}) AND (${filter.sql})`;
  const params = [...source.scopeParams, ...filter.params];
  const order = orderBy ? `${orderBy}, ${source.defaultOrder}` : source.defaultOrder;
  const total = (prepared(db, `SELECT count(*) AS n FROM ${source.from} WHERE ${where}`).get(...params) as { n: number }).n;
  const offset = (request.page - 1) * request.pageSize;
  const rows = offset >= total
    ? []
    : (prepared(db, `SELECT ${source.columns} FROM ${source.from} WHERE ${where} ORDER BY ${order} LIMIT ? OFFSET ?`)
        .all(...params, request.pageSize, offset) as Row[]);
  return { rows, total };
}
