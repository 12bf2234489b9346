// Which errors say the database cannot be reached (store/unreachable.ts): only the drivers'
// own. The same socket errors from anywhere else (a client that aborts its body is an
// ECONNRESET) say nothing of the database, and a statement the database refused is a fault.
import Database from 'better-sqlite3';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Pool } from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { openPostgres } from '../../src/service/store/pg/pool.js';
import { DatabaseUnreachable, isDatabaseUnreachable } from '../../src/service/store/unreachable.js';
import { describePostgres, freshDatabase } from '../helpers/postgres.js';
import { tempDir } from '../helpers/service.js';

/** The error `work` throws (or rejects with). */
async function caught(work: () => unknown): Promise<unknown> {
  try {
    await work();
  } catch (err) {
    return err;
  }
  throw new Error('expected an error');
}

describe('SQLite', () => {
  const dir = tempDir('ferry-unreachable-');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('a file that cannot be opened is the database unreachable; a refused statement is not', async () => {
    // A directory where the file should be: SQLite cannot open it.
    mkdirSync(join(dir, 'ferry.db'));
    const cannotOpen = await caught(() => new Database(join(dir, 'ferry.db')).exec('CREATE TABLE t (x)'));
    expect((cannotOpen as { code?: string }).code).toBe('SQLITE_CANTOPEN');
    expect(isDatabaseUnreachable(cannotOpen)).toBe(true);

    const db = new Database(join(dir, 'ok.db'));
    db.exec('CREATE TABLE t (id TEXT PRIMARY KEY)');
    db.prepare('INSERT INTO t VALUES (?)').run('a');
    const duplicate = await caught(() => db.prepare('INSERT INTO t VALUES (?)').run('a'));
    expect((duplicate as { code?: string }).code).toBe('SQLITE_CONSTRAINT_PRIMARYKEY');
    expect(isDatabaseUnreachable(duplicate)).toBe(false);
    db.close();
  });
});

describe('anything else', () => {
  it('socket errors that did not come from a driver say nothing of the database', () => {
    // What node gives a request whose client went away mid-body, and what a platform's refusal looks like.
    const aborted = Object.assign(new Error('aborted'), { code: 'ECONNRESET' });
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED', syscall: 'connect' });
    for (const err of [aborted, refused, new Error('Connection terminated unexpectedly'), undefined, 'ECONNRESET']) {
      expect(isDatabaseUnreachable(err)).toBe(false);
    }
  });

  it("another thread's verdict, carried as DatabaseUnreachable, is believed", () => {
    expect(isDatabaseUnreachable(new DatabaseUnreachable('Connection terminated unexpectedly'))).toBe(true);
  });
});

describePostgres('PostgreSQL', () => {
  it('pg outside the service pool marks nothing: its refused connection alone is no verdict', async () => {
    const idle = new Pool({ connectionString: 'postgres://postgres@127.0.0.1:1/none', connectionTimeoutMillis: 2000 });
    const refused = await caught(() => idle.query('SELECT 1'));
    await idle.end();
    expect((refused as { code?: string }).code).toBe('ECONNREFUSED');
    expect(isDatabaseUnreachable(refused)).toBe(false);
  });

  it('through the service pool: a connection the server ended counts, statements the database refused do not', async () => {
    const url = await freshDatabase();
    const pool = await openPostgres(url);
    const badStatement = await caught(() => pool.query('SELECT * FROM no_such_table'));
    expect((badStatement as { code?: string }).code).toBe('42P01');
    expect(isDatabaseUnreachable(badStatement)).toBe(false);
    const client = await pool.connect();
    const badInClient = await caught(() => client.query('SELEC 1'));
    client.release();
    expect(isDatabaseUnreachable(badInClient)).toBe(false);
    // The server ends every connection of the pool: what the next statement fails with is the driver's.
    const admin = new Pool({ connectionString: url });
    const held = await pool.connect();
    await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
    const terminated = await caught(() => held.query('SELECT 1'));
    held.release(true);
    await admin.end();
    expect(isDatabaseUnreachable(terminated)).toBe(true);
    await pool.end();
  });
});
