// Opens the service's SQLite store (lib/sqlite.ts) and brings its schema up to date from
// the numbered SQL files in ./migrations. Two connections write (the request thread and
// the sync worker's): transactions that read before they write begin IMMEDIATE, since a
// deferred one fails with "database is locked", without waiting, when the other
// connection commits between its read and its write.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as sqlite from '../../lib/sqlite.js';

export type { Db } from '../../lib/sqlite.js';

const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), 'migrations');

export function openDatabase(file: string): sqlite.Db {
  return sqlite.openSqlite(file, MIGRATIONS_DIR);
}

export function listMigrations(dir = MIGRATIONS_DIR): ReturnType<typeof sqlite.listMigrations> {
  return sqlite.listMigrations(dir);
}

export function applyMigrations(db: sqlite.Db, dir = MIGRATIONS_DIR): number {
  return sqlite.applyMigrations(db, dir);
}
