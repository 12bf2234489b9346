// The PostgreSQL store: every method of the asynchronous store contract over one pool,
// composed from the groups beside it. A transaction holds one client from BEGIN to COMMIT
// and hands its work the same methods bound to that client; the isolation is PostgreSQL's
// default (READ COMMITTED), and the methods that must not race take their own row locks,
// leases or advisory lock (see each group), as the contract suite checks across pools.
import type { Pool } from 'pg';
import type { AsyncStore } from '../async-store.js';
import { attachmentMethods } from './attachments.js';
import { clientMethods } from './clients.js';
import { companyMethods } from './companies.js';
import { connectionMethods } from './connections.js';
import { datasetMethods } from './datasets.js';
import { deliveryMethods } from './deliveries.js';
import { eventMethods } from './events.js';
import { runPgPagePlan } from './paging.js';
import { pullMethods } from './pulls.js';
import { pushMethods } from './pushes.js';
import type { Queryable } from './query.js';
import { settingMethods } from './settings.js';
import { versionMethods } from './version.js';

export function createPgStore(pool: Pool): AsyncStore {
  const bind = (db: Queryable, inTransaction: boolean): AsyncStore => {
    const store: AsyncStore = {
      ...clientMethods(db),
      ...companyMethods(db),
      ...connectionMethods(db),
      ...settingMethods(db),
      ...versionMethods(db),
      ...datasetMethods(db),
      ...pullMethods(db),
      ...pushMethods(db),
      ...attachmentMethods(db),
      ...eventMethods(db),
      ...deliveryMethods(db),
      runPage: (plan) => runPgPagePlan(db, plan),
      // Nested: the work joins the transaction it is already in.
      transaction: inTransaction ? (work) => work(store) : (work) => transaction(pool, work),
      close: inTransaction ? () => Promise.reject(new Error('A transaction closes when its work ends; close the store itself.')) : () => pool.end(),
    };
    return store;
  };

  async function transaction<T>(on: Pool, work: (tx: AsyncStore) => Promise<T>): Promise<T> {
    const client = await on.connect();
    let broken = false;
    try {
      await client.query('BEGIN');
      const result = await work(bind(client, true));
      await client.query('COMMIT');
      return result;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {
        broken = true; // a connection that cannot even roll back is not given back to the pool
      });
      throw err;
    } finally {
      client.release(broken);
    }
  }

  return bind(pool, false);
}
