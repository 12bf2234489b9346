// The store contract: the same scenario run on the SQLite store (through its asynchronous
// adapter) and on the PostgreSQL store's methods, each fresh, must give the same answers.
// PostgreSQL gets one database per describePostgres suite (one per contract file) and a
// schema per scenario, migrated like a real start, so scenarios never see each other's rows.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'pg';
import { sqliteAsyncStore } from '../../../src/service/store/sqlite/async-store.js';
import type { AsyncStore } from '../../../src/service/store/async-store.js';
import type { DatasetRow } from '../../../src/service/store/datasets.js';
import { openDatabase } from '../../../src/service/store/sqlite/db.js';
import { migratePostgres } from '../../../src/service/store/pg/migrate.js';
import { ROW_TYPES } from '../../../src/service/store/pg/pool.js';
import type { Queryable } from '../../../src/service/store/pg/query.js';
import { atSuiteEnd, suiteDatabase } from '../../helpers/postgres.js';

/** The methods one part of the PostgreSQL store offers, over a pool or a transaction's client. */
export type PgMethods<K extends keyof AsyncStore> = (db: Queryable) => Pick<AsyncStore, K>;

let schemas = 0;

/** A fresh SQLite store (its own file), behind the asynchronous contract; closed and removed when the suite ends. */
export function freshSqlite(): AsyncStore {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-contract-'));
  const store = sqliteAsyncStore(openDatabase(join(dir, 'ferry.db')));
  atSuiteEnd(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return store;
}

/**
 * A pool on a fresh, migrated schema of the suite's database (dropped with the
 * describePostgres suite). End the pool when done.
 */
export async function freshPostgres(): Promise<Pool> {
  const url = await suiteDatabase();
  const schema = `contract_${process.pid}_${++schemas}`;
  const admin = new Pool({ connectionString: url, max: 1 });
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  const pool = new Pool({ connectionString: url, max: 4, types: ROW_TYPES, options: `-c search_path=${schema}` });
  pool.on('error', () => undefined); // the database is dropped at the suite's end, maybe under an idle connection
  await migratePostgres(pool);
  return pool;
}

/**
 * Runs `scenario` on a fresh SQLite store and on the given PostgreSQL methods over a fresh
 * schema; returns both answers for the caller to compare (usually toEqual).
 */
export async function onBoth<K extends keyof AsyncStore, T>(methods: PgMethods<K>, scenario: (store: Pick<AsyncStore, K>) => Promise<T>): Promise<{ sqlite: T; postgres: T }> {
  const sqlite = await scenario(freshSqlite());
  const pool = await freshPostgres();
  try {
    return { sqlite, postgres: await scenario(methods(pool)) };
  } finally {
    await pool.end();
  }
}

/** A company's data sets by data type, as its data status reads them (none for an unknown company). */
export async function datasetsOf(store: Pick<AsyncStore, 'companyDataStatus'>, companyId: string): Promise<DatasetRow[]> {
  return ((await store.companyDataStatus(companyId))?.datasets ?? []).map((d) => d.dataset);
}
