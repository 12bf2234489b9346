// The statement count the benches report per migrated row (src/service/store/statement-count.ts):
// what each store's hook counts as a statement and as a commit, and the totals a process
// writes when FERRY_STATEMENT_COUNTS is set (and that nothing is written when it is not).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Pool } from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createPgStore } from '../../src/service/store/pg/pg-store.js';
import { countPoolStatements } from '../../src/service/store/pg/count-statements.js';
import { ROW_TYPES } from '../../src/service/store/pg/pool.js';
import { migratePostgres } from '../../src/service/store/pg/migrate.js';
import { countDbStatements } from '../../src/service/store/sqlite/count-statements.js';
import { openDatabase } from '../../src/service/store/sqlite/db.js';
import { sqliteAsyncStore } from '../../src/service/store/sqlite/async-store.js';
import { STATEMENT_COUNTS_ENV, StatementTally, type StatementTotals } from '../../src/service/store/statement-count.js';
import { describePostgres, freshDatabase } from '../helpers/postgres.js';

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-statement-count-'));
  dirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const counted = (tally: StatementTally) => ({ statements: tally.totals.statements, commits: tally.totals.commits });

describe('statement count on SQLite', () => {
  it('counts each run, a transaction\'s BEGIN and COMMIT, and a write outside a transaction as its own commit', async () => {
    const db = openDatabase(join(tempDir(), 'ferry.db'));
    const tally = new StatementTally();
    countDbStatements(db, tally);
    try {
      db.prepare('CREATE TABLE t (n INTEGER)').run();
      const insert = db.prepare('INSERT INTO t (n) VALUES (?)');
      const read = db.prepare('SELECT count(*) AS n FROM t');
      const before = counted(tally);
      insert.run(1);
      expect(counted(tally)).toEqual({ statements: before.statements + 1, commits: before.commits + 1 });
      read.get();
      expect(counted(tally)).toEqual({ statements: before.statements + 2, commits: before.commits + 1 });
      // better-sqlite3's transaction: BEGIN, two inserts, COMMIT; one commit.
      db.transaction(() => {
        insert.run(2);
        insert.run(3);
      }).immediate();
      expect(counted(tally)).toEqual({ statements: before.statements + 6, commits: before.commits + 2 });
      // A rolled-back one commits nothing.
      expect(() => db.transaction(() => {
        insert.run(4);
        throw new Error('no');
      })()).toThrow('no');
      expect(counted(tally)).toEqual({ statements: before.statements + 9, commits: before.commits + 2 });
      expect(tally.totals.texts['INSERT INTO t (n) VALUES (?)']).toBe(4);
    } finally {
      db.close();
    }
  });

  it('counts the asynchronous store\'s transactions (BEGIN IMMEDIATE … COMMIT) as one commit', async () => {
    const db = openDatabase(join(tempDir(), 'ferry.db'));
    const tally = new StatementTally();
    countDbStatements(db, tally);
    const store = sqliteAsyncStore(db);
    try {
      const client = await store.insertClient({ name: 'Counted Ltd', plan: 'Paid', created: '2025-01-01T00:00:00Z' });
      const before = counted(tally);
      await store.transaction(async (tx) => {
        await tx.insertCompany(client.id, { name: 'One', tags: {} }, '2025-01-01T00:00:00Z');
      });
      const after = counted(tally);
      expect(after.commits - before.commits).toBe(1);
      expect(after.statements - before.statements).toBeGreaterThanOrEqual(3);
      expect(tally.totals.texts['BEGIN IMMEDIATE']).toBe(1);
      expect(tally.totals.texts.COMMIT).toBe(1);
    } finally {
      await store.close();
    }
  });
});

describePostgres('statement count on PostgreSQL', () => {
  it('counts every round trip of the pool and its transactions, BEGIN and COMMIT included', async () => {
    const pool = new Pool({ connectionString: await freshDatabase(), max: 2, types: ROW_TYPES });
    const tally = new StatementTally();
    countPoolStatements(pool, tally);
    try {
      await migratePostgres(pool);
      await pool.query('CREATE TABLE t (n integer)');
      const before = counted(tally);
      await pool.query('INSERT INTO t (n) VALUES ($1)', [1]);
      expect(counted(tally)).toEqual({ statements: before.statements + 1, commits: before.commits + 1 });
      await pool.query('SELECT count(*) FROM t');
      expect(counted(tally)).toEqual({ statements: before.statements + 2, commits: before.commits + 1 });
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        await client.query('INSERT INTO t (n) VALUES ($1)', [2]);
        await client.query('UPDATE t SET n = n + 1');
        await client.query('COMMIT');
        await client.query('BEGIN');
        await client.query('DELETE FROM t');
        await client.query('ROLLBACK');
      } finally {
        client.release();
      }
      expect(counted(tally)).toEqual({ statements: before.statements + 9, commits: before.commits + 2 });

      const store = createPgStore(pool);
      const account = await store.insertClient({ name: 'Counted Ltd', plan: 'Paid', created: '2025-01-01T00:00:00Z' });
      const mid = counted(tally);
      await store.transaction(async (tx) => {
        await tx.insertCompany(account.id, { name: 'One', tags: {} }, '2025-01-01T00:00:00Z');
      });
      const after = counted(tally);
      expect(after.commits - mid.commits).toBe(1);
      expect(after.statements - mid.statements).toBeGreaterThanOrEqual(3);
    } finally {
      await pool.end();
    }
  });
});

describe('FERRY_STATEMENT_COUNTS', () => {
  const dbModule = pathToFileURL(resolve('dist/service/store/sqlite/db.js')).href;
  /** A process that opens the service's SQLite store and writes one row, with `env`; answers the count files it left. */
  function runStore(env: NodeJS.ProcessEnv, countDir: string): StatementTotals[] {
    const file = join(tempDir(), 'ferry.db');
    const code = `const { openDatabase } = await import(${JSON.stringify(dbModule)});
      const db = openDatabase(${JSON.stringify(file)});
      db.prepare("INSERT INTO clients (id, name, plan, is_admin, created) VALUES ('c1', 'A', 'Free', 0, '2025-01-01T00:00:00Z')").run();`;
    execFileSync(process.execPath, ['--input-type=module', '-e', code], { env, stdio: 'pipe' });
    return readdirSync(countDir).filter((name) => name.endsWith('.json')).map((name) => JSON.parse(readFileSync(join(countDir, name), 'utf8')) as StatementTotals);
  }

  it('set: the process writes its totals when it exits', () => {
    const countDir = tempDir();
    const [totals, ...more] = runStore({ ...process.env, [STATEMENT_COUNTS_ENV]: countDir }, countDir);
    expect(more).toEqual([]);
    expect(totals).toMatchObject({ mainThread: true, statements: 1, commits: 1 });
  });

  it('unset: nothing is counted or written', () => {
    const countDir = tempDir();
    const env = { ...process.env };
    delete env[STATEMENT_COUNTS_ENV];
    expect(runStore(env, countDir)).toEqual([]);
  });
});
