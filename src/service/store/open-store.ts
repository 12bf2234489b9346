// Which store the service runs on: the SQLite file in its data dir (the default), or a
// PostgreSQL database shared by any number of instances and workers. Given `admin`, the
// admin account exists once this returns (the caller says how to make it: bootstrap.ts).
import { join } from 'node:path';
import type { SettleLedger } from '../shared-rate-limit.js';
import { reconcileFiles } from './sqlite/attachment-files.js';
import { sqliteAsyncStore } from './sqlite/async-store.js';
import type { AsyncStore } from './async-store.js';
import type { CommitNotices } from './commit-notices.js';
import type { PoolCounts } from './monitoring.js';
import { openDatabase, type Db } from './sqlite/db.js';

export interface StoreChoice {
  dataDir: string;
  /** A postgres:// URL: the service runs on that database instead of <data-dir>/ferry.db. */
  database?: string;
  /** keyCheckValue() of the token-encryption key: every process on one PostgreSQL database must have the same. */
  keyCheck: string;
  /**
   * Finds or makes the admin account and returns its key (the service's; `ferry worker`
   * makes none). On PostgreSQL it runs under a lock, so instances starting together make one.
   */
  admin?: (store: AsyncStore) => Promise<string>;
  /** An idle PostgreSQL connection broke (the pool replaces it). */
  onIdleError?: (err: Error) => void;
}

export type OpenedStore = {
  store: AsyncStore;
  /** Empty without `admin`. */
  adminKey: string;
} & ({ kind: 'sqlite'; db: Db; dbFile: string } | {
  kind: 'postgres';
  database: string;
  /** Where instances sharing the database settle the per-key rate limit (service/shared-rate-limit.ts). */
  rateLedger: SettleLedger;
  /** The pool's connections and waiting requests now, for the metrics. */
  poolCounts: () => PoolCounts;
  /** Notices of events and deliveries committed by any process on the database (the event bus listens). */
  notices: CommitNotices;
});

export async function openStore(choice: StoreChoice): Promise<OpenedStore> {
  if (choice.database) return openPostgresStore(choice, choice.database);
  const dbFile = join(choice.dataDir, 'ferry.db');
  const db = openDatabase(dbFile);
  const store = sqliteAsyncStore(db);
  try {
    reconcileFiles(db);
    const adminKey = choice.admin ? await choice.admin(store) : '';
    return { kind: 'sqlite', db, dbFile, store, adminKey };
  } catch (err) {
    await store.close();
    throw err;
  }
}

async function openPostgresStore(choice: StoreChoice, database: string): Promise<OpenedStore> {
  // Loaded only here: the SQLite service (and the CLI's embedded target) never loads the driver.
  const [{ openPostgres, poolCounts }, { createPgStore }, { ADMIN_LOCK_KEY, withSessionLock }, { pgRateLedger }, { checkSharedKey }, { pgCommitNotices }] = await Promise.all([
    import('./pg/pool.js'), import('./pg/pg-store.js'), import('./pg/session-lock.js'), import('./pg/rate-ledger.js'), import('./pg/key-check.js'), import('./pg/notices.js'),
  ]);
  const pool = await openPostgres(database, choice.onIdleError ? { onIdleError: choice.onIdleError } : {});
  const store = createPgStore(pool);
  try {
    await checkSharedKey(pool, database, choice.keyCheck);
    // Instances starting at once: one makes the admin account, the others find it.
    const { admin } = choice;
    const adminKey = admin ? await withSessionLock(pool, ADMIN_LOCK_KEY, () => admin(store)) : '';
    return {
      kind: 'postgres', database, store, adminKey, rateLedger: pgRateLedger(pool), poolCounts: () => poolCounts(pool), notices: pgCommitNotices(database),
    };
  } catch (err) {
    await store.close();
    throw err;
  }
}
