// Opens the service's SQLite store (lib/sqlite.ts) and brings its schema up to date from
// the numbered SQL files in ./migrations. Two connections write (the request thread and
// the sync worker's): transactions that read before they write begin IMMEDIATE, since a
// deferred one fails with "database is locked", without waiting, when the other
// connection commits between its read and its write.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as sqlite from '../../../lib/sqlite.js';
import { statementTally } from '../statement-count.js';
import { countDbStatements } from './count-statements.js';

export type { Db } from '../../../lib/sqlite.js';

const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), 'migrations');

export function openDatabase(file: string): sqlite.Db {
  const db = sqlite.openSqlite(file, MIGRATIONS_DIR);
  // Only for a bench that asks (FERRY_STATEMENT_COUNTS): otherwise nothing is wrapped.
  const tally = statementTally();
  if (tally) countDbStatements(db, tally);
  return db;
}

/** SQLite's default: a commit that leaves more than this many pages in the WAL checkpoints it. */
const AUTO_CHECKPOINT_PAGES = 1000;

/**
 * Whether this connection's own commits checkpoint the WAL. The request thread hands that
 * work to the sync worker's thread while it runs: a checkpoint copies every page the WAL
 * holds into the database file and syncs both, tens of milliseconds on the thread that
 * happens to commit past the limit.
 */
export function setAutoCheckpoint(db: sqlite.Db, on: boolean): void {
  db.pragma(`wal_autocheckpoint = ${on ? AUTO_CHECKPOINT_PAGES : 0}`);
}

/** Copies the committed WAL pages into the database file, waiting for no reader or writer. */
export function checkpoint(db: sqlite.Db): void {
  db.pragma('wal_checkpoint(PASSIVE)');
}

/**
 * Frees every open pull's lease. The embedded service is its database's only worker, so a
 * lease still held when it starts was left by a killed process, and its pulls would wait
 * for it to run out. Before the sync threads start (app-background.ts): freed once one has
 * started, it could be that thread's. No Store method: no worker that shares its database
 * may do this (pulls.ts: a lease is a token).
 */
export function releaseOpenPullLeases(db: sqlite.Db): void {
  db.prepare("UPDATE pull_operations SET lease_until = NULL WHERE status IN ('Queued', 'Fetching', 'Mapping')").run();
}

export function listMigrations(dir = MIGRATIONS_DIR): ReturnType<typeof sqlite.listMigrations> {
  return sqlite.listMigrations(dir);
}

export function applyMigrations(db: sqlite.Db, dir = MIGRATIONS_DIR): number {
  return sqlite.applyMigrations(db, dir);
}
