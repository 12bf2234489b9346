// Two stores on one database, each a worker's, as the lease and job tests open them: on
// SQLite two connections to one file in a temp dir, on PostgreSQL two pools on a fresh database.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { AsyncStore } from '../../src/service/store/async-store.js';
import { createPgStore } from '../../src/service/store/pg/pg-store.js';
import { openPostgres } from '../../src/service/store/pg/pool.js';
import { sqliteAsyncStore } from '../../src/service/store/sqlite/async-store.js';
import { openDatabase } from '../../src/service/store/sqlite/db.js';
import { freshDatabase } from '../helpers/postgres.js';
import { tempDir } from '../helpers/service.js';

/** Two stores on one database, and what closes them. */
export type OpenTwoWorkers = () => Promise<{ stores: [AsyncStore, AsyncStore]; close(): Promise<void> }>;

export const twoSqliteWorkers = (prefix: string): OpenTwoWorkers => async () => {
  const dir = tempDir(prefix);
  const stores: [AsyncStore, AsyncStore] = [sqliteAsyncStore(openDatabase(join(dir, 'ferry.db'))), sqliteAsyncStore(openDatabase(join(dir, 'ferry.db')))];
  return {
    stores,
    async close() {
      for (const store of stores) await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
};

export const twoPgWorkers: OpenTwoWorkers = async () => {
  const url = await freshDatabase();
  const stores: [AsyncStore, AsyncStore] = [createPgStore(await openPostgres(url, { max: 4 })), createPgStore(await openPostgres(url, { max: 4 }))];
  return {
    stores,
    async close() {
      for (const store of stores) await store.close();
    },
  };
};
