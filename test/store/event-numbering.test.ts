// Event numbers within an account (migration 011), on both stores: a database written
// before it keeps the numbers its clients have seen, and every account counts on from the
// newest event at the upgrade, so a cursor handed out before it resumes exactly; after
// it, each account's numbers move with its own events only. On PostgreSQL an event is
// numbered when its transaction commits: numbers commit in order (a reader that passed
// one never misses a lower one committed later), and two transactions that lock the same
// rows in opposite orders around their events do not deadlock over the counter.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool, type PoolClient } from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { openSqlite } from '../../src/lib/sqlite.js';
import { sqliteAsyncStore } from '../../src/service/store/sqlite/async-store.js';
import type { AsyncStore } from '../../src/service/store/async-store.js';
import { listMigrations, openDatabase } from '../../src/service/store/sqlite/db.js';
import { eventMethods } from '../../src/service/store/pg/events.js';
import { listPgMigrations, migratePostgres } from '../../src/service/store/pg/migrate.js';
import { createPgStore } from '../../src/service/store/pg/pg-store.js';
import { ROW_TYPES } from '../../src/service/store/pg/pool.js';
import { describePostgres, freshDatabase } from '../helpers/postgres.js';
import { event } from './contract/outbox.js';

/** The first migration that numbers events per account. */
const NUMBERING = 11;

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
const scratch = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-numbering-'));
  dirs.push(dir);
  return dir;
};

/** A folder with the migrations from before the numbering: the schema an older ferry left. */
function migrationsBefore(list: Array<{ version: number; name: string; sql: string }>): string {
  const dir = join(scratch(), 'migrations');
  mkdirSync(dir);
  for (const migration of list.filter((m) => m.version < NUMBERING)) writeFileSync(join(dir, migration.name), migration.sql);
  return dir;
}

/** What an older ferry wrote: accounts A and B, events A B A B B (seq 1 to 5); A's client last saw 3, and `lastSequence` then was 5. */
const OLD_ROWS = [
  `INSERT INTO clients (id, name, plan, created) VALUES ('A', 'A', 'Paid', '2026-01-01T00:00:00Z'), ('B', 'B', 'Paid', '2026-01-01T00:00:00Z')`,
  ...['A', 'B', 'A', 'B', 'B'].map((client, i) => `INSERT INTO events (id, client_id, company_id, event_type, generated, body)
    VALUES ('old-${i + 1}', '${client}', NULL, 'company.created', '2026-01-01T00:00:00Z', '{"id":"old-${i + 1}"}')`),
];

/** After the upgrade: the old numbers stand, old cursors resume, and new numbers count each account's own events. */
async function upgraded(store: AsyncStore) {
  const before = {
    a: (await store.eventsAfter('A', 0, 10)).map((e) => [e.id, e.account_seq]),
    aLatest: await store.latestAccountEventSeq('A'),
    afterThree: await store.eventsAfter('A', 3, 10),
  };
  await store.insertEvent(event('new-a1', 'A', null));
  for (let i = 1; i <= 4; i += 1) await store.insertEvent(event(`new-b${i}`, 'B', null));
  await store.insertEvent(event('new-a2', 'A', null));
  return {
    before,
    // A's client resumes from the cursors it held: after its last event (3), and after the old lastSequence (5).
    afterThree: (await store.eventsAfter('A', 3, 10)).map((e) => [e.id, e.account_seq]),
    afterFive: (await store.eventsAfter('A', 5, 10)).map((e) => [e.id, e.account_seq]),
    aLatest: await store.latestAccountEventSeq('A'),
    b: (await store.eventsAfter('B', 5, 10)).map((e) => [e.id, e.account_seq]),
  };
}

const EXPECTED = {
  before: { a: [['old-1', 1], ['old-3', 3]], aLatest: 5, afterThree: [] },
  afterThree: [['new-a1', 6], ['new-a2', 7]],
  afterFive: [['new-a1', 6], ['new-a2', 7]],
  // B's four events took none of A's numbers.
  aLatest: 7,
  b: [['new-b1', 6], ['new-b2', 7], ['new-b3', 8], ['new-b4', 9]],
};

describe('event numbers on SQLite', () => {
  it('keep their old numbers across the upgrade; old cursors resume exactly; each account then counts its own', async () => {
    const file = join(scratch(), 'ferry.db');
    const old = openSqlite(file, migrationsBefore(listMigrations()));
    for (const sql of OLD_ROWS) old.exec(sql);
    old.close();
    const store = sqliteAsyncStore(openDatabase(file));
    try {
      expect(await upgraded(store)).toEqual(EXPECTED);
    } finally {
      await store.close();
    }
  });
});

/** The writes to the account counters' table so far, with those of `connections` (their statistics flushed first). */
async function counterWrites(client: PoolClient, ...connections: PoolClient[]): Promise<number> {
  for (const each of [...connections, client]) {
    await each.query('SELECT pg_stat_force_next_flush()');
    await each.query('SELECT 1');
  }
  const { rows } = await client.query<{ n: string }>(`SELECT n_tup_upd + n_tup_ins AS n FROM pg_stat_user_tables WHERE relname = 'event_counters'`);
  return Number(rows[0]!.n);
}

describePostgres('event numbers on PostgreSQL', () => {
  const pools: Pool[] = [];
  const clients: PoolClient[] = [];
  afterAll(async () => {
    for (const client of clients.splice(0)) client.release();
    await Promise.all(pools.splice(0).map((p) => p.end()));
  });
  const pool = (url: string): Pool => {
    const made = new Pool({ connectionString: url, max: 4, types: ROW_TYPES });
    pools.push(made);
    return made;
  };
  /** A migrated database of its own, holding the clients `ids`. */
  const withClients = async (...ids: string[]): Promise<Pool> => {
    const db = pool(await freshDatabase());
    await migratePostgres(db);
    await db.query(`INSERT INTO clients (id, name, plan, created) SELECT id, id, 'Paid', '2026-01-01T00:00:00Z' FROM unnest($1::text[]) AS id`, [ids]);
    return db;
  };
  const connection = async (from: Pool): Promise<PoolClient> => {
    const client = await from.connect();
    clients.push(client);
    return client;
  };

  it('keep their old numbers across the upgrade; old cursors resume exactly; each account then counts its own', async () => {
    const db = pool(await freshDatabase());
    await migratePostgres(db, migrationsBefore(listPgMigrations()));
    for (const sql of OLD_ROWS) await db.query(sql);
    await migratePostgres(db);
    expect(await upgraded(createPgStore(db))).toEqual(EXPECTED);
  });

  it('numbers at commit: a reader past a number never misses a lower-seq event committed after it', async () => {
    const db = await withClients('A');
    const store = createPgStore(db);
    const [first, second] = [await connection(db), await connection(db)];
    await first.query('BEGIN');
    await eventMethods(first).insertEvent(event('slow', 'A', null));
    await second.query('BEGIN');
    await eventMethods(second).insertEvent(event('quick', 'A', null));
    await second.query('COMMIT');

    const seen = await store.eventsAfter('A', 0, 10);
    expect(seen.map((e) => [e.id, e.account_seq])).toEqual([['quick', 1]]);
    await first.query('COMMIT');
    const later = await store.eventsAfter('A', seen[0]!.account_seq, 10);
    expect(later.map((e) => [e.id, e.account_seq])).toEqual([['slow', 2]]);
    // The case that matters: the event written first (the lower seq) committed last.
    expect(later[0]!.seq).toBeLessThan(seen[0]!.seq);
    expect(await store.latestAccountEventSeq('A')).toBe(2);
  });

  it('numbers a transaction\'s events in seq order, each account counting its own', async () => {
    const db = await withClients('A', 'B');
    const store = createPgStore(db);
    await store.insertEvent(event('before', 'A', null));
    const job = await connection(db);
    await job.query('BEGIN');
    for (let i = 0; i < 23; i++) await eventMethods(job).insertEvent(event(`a${i}`, 'A', null));
    await job.query('COMMIT');
    const numbered = await store.eventsAfter('A', 0, 50);
    expect(numbered.map((e) => [e.id, e.account_seq])).toEqual([['before', 1], ...Array.from({ length: 23 }, (_, i) => [`a${i}`, i + 2])]);
    expect(numbered.map((e) => e.seq)).toEqual([...numbered.map((e) => e.seq)].sort((a, b) => a - b));

    // Two accounts in one transaction: each counts its own, in the order they were written.
    await job.query('BEGIN');
    for (let i = 0; i < 10; i++) await eventMethods(job).insertEvent(event(`m${i}`, i % 3 === 0 ? 'B' : 'A', null));
    await job.query('COMMIT');
    expect((await store.eventsAfter('A', 24, 50)).map((e) => [e.id, e.account_seq])).toEqual([['m1', 25], ['m2', 26], ['m4', 27], ['m5', 28], ['m7', 29], ['m8', 30]]);
    expect((await store.eventsAfter('B', 0, 50)).map((e) => [e.id, e.account_seq])).toEqual([['m0', 1], ['m3', 2], ['m6', 3], ['m9', 4]]);
    expect(await store.latestAccountEventSeq('A')).toBe(30);
  });

  it('numbers a transaction\'s events in a row with one step of the counter; one written between others\' alone', async () => {
    const db = await withClients('A');
    const store = createPgStore(db);
    const [job, other] = [await connection(db), await connection(db)];
    const steps = async (work: () => Promise<void>) => {
      const before = await counterWrites(job, other);
      await work();
      return await counterWrites(job, other) - before;
    };
    // A sync job's ending: its events one after another.
    expect(await steps(async () => {
      await job.query('BEGIN');
      for (let i = 0; i < 23; i++) await eventMethods(job).insertEvent(event(`a${i}`, 'A', null));
      await job.query('COMMIT');
    })).toBe(1);
    // Another transaction's event written right after j0 and committed first: three steps,
    // the other's, j0's alone and j1-j4's together; the other's number comes first.
    expect(await steps(async () => {
      await job.query('BEGIN');
      await eventMethods(job).insertEvent(event('j0', 'A', null));
      await other.query('BEGIN');
      await eventMethods(other).insertEvent(event('o0', 'A', null));
      await other.query('COMMIT');
      for (let i = 1; i < 5; i++) await eventMethods(job).insertEvent(event(`j${i}`, 'A', null));
      await job.query('COMMIT');
    })).toBe(3);
    expect((await store.eventsAfter('A', 0, 50)).map((e) => [e.id, e.account_seq])).toEqual([
      ...Array.from({ length: 23 }, (_, i) => [`a${i}`, i + 1]), ['o0', 24], ...Array.from({ length: 5 }, (_, i) => [`j${i}`, i + 25])]);
    expect(await store.latestAccountEventSeq('A')).toBe(29);
  });

  it('two transactions that lock rows in opposite orders around their events both commit', async () => {
    const db = await withClients('A', 'R');
    const [first, second] = [await connection(db), await connection(db)];
    // first: an event of A, then the row R. second: the row R, then an event of A. Had the
    // event taken A's counter when written, first would hold it waiting for R, and second
    // would hold R waiting for it: a deadlock, and one of them rolled back.
    await first.query('BEGIN');
    await eventMethods(first).insertEvent(event('first', 'A', null));
    await second.query('BEGIN');
    await second.query(`SELECT 1 FROM clients WHERE id = 'R' FOR UPDATE`);
    const firstLocks = first.query(`SELECT 1 FROM clients WHERE id = 'R' FOR UPDATE`);
    await eventMethods(second).insertEvent(event('second', 'A', null));
    await second.query('COMMIT');
    await firstLocks;
    await first.query('COMMIT');
    const store = createPgStore(db);
    expect((await store.eventsAfter('A', 0, 10)).map((e) => [e.id, e.account_seq])).toEqual([['second', 1], ['first', 2]]);
  });
});
