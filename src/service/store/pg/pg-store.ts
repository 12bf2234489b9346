// The PostgreSQL store: every method of the asynchronous store contract over one pool,
// composed from the groups beside it. A transaction holds one client from BEGIN to COMMIT
// and hands its work the same methods bound to that client; the isolation is PostgreSQL's
// default (READ COMMITTED), and the methods that must not race take their own row locks,
// leases or advisory lock (see each group), as the contract suite checks across pools;
// the reads that read-check-write code decides on lock what they decide on (decision-locks.ts).
//
// As with SQLite (../sqlite/async-store.ts), calls on the outer store made from inside a
// transaction's work (its async context: the helpers it calls) join that transaction, on
// its client; a task the work left running after the commit goes back to the pool.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Pool, PoolClient } from 'pg';
import { isPlanBuilder, type AsyncStore } from '../async-store.js';
import { attachmentMethods } from './attachments.js';
import { clientMethods } from './clients.js';
import { companyMethods } from './companies.js';
import { connectionMethods } from './connections.js';
import { datasetMethods } from './datasets.js';
import { decisionLocks } from './decision-locks.js';
import { groupedMethods } from './grouped.js';
import { jobMethods, newQueueFloor } from './jobs.js';
import { deliveryMethods } from './deliveries.js';
import { eventMethods } from './events.js';
import { monitoringMethods } from './monitoring.js';
import { runPgPagePlan } from './paging.js';
import { pullMethods } from './pulls.js';
import { pushMethods } from './pushes.js';
import { rollback, type Queryable } from './query.js';
import { settingMethods } from './settings.js';
import { versionMethods } from './version.js';

const closeInside = (): Promise<void> => Promise.reject(new Error('A transaction closes when its work ends; close the store itself.'));

/** The transaction a piece of work runs in; `open` falls when it has committed or rolled back. */
interface Open {
  tx: AsyncStore;
  open: boolean;
}

export function createPgStore(pool: Pool): AsyncStore {
  const within = new AsyncLocalStorage<Open>();
  const joined = (): Open | undefined => {
    const current = within.getStore();
    return current?.open ? current : undefined;
  };

  // Closing twice is closing once, as with SQLite (pg's pool throws on a second end()).
  let closing: Promise<void> | undefined;
  // Disabled once closed, so later promises in the process stop carrying its context.
  const closePool = (): Promise<void> => (closing ??= pool.end().finally(() => within.disable()));

  // Where claims read the queue from: one for the store, whichever client claims.
  const floor = newQueueFloor();

  /** What a client (or the pool) answers, whether in a transaction or not. */
  const methodsOf = (db: Queryable): { store: Omit<AsyncStore, 'transaction' | 'close'>; decided: Parameters<typeof decisionLocks>[1] } => {
    const companies = companyMethods(db);
    const pulls = pullMethods(db);
    const events = eventMethods(db);
    const jobs = jobMethods(db, floor);
    const runPage: AsyncStore['runPage'] = (plan) => runPgPagePlan(db, plan);
    const store = {
      ...clientMethods(db),
      ...companies,
      ...connectionMethods(db),
      ...settingMethods(db),
      ...versionMethods(db),
      ...monitoringMethods(db),
      ...datasetMethods(db),
      ...pulls,
      ...jobs,
      ...groupedMethods(db),
      ...pushMethods(db),
      ...attachmentMethods(db),
      ...events,
      ...deliveryMethods(db),
      runPage,
    };
    return { store, decided: { ...companies, ...pulls, ...events, ...jobs } };
  };

  // A pooled client's methods are made once, not per transaction: the pool hands the same
  // few clients out again and again, and making the hundred-odd methods was a visible share
  // of a short transaction's cost. What is a transaction's own (the rows its decisions
  // locked, nesting into itself) is laid over them each time.
  const ofClient = new WeakMap<PoolClient, ReturnType<typeof methodsOf>>();
  const inTransaction = (client: PoolClient): AsyncStore => {
    let made = ofClient.get(client);
    if (!made) ofClient.set(client, made = methodsOf(client));
    const tx = Object.create(made.store) as AsyncStore;
    Object.assign(tx, {
      // Inside a transaction, the reads a decision rests on lock what they decide on (decision-locks.ts).
      ...decisionLocks(client, made.decided),
      // Nested: the work joins the transaction it is already in.
      transaction: (work: (inner: AsyncStore) => Promise<unknown>) => work(tx),
      close: closeInside,
    });
    return tx;
  };

  async function transaction<T>(work: (tx: AsyncStore) => Promise<T>): Promise<T> {
    const current = joined();
    if (current) return work(current.tx);
    const client = await pool.connect();
    let broken = false;
    const mark: Open = { tx: inTransaction(client), open: true };
    try {
      await client.query('BEGIN');
      const result = await within.run(mark, () => work(mark.tx));
      mark.open = false;
      await client.query('COMMIT');
      return result;
    } catch (err) {
      mark.open = false;
      broken = await rollback(client, err);
      throw err;
    } finally {
      client.release(broken);
    }
  }

  const onPool: AsyncStore = { ...methodsOf(pool).store, transaction: (work) => transaction(work), close: closePool };
  const outer: Record<string, unknown> = {};
  for (const [name, method] of Object.entries(onPool) as Array<[keyof AsyncStore, (...args: unknown[]) => unknown]>) {
    outer[name] = isPlanBuilder(name) || name === 'transaction' || name === 'close'
      ? method
      : (...args: unknown[]) => {
        const current = joined();
        return current ? (current.tx[name] as (...a: unknown[]) => unknown)(...args) : method(...args);
      };
  }
  return outer as unknown as AsyncStore;
}
