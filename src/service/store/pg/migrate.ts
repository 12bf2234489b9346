// Brings a PostgreSQL store's schema up to date from the numbered SQL files in
// ./migrations (the same numbers and names as the SQLite ones), each in its own
// transaction, recording what it applied in schema_migrations. Several ferry processes
// may start against one database at once: the whole run holds an advisory lock, so one
// applies each migration and the others wait, then find nothing left to do.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Client, Pool } from 'pg';
import { withSessionLock } from './session-lock.js';

/** Beside the compiled module: the build copies every .sql under src/ into dist/. */
export const PG_MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), 'migrations');

/**
 * The advisory lock's key: the first 8 bytes of sha256('ferry.schema_migrations') as a
 * signed bigint. It is fixed, so every ferry process takes the same lock; and it is drawn
 * from a hash, so it does not meet the small numbers other applications sharing the
 * database tend to lock. Advisory locks are per database, so separate databases never
 * wait on each other.
 */
export const MIGRATION_LOCK_KEY = '-1402339114031208472';

export interface PgMigration {
  version: number;
  name: string;
  sql: string;
}

export function listPgMigrations(dir = PG_MIGRATIONS_DIR): PgMigration[] {
  return readdirSync(dir)
    .filter((name) => /^\d+_.+\.sql$/.test(name))
    .map((name) => ({ version: Number.parseInt(name, 10), name, sql: readFileSync(join(dir, name), 'utf8') }))
    .sort((a, b) => a.version - b.version);
}

const CREATE_LEDGER = `CREATE TABLE IF NOT EXISTS schema_migrations (
  version integer PRIMARY KEY,
  name    text NOT NULL,
  applied timestamptz NOT NULL DEFAULT now()
)`;

/**
 * Applies, in order and each in its own transaction, the migrations schema_migrations does
 * not list yet; returns the versions it applied (none when another process got there first).
 * Takes a Pool (one connection is borrowed for the run) or a connected Client.
 */
export async function migratePostgres(db: Pool | Client, dir = PG_MIGRATIONS_DIR): Promise<number[]> {
  const migrations = listPgMigrations(dir);
  // A session lock: held across the transactions below.
  return withSessionLock(db, MIGRATION_LOCK_KEY, async (client) => {
    // Created under the lock: two CREATE TABLE IF NOT EXISTS at once can still collide.
    await client.query(CREATE_LEDGER);
    const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_migrations');
    const done = new Set(rows.map((row) => row.version));
    const applied: number[] = [];
    for (const migration of migrations) {
      if (done.has(migration.version)) continue;
      await client.query('BEGIN');
      try {
        await client.query(migration.sql);
        await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw new Error(`PostgreSQL migration ${migration.name} failed: ${(err as Error).message}`, { cause: err });
      }
      applied.push(migration.version);
    }
    return applied;
  });
}
