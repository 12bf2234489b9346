// The SQLite store: every method of the Store interface bound to one database handle. Each
// area module listed here exports the Store's methods of its area and nothing else, named
// as in the Store, each taking the handle first (the plan builders, which read nothing,
// take none): a new method is one more function there, and tsc checks that every Store
// method is found, with its signature.
import type { Statement } from 'better-sqlite3';
import { isPlanBuilder, type PlanBuilder } from '../async-store.js';
import type { Store } from '../store.js';
import { settleFiles } from './attachment-files.js';
import * as attachments from './attachments.js';
import * as clients from './clients.js';
import * as companies from './companies.js';
import * as connections from './connections.js';
import * as dataConfigs from './data-configs.js';
import * as datasets from './datasets.js';
import type { Db } from './db.js';
import * as events from './events.js';
import * as grouped from './grouped.js';
import * as jobs from './jobs.js';
import * as monitoring from './monitoring.js';
import { runPagePlan } from './paging.js';
import * as pulls from './pulls.js';
import * as pushes from './pushes.js';
import * as syncSettings from './sync-settings.js';
import * as version from './version.js';
import * as deliveries from './webhook-deliveries.js';

/** An area module's exports as the Store's methods: the handle bound, plan builders as they are. */
type Bound<M> = {
  [K in keyof M]: K extends PlanBuilder ? M[K] : M[K] extends (db: Db, ...args: infer A) => infer R ? (...args: A) => R : never;
};

/** A module that exports nothing but Store methods: a helper exported beside them would become a method too. */
type AreaModule<M> = { [K in keyof M]: K extends keyof Store ? M[K] : never };

function bindArea<M extends AreaModule<M>>(db: Db, area: M): Bound<M> {
  const methods: Record<string, unknown> = {};
  for (const [name, fn] of Object.entries(area) as Array<[string, (db: Db, ...args: unknown[]) => unknown]>) {
    methods[name] = isPlanBuilder(name) ? fn : fn.bind(undefined, db);
  }
  return methods as Bound<M>;
}

export function createSqliteStore(db: Db): Store {
  return {
    ...bindArea(db, attachments),
    ...bindArea(db, clients),
    ...bindArea(db, companies),
    ...bindArea(db, connections),
    ...bindArea(db, dataConfigs),
    ...bindArea(db, datasets),
    ...bindArea(db, events),
    ...bindArea(db, grouped),
    ...bindArea(db, jobs),
    ...bindArea(db, monitoring),
    ...bindArea(db, pulls),
    ...bindArea(db, pushes),
    ...bindArea(db, syncSettings),
    ...bindArea(db, version),
    ...bindArea(db, deliveries),
    // The one method over two areas (store.ts says why), so no area module holds it.
    completeGenerations: (companyId, generations) => {
      const replaced = generations.map((g) => datasets.publishGeneration(db, companyId, g.dataType, g.generation, g.syncId, g.completed));
      const last = generations.at(-1);
      if (!last) return replaced;
      // Each connection's last sync as its last generation given left it; the company's (written last) as the last of all.
      const byConnection = new Map(generations.map((g) => [g.connectionId, g.completed]));
      byConnection.delete(last.connectionId);
      for (const [connectionId, completed] of byConnection) connections.setLastSync(db, connectionId, companyId, completed);
      connections.setLastSync(db, last.connectionId, companyId, last.completed);
      return replaced;
    },
    runPage: (plan) => runPagePlan(db, plan),
    transaction: immediateTransactions(db),
    close: () => {
      if (db.open) db.close();
    },
  };
}

/**
 * BEGIN IMMEDIATE … COMMIT around `work`, with the three statements prepared once (on first
 * use: a read-only handle never needs them). better-sqlite3's db.transaction(work) builds
 * four wrapper functions on every call, and every request and every pull writes in one.
 * A transaction inside another is a savepoint, as db.transaction makes it. Once it has
 * ended, attachment files follow their rows (attachment-files.ts).
 */
function immediateTransactions(db: Db): <T>(work: () => T) => T {
  let statements: { begin: Statement; commit: Statement; rollback: Statement } | undefined;
  return <T>(work: () => T): T => {
    if (db.inTransaction) return db.transaction(work)();
    statements ??= { begin: db.prepare('BEGIN IMMEDIATE'), commit: db.prepare('COMMIT'), rollback: db.prepare('ROLLBACK') };
    statements.begin.run();
    try {
      const result = work();
      if (result instanceof Promise) throw new TypeError('Transaction function cannot return a promise');
      statements.commit.run();
      return result;
    } catch (err) {
      if (db.inTransaction) statements.rollback.run();
      throw err;
    } finally {
      settleFiles(db);
    }
  };
}
