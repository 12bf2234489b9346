// What a service keeps at rest, looked at from beside it on whichever store it runs on
// (stack.ts's FERRY_TEST_STORE): the data dir's ferry.db, or the service's PostgreSQL
// database through a connection of the test's own. SQL is written with `?` placeholders,
// as the stores write it, and counts come back as numbers on both.
import Database from 'better-sqlite3';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import type { Service } from '../../src/service/app.js';
import { numberPlaceholders } from '../../src/service/query/placeholders.js';
import { sqliteAsyncStore } from '../../src/service/store/sqlite/async-store.js';
import type { AsyncStore } from '../../src/service/store/async-store.js';
import { openDatabase } from '../../src/service/store/sqlite/db.js';
import { ROW_TYPES } from '../../src/service/store/pg/pool.js';

/** A service started by stack.ts (running or stopped): where its data is. */
export interface Stored {
  dataDir: string;
  /** Its PostgreSQL database; none on SQLite. */
  database?: string;
  /** The running service, whose SQLite handle is used while it is open. */
  service?: Service;
}

export interface AtRest {
  all<T = Record<string, unknown>>(sql: string, ...params: unknown[]): Promise<T[]>;
  get<T = Record<string, unknown>>(sql: string, ...params: unknown[]): Promise<T | undefined>;
  /** The first column of the first row, e.g. of `SELECT count(*) …`. */
  value(sql: string, ...params: unknown[]): Promise<unknown>;
  /** A write from another connection than the service's; returns the rows changed. */
  run(sql: string, ...params: unknown[]): Promise<number>;
  /** The names of the store's tables. */
  tables(): Promise<string[]>;
  /**
   * Every byte stored, to scan for what must never be there in plain text: the bytes of
   * ferry.db and its WAL (free pages too), or on PostgreSQL, whose files are its server's,
   * every cell of every table (bytea as is, the rest as text).
   */
  bytes(): Promise<Buffer>;
}

export function atRest(stored: Stored): AtRest {
  const query = stored.database ? postgresQuery(stored.database) : sqliteQuery(stored);
  const all = async (sql: string, params: unknown[]) => (await query(sql, params, false)).rows;
  const at: AtRest = {
    all: (sql, ...params) => all(sql, params) as Promise<any[]>,
    get: async (sql, ...params) => (await all(sql, params))[0] as any,
    value: async (sql, ...params) => {
      const first = (await all(sql, params))[0];
      return first === undefined ? undefined : Object.values(first)[0];
    },
    run: async (sql, ...params) => (await query(sql, params, true)).changes,
    tables: async () => (await at.all<{ name: string }>(stored.database
      ? "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'"
      : "SELECT name FROM sqlite_master WHERE type = 'table'")).map((r) => r.name),
    bytes: async () => {
      if (!stored.database) {
        const files = readdirSync(stored.dataDir).filter((f) => f.startsWith('ferry.db'));
        return Buffer.concat(files.map((f) => readFileSync(join(stored.dataDir, f))));
      }
      const cells: Buffer[] = [];
      for (const table of await at.tables()) {
        for (const row of await at.all(`SELECT * FROM "${table}"`)) {
          for (const cell of Object.values(row)) cells.push(Buffer.isBuffer(cell) ? cell : Buffer.from(`${String(cell)}\n`));
        }
      }
      return Buffer.concat(cells);
    },
  };
  return at;
}

type Query = (sql: string, params: unknown[], write: boolean) => Promise<{ rows: Array<Record<string, unknown>>; changes: number }>;

function sqliteQuery(stored: Stored): Query {
  return async (sql, params, write) => {
    const live = stored.service?.db;
    const db = live?.open ? live : new Database(join(stored.dataDir, 'ferry.db'), { fileMustExist: true, readonly: !write });
    try {
      const statement = db.prepare(sql);
      if (write) return { rows: [], changes: statement.run(...params).changes };
      return { rows: statement.all(...params) as Array<Record<string, unknown>>, changes: 0 };
    } finally {
      if (db !== live) db.close();
    }
  };
}

function postgresQuery(database: string): Query {
  return async (sql, params) => {
    // Typed as the store reads them: bigints (counts) as numbers, json as its text.
    const client = new Client({ connectionString: database, application_name: 'ferry-test', types: ROW_TYPES });
    client.on('error', () => undefined);
    await client.connect();
    try {
      const result = await client.query(numberPlaceholders(sql), params);
      return { rows: result.rows as Array<Record<string, unknown>>, changes: result.rowCount ?? 0 };
    } finally {
      await client.end();
    }
  };
}

/**
 * Another store on the service's data (a second SQLite connection to ferry.db, or a pool
 * of its own on the PostgreSQL database), as another thread or process has: close it after.
 */
export async function anotherStore(stored: Stored): Promise<AsyncStore> {
  if (!stored.database) return sqliteAsyncStore(openDatabase(join(stored.dataDir, 'ferry.db')));
  const [{ openPostgres }, { createPgStore }] = await Promise.all([import('../../src/service/store/pg/pool.js'), import('../../src/service/store/pg/pg-store.js')]);
  return createPgStore(await openPostgres(stored.database, { max: 2 }));
}
