// Runs a page plan (../paging.ts) on a SQLite connection: the count and the page in one
// read transaction, starting from remembered places where the rows never change
// (../fixed-scope.ts).
import type { Db } from './db.js';
import { fixedScope, nearestStart, rememberStart } from '../fixed-scope.js';
import { planPage, type Page, type PagedSource, type PagePlan, type PageRequest } from '../paging.js';
import { prepared } from './statements.js';

/** Runs a plan: the count and the page, in one read transaction so they agree. */
export function runPagePlan<Row>(db: Db, plan: PagePlan): Page<Row> {
  return db.transaction(() => {
    const count = () => (prepared(db, plan.countSql).get(...plan.params) as { n: number }).n;
    const scope = plan.fixed ? fixedScope(db, `${plan.countSql}\u0000${plan.params.join('\u0000')}`) : undefined;
    const total = scope ? (scope.total ??= count()) : count();
    if (plan.offset >= total) return { rows: [], total };
    const seek = plan.fixed;
    if (!scope || !seek?.seekSql) return { rows: prepared(db, plan.rowsSql).all(...plan.params, plan.limit, plan.offset) as Row[], total };
    const start = nearestStart(scope, plan.offset);
    const rows = prepared(db, seek.seekSql).all(...plan.params, start.after, plan.limit, plan.offset - start.at) as Row[];
    const last = rows[rows.length - 1] as Record<string, unknown> | undefined;
    if (last && typeof last[seek.seek] === 'number') rememberStart(scope, plan.offset + rows.length, last[seek.seek] as number);
    return { rows, total };
  })();
}

export function selectPage<Row>(db: Db, source: PagedSource, request: PageRequest): Page<Row> {
  return runPagePlan<Row>(db, planPage(source, request));
}
