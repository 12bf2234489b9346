// One paged SELECT for every list endpoint: the query language and orderBy are compiled
// to SQL, so filtering, counting and ordering happen in the database, never in JavaScript.
// A page request becomes a plan of two statements here; each store runs it
// (sqlite/paging.ts, pg/paging.ts).
import { compileOrderBy, compileQuery, type Dialect } from '../query/index.js';
import type { FieldResolver } from '../query/types.js';

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
  /**
   * The rows in scope never change once they can be read, and `seek` (a column among
   * `columns`) is a unique integer that is also the default order.
   */
  fixed?: { seek: string };
  /** The SQL the query language compiles to (default sqlite). */
  dialect?: Dialect;
}

export interface Page<Row> {
  rows: Row[];
  total: number;
}

/** A page's two statements, ready to run on any connection to the store (this thread's or a reader thread's). */
export interface PagePlan {
  countSql: string;
  rowsSql: string;
  params: Array<string | number>;
  limit: number;
  offset: number;
  /** A query or orderBy was given: the read may be costly, so it runs off the request thread. */
  heavy: boolean;
  /**
   * Set when the rows in scope never change once they can be read (the records of a
   * published generation): the count is remembered, and when the order is the source's own
   * `seek` column alone, pages start from remembered places (fixed-scope.ts).
   */
  fixed?: {
    seek: string;
    /** The page's statement starting after a seek value (`?` for it, then limit and offset); absent under an orderBy. */
    seekSql?: string;
  };
}

/** Compiles a page request into its statements; throws the query language's 400s. */
export function planPage(source: PagedSource, request: PageRequest): PagePlan {
  const filter = compileQuery(request.query, source.resolve, source.dialect);
  const orderBy = compileOrderBy(request.orderBy, source.resolve, source.dialect);
  const where = `(${source.scope}) AND (${filter.sql})`;
  const order = orderBy ? `${orderBy}, ${source.defaultOrder}` : source.defaultOrder;
  return {
    countSql: `SELECT count(*) AS n FROM ${source.from} WHERE ${where}`,
    rowsSql: `SELECT ${source.columns} FROM ${source.from} WHERE ${where} ORDER BY ${order} LIMIT ? OFFSET ?`,
    params: [...source.scopeParams, ...filter.params],
    limit: request.pageSize,
    offset: (request.page - 1) * request.pageSize,
    heavy: request.query !== undefined || request.orderBy !== undefined,
    ...(source.fixed ? {
      fixed: {
        seek: source.fixed.seek,
        ...(orderBy ? {} : { seekSql: `SELECT ${source.columns} FROM ${source.from} WHERE ${where} AND ${source.fixed.seek} > ? ORDER BY ${order} LIMIT ? OFFSET ?` }),
      },
    } : {}),
  };
}
