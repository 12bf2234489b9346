// The store as a service spread over processes needs it: every method returns a promise,
// since PostgreSQL answers over a socket. The shape is the synchronous Store's (store.ts),
// method for method, so both implementations answer the same contract suite
// (test/store/contract/): `sqliteAsyncStore` (sqlite/async-store.ts) over the SQLite
// modules, and the PostgreSQL store (pg/) over a pool.
//
// Page-plan builders stay synchronous (they only compile SQL), except recordsPage, which
// reads the fields the data type has shown so far. A transaction hands its work a store
// bound to it (`tx`); its calls join the transaction, and calls from anywhere else wait
// until it has committed.
import type { Page, PagePlan } from './paging.js';
import type { Store } from './store.js';

type Promised<F> = F extends (...args: infer A) => infer R ? (...args: A) => Promise<R> : never;

/** Compile SQL only: the same in both stores' shapes, no database read. */
const PLAN_BUILDERS = ['companiesPage', 'connectionsPage', 'pullsPage', 'pushesPage', 'webhookDeliveriesPage'] as const;
export type PlanBuilder = (typeof PLAN_BUILDERS)[number];
const planBuilders: ReadonlySet<string> = new Set(PLAN_BUILDERS);
type Special = PlanBuilder | 'runPage' | 'transaction' | 'close';

export type AsyncRepository = { [K in Exclude<keyof Store, Special>]: Promised<Store[K]> };

export interface AsyncStore extends AsyncRepository, Pick<Store, PlanBuilder> {
  runPage<Row>(plan: PagePlan): Promise<Page<Row>>;
  /** Runs `work` as one transaction that takes the write lock before it reads; `tx` is the store inside it. */
  transaction<T>(work: (tx: AsyncStore) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** A plan builder takes no database, and answers at once in both shapes: the stores pass it on as it is. */
export function isPlanBuilder(name: string): name is PlanBuilder {
  return planBuilders.has(name);
}
