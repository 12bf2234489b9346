// Opening a SQLite store, for the service and the sandbox alike: WAL with
// synchronous=NORMAL (a committed transaction is in the WAL before the call returns, so
// killing the process never loses an acknowledged write), the file private (0600) before
// SQLite creates its WAL beside it, and the schema brought up to date from numbered SQL files.
import Database from 'better-sqlite3';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ensurePrivateFile } from './private-files.js';

export type Db = Database.Database;

export function openSqlite(file: string, migrationsDir: string): Db {
  if (file !== ':memory:') {
    // Private from the start: the sandbox thread may be the first to make the data dir.
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    ensurePrivateFile(file);
  }
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  applyMigrations(db, migrationsDir);
  return db;
}

/** A read-only connection to a store another connection keeps up to date (a reader thread's). */
export function openReadOnly(file: string): Db {
  const db = new Database(file, { readonly: true });
  db.pragma('busy_timeout = 5000');
  return db;
}

interface Migration {
  version: number;
  name: string;
  sql: string;
}

export function listMigrations(dir: string): Migration[] {
  return readdirSync(dir)
    .filter((name) => /^\d+_.+\.sql$/.test(name))
    .map((name) => ({ version: Number.parseInt(name, 10), name, sql: readFileSync(join(dir, name), 'utf8') }))
    .sort((a, b) => a.version - b.version);
}

/** Applies, in order and each in its own transaction, the migrations newer than user_version. */
export function applyMigrations(db: Db, dir: string): number {
  const current = db.pragma('user_version', { simple: true }) as number;
  let applied = 0;
  for (const migration of listMigrations(dir)) {
    if (migration.version <= current) continue;
    db.transaction(() => {
      db.exec(migration.sql);
      db.pragma(`user_version = ${migration.version}`);
    })();
    applied += 1;
  }
  return applied;
}
