// The PostgreSQL schema: its migrations give the tables, columns and indexes the SQLite
// ones do, apply once however many processes start together, and a database that cannot
// be reached fails in one line that names where and why, and never the password.
import { createServer, type Server, type Socket } from 'node:net';
import { randomBytes } from 'node:crypto';
import { Pool } from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { listMigrations, openDatabase } from '../../src/service/store/sqlite/db.js';
import { listPgMigrations, migratePostgres } from '../../src/service/store/pg/migrate.js';
import { checkServerVersion, MIN_SERVER_VERSION, openPostgres } from '../../src/service/store/pg/pool.js';
import { DatabaseUnavailableError, parseTarget } from '../../src/service/store/pg/unavailable.js';
import { databaseUrl, describePostgres, freshDatabase } from '../helpers/postgres.js';

type Columns = Record<string, string[]>;

/** Columns PostgreSQL names where SQLite has them unnamed: the rowid of a table keyed by something else. */
const NAMED_ROWIDS: Columns = { webhook_consumers: ['seq'] };

/**
 * What only PostgreSQL has: the shared rate limit's ledger of API instances on one database
 * (009_rate_ledger.sql; SQLite is one process and keeps its buckets in memory), and the
 * check that every process seals tokens with one key (010_key_check.sql; SQLite's key lives
 * beside its database), and the notices of committed events and deliveries to the other
 * processes (016_commit_notices.sql; SQLite's writers share one process), and the
 * numbering of events at their transaction's commit (017_event_numbering_once.sql, then
 * 018_event_numbering_by_key.sql and 020_event_numbering_per_transaction.sql; SQLite numbers
 * them as it writes them), and the records' indexes PostgreSQL does without
 * (019_records_fewer_indexes.sql).
 */
const POSTGRES_ONLY_MIGRATIONS = ['009_rate_ledger.sql', '010_key_check.sql', '016_commit_notices.sql', '017_event_numbering_once.sql',
  '018_event_numbering_by_key.sql', '019_records_fewer_indexes.sql', '020_event_numbering_per_transaction.sql'];
/** SQLite's indexes that PostgreSQL keeps as a table's primary key, with its columns. */
const INDEXES_AS_KEYS: Record<string, { table: string; columns: string[] }> = {
  records_order: { table: 'records', columns: ['company_id', 'data_type', 'generation', 'seq'] },
};
/** SQLite's indexes no PostgreSQL read could use: its date fields are read through an expression no index holds. */
const SQLITE_ONLY_INDEXES = ['records_invoice_due', 'records_invoice_issue'];
const POSTGRES_ONLY_TABLES = ['rate_ledger', 'rate_instances', 'key_check'];

function sqliteSchema(): { columns: Columns; indexes: string[] } {
  const db = openDatabase(':memory:');
  try {
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all() as Array<{ name: string }>;
    const columns: Columns = {};
    for (const { name } of tables) {
      columns[name] = (db.pragma(`table_info(${name})`) as Array<{ name: string }>).map((column) => column.name);
    }
    // Indexes the migrations create by name (not the ones behind UNIQUE and PRIMARY KEY).
    const indexes = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL").all() as Array<{ name: string }>)
      .map((row) => row.name);
    return { columns, indexes: indexes.sort() };
  } finally {
    db.close();
  }
}

async function postgresSchema(pool: Pool): Promise<{ columns: Columns; indexes: string[] }> {
  const { rows } = await pool.query<{ table_name: string; column_name: string }>(`
    SELECT table_name, column_name FROM information_schema.columns
    WHERE table_schema = current_schema() AND table_name <> 'schema_migrations'
    ORDER BY table_name, ordinal_position`);
  const columns: Columns = {};
  for (const row of rows) (columns[row.table_name] ??= []).push(row.column_name);
  const indexes = await pool.query<{ name: string }>(`
    SELECT i.relname AS name FROM pg_index x
    JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
    WHERE t.relnamespace = current_schema()::regnamespace AND t.relname <> 'schema_migrations'
      AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid)`);
  return { columns, indexes: indexes.rows.map((row) => row.name).sort() };
}

async function primaryKey(pool: Pool, table: string): Promise<string[]> {
  const { rows } = await pool.query<{ name: string }>(`
    SELECT a.attname AS name FROM pg_index x JOIN LATERAL unnest(x.indkey) WITH ORDINALITY AS k(attnum, n) ON true
    JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.attnum
    WHERE x.indrelid = $1::regclass AND x.indisprimary ORDER BY k.n`, [table]);
  return rows.map((row) => row.name);
}

async function ledger(pool: Pool): Promise<Array<{ version: number; name: string }>> {
  const { rows } = await pool.query<{ version: number; name: string }>('SELECT version, name FROM schema_migrations ORDER BY version');
  return rows;
}

const VERSIONS = listPgMigrations().map((migration) => migration.version);

describePostgres('PostgreSQL migrations', () => {
  const pools: Pool[] = [];
  const pool = (url: string): Pool => {
    const created = new Pool({ connectionString: url, max: 2 });
    pools.push(created);
    return created;
  };
  afterEach(async () => {
    await Promise.all(pools.splice(0).map((p) => p.end()));
  });

  it('translates every SQLite migration, one file each, with the same numbers and names', () => {
    const translated = listPgMigrations().map((m) => m.name).filter((name) => !POSTGRES_ONLY_MIGRATIONS.includes(name));
    expect(translated).toEqual(listMigrations().map((m) => m.name));
  });

  it('creates, on a fresh database, the tables, columns and indexes the SQLite schema has; a second run applies nothing', async () => {
    const db = pool(await freshDatabase());
    expect(await migratePostgres(db)).toEqual(VERSIONS);

    const expected = sqliteSchema();
    const actual = await postgresSchema(db);
    expect(Object.keys(actual.columns).sort()).toEqual([...Object.keys(expected.columns), ...POSTGRES_ONLY_TABLES].sort());
    // The same columns in the same order, with SQLite's rowid named where PostgreSQL needs it
    // (a column a later migration adds comes after that one).
    for (const [table, columns] of Object.entries(expected.columns)) {
      const named = NAMED_ROWIDS[table] ?? [];
      expect(actual.columns[table]?.filter((column) => !named.includes(column)), table).toEqual(columns);
      expect(actual.columns[table], table).toEqual(expect.arrayContaining(named));
    }
    expect(actual.indexes).toEqual(expected.indexes.filter((name) => !(name in INDEXES_AS_KEYS) && !SQLITE_ONLY_INDEXES.includes(name)));
    for (const { table, columns } of Object.values(INDEXES_AS_KEYS)) expect(await primaryKey(db, table), table).toEqual(columns);

    expect(await migratePostgres(db)).toEqual([]);
    expect((await ledger(db)).map((row) => row.version)).toEqual(VERSIONS);
  });

  it('applies each migration exactly once when 5 processes start at once', async () => {
    const url = await freshDatabase();
    const runs = await Promise.all(Array.from({ length: 5 }, () => migratePostgres(pool(url))));
    // One run applied everything; the others waited on the lock and found nothing to do.
    expect(runs.flat().sort((a, b) => a - b)).toEqual(VERSIONS);
    expect(runs.filter((applied) => applied.length > 0)).toHaveLength(1);
    expect((await ledger(pool(url))).map((row) => row.version)).toEqual(VERSIONS);
  });

  it('openPostgres connects as ferry and migrates', async () => {
    const opened = await openPostgres(await freshDatabase(), { max: 2 });
    try {
      const { rows } = await opened.query<{ app: string }>("SELECT current_setting('application_name') AS app");
      expect(rows[0]!.app).toBe('ferry');
      expect((await ledger(opened)).map((row) => row.version)).toEqual(VERSIONS);
    } finally {
      await opened.end();
    }
  });

  it('runs on this server, and refuses one older than 14 at start, naming both versions', async () => {
    const opened = await openPostgres(await freshDatabase(), { max: 1 });
    try {
      const { rows } = await opened.query<{ server_version_num: string }>('SHOW server_version_num');
      expect(Number(rows[0]!.server_version_num)).toBeGreaterThanOrEqual(MIN_SERVER_VERSION);
    } finally {
      await opened.end();
    }
    const target = parseTarget('postgres://ferry:Hunter2@db.internal:5432/ferry');
    const err = (() => { try { checkServerVersion(130012, target); } catch (e) { return e; } })();
    expect(err).toBeInstanceOf(DatabaseUnavailableError);
    expect((err as Error).message).toBe('PostgreSQL at db.internal:5432/ferry is version 13.12; ferry needs 14.0 or later');
    expect((err as DatabaseUnavailableError).hint).toMatch(/Upgrade the server/);
    expect(() => checkServerVersion(MIN_SERVER_VERSION, target)).not.toThrow();
  });

  it('names a database that does not exist', async () => {
    const name = `ferry_missing_${randomBytes(4).toString('hex')}`;
    const err = await openPostgres(databaseUrl(name)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DatabaseUnavailableError);
    expect((err as Error).message).toMatch(new RegExp(`^cannot connect to PostgreSQL at [^ ]+/${name}: database "${name}" does not exist$`));
  });

  it('names a role the server refuses, and not its password', async () => {
    const url = new URL(databaseUrl('postgres'));
    url.username = 'ferry_no_such_role';
    url.password = 'Hunter2-secret%21';
    const err = await openPostgres(url.href).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DatabaseUnavailableError);
    expect((err as Error).message).toContain('role "ferry_no_such_role" does not exist');
    expect((err as Error).message).not.toMatch(/Hunter2/);
  });
});

/** A port nothing listens on: a server's, closed again. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('openPostgres when the database cannot be reached', () => {
  let silent: Server | undefined;
  const sockets = new Set<Socket>();
  afterEach(async () => {
    for (const socket of sockets) socket.destroy();
    sockets.clear();
    await new Promise<void>((resolve) => (silent ? silent.close(() => resolve()) : resolve()));
    silent = undefined;
  });

  it('fails in one line naming host:port, the database and "connection refused"', async () => {
    const port = await closedPort();
    const err = await openPostgres(`postgres://postgres@127.0.0.1:${port}/ferry`).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DatabaseUnavailableError);
    const { message } = err as Error;
    expect(message).toBe(`cannot connect to PostgreSQL at 127.0.0.1:${port}/ferry: connection refused`);
    expect(message).not.toContain('\n');
    expect(message).not.toMatch(/\bat .*\(.*:\d+:\d+\)/);
    expect((err as DatabaseUnavailableError).hint).toMatch(/FERRY_DATABASE_URL/);
  });

  it('never shows the password from the URL', async () => {
    const port = await closedPort();
    const err = await openPostgres(`postgres://ferry:S3cret-pw%40x@127.0.0.1:${port}/ferry`).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DatabaseUnavailableError);
    expect((err as Error).message).toContain(`127.0.0.1:${port}`);
    expect(JSON.stringify({ message: (err as Error).message, hint: (err as DatabaseUnavailableError).hint })).not.toMatch(/S3cret|pw%40x|pw@x/);
  });

  it('says it timed out when the server never answers', async () => {
    // Accepts connections and says nothing: pg waits for the server's first message.
    const server = createServer((socket) => sockets.add(socket));
    silent = server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    const err = await openPostgres(`postgres://postgres@127.0.0.1:${port}/ferry`).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DatabaseUnavailableError);
    expect((err as Error).message).toBe(`cannot connect to PostgreSQL at 127.0.0.1:${port}/ferry: no answer within 5 s (timed out)`);
  });

  it('does not repeat a URL it cannot read', async () => {
    const err = await openPostgres('postgres://user:pa ss@[bad').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DatabaseUnavailableError);
    expect((err as Error).message).not.toContain('pa ss');
  });
});
