// Which store the service runs on: the SQLite file in its data dir (the default), or a
// PostgreSQL database shared by any number of instances and workers. Either way the
// admin account exists once this returns.
import { join } from 'node:path';
import type { Clock } from '../../lib/clock.js';
import type { SettleLedger } from '../shared-rate-limit.js';
import { ensureAdmin } from '../bootstrap.js';
import { reconcileFiles } from './attachment-files.js';
import { sqliteAsyncStore, type AsyncStore } from './async-store.js';
import { openDatabase, type Db } from './db.js';

export interface StoreChoice {
  dataDir: string;
  /** A postgres:// URL: the service runs on that database instead of <data-dir>/ferry.db. */
  database?: string;
  clock: Clock;
  /** keyCheckValue() of the token-encryption key: every process on one PostgreSQL database must have the same. */
  keyCheck: string;
  /** Make the admin account and write its key into the data dir (not for `ferry worker`). */
  admin?: boolean;
  /** An idle PostgreSQL connection broke (the pool replaces it). */
  onIdleError?: (err: Error) => void;
}

export type OpenedStore = {
  store: AsyncStore;
  /** Empty when the choice said admin: false. */
  adminKey: string;
} & ({ kind: 'sqlite'; db: Db; dbFile: string } | {
  kind: 'postgres';
  database: string;
  /** Where instances sharing the database settle the per-key rate limit (service/shared-rate-limit.ts). */
  rateLedger: SettleLedger;
});

export async function openStore(choice: StoreChoice): Promise<OpenedStore> {
  if (choice.database) return openPostgresStore(choice, choice.database);
  const dbFile = join(choice.dataDir, 'ferry.db');
  const db = openDatabase(dbFile);
  const store = sqliteAsyncStore(db);
  try {
    reconcileFiles(db);
    const adminKey = choice.admin === false ? '' : await ensureAdmin(store, choice.dataDir, choice.clock);
    return { kind: 'sqlite', db, dbFile, store, adminKey };
  } catch (err) {
    await store.close();
    throw err;
  }
}

async function openPostgresStore(choice: StoreChoice, database: string): Promise<OpenedStore> {
  // Loaded only here: the SQLite service (and the CLI's embedded target) never loads the driver.
  const [{ openPostgres }, { createPgStore }, { ADMIN_LOCK_KEY, withSessionLock }, { pgRateLedger }, { checkSharedKey }] = await Promise.all([
    import('./pg/pool.js'), import('./pg/pg-store.js'), import('./pg/session-lock.js'), import('./pg/rate-ledger.js'), import('./pg/key-check.js'),
  ]);
  const pool = await openPostgres(database, choice.onIdleError ? { onIdleError: choice.onIdleError } : {});
  const store = createPgStore(pool);
  try {
    await checkSharedKey(pool, database, choice.keyCheck);
    // Instances starting at once: one makes the admin account, the others find it.
    const adminKey = choice.admin === false ? '' : await withSessionLock(pool, ADMIN_LOCK_KEY, () => ensureAdmin(store, choice.dataDir, choice.clock));
    return { kind: 'postgres', database, store, adminKey, rateLedger: pgRateLedger(pool) };
  } catch (err) {
    await store.close();
    throw err;
  }
}
