// Whether an error says the database cannot be reached right now, so a request may succeed
// later (503 with Retry-After) and background work waits for it (outage.ts). Only the
// drivers' own errors can say so: a client that resets its connection, or a platform that
// refuses one, says nothing of the database.
import Database from 'better-sqlite3';
import { isDatabaseLost } from './pg/unavailable.js';

/** SQLite cannot open, read or write the file: a disk gone or a mount lost, not a wrong statement. */
const SQLITE_UNREACHABLE = /^SQLITE_(CANTOPEN|IOERR)/;

/**
 * The driver's verdict from another thread (the sync thread): only its message crosses,
 * so the thread that saw the driver's error says what it meant.
 */
export class DatabaseUnreachable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DatabaseUnreachable';
  }
}

export function isDatabaseUnreachable(err: unknown): boolean {
  if (err instanceof DatabaseUnreachable) return true;
  if (err instanceof Database.SqliteError) return SQLITE_UNREACHABLE.test(err.code);
  return isDatabaseLost(err);
}
