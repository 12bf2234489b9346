// Statements that repeat are prepared once per connection (src/service/store/pg/query.ts),
// and the two ways a prepared statement fails where its text would not turn it off: a plan
// whose columns changed under a running process (a rolling upgrade), and a statement gone
// from the connection behind the pool (what PgBouncer in transaction mode does before 1.21).
// The last test turns preparing off for this file's module: it stays last.
import { Pool } from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { row, rows, run } from '../../src/service/store/pg/query.js';
import { describePostgres, freshDatabase } from '../helpers/postgres.js';

describePostgres('prepared statements on PostgreSQL', () => {
  let pool: Pool;

  beforeAll(async () => {
    // One connection: what it has prepared is what every call here sees.
    pool = new Pool({ connectionString: await freshDatabase(), max: 1 });
    pool.on('error', () => undefined);
    pool.on('connect', (client) => client.on('error', () => undefined));
    await pool.query('CREATE TABLE things (id integer PRIMARY KEY, name text NOT NULL)');
    await pool.query("INSERT INTO things VALUES (1, 'one'), (2, 'two')");
  });
  afterAll(async () => {
    await pool.end();
  });

  const preparedTexts = async (): Promise<string[]> =>
    (await pool.query<{ statement: string }>("SELECT statement FROM pg_prepared_statements WHERE name LIKE 'ferry\\_%' ORDER BY statement")).rows.map((r) => r.statement);

  it('sends a text as it is twice, then prepares it once and reuses it', async () => {
    const sql = 'SELECT name FROM things WHERE id = ?';
    for (const id of [1, 2]) await row(pool, sql, [id]);
    expect(await preparedTexts()).toEqual([]);
    for (const id of [1, 2, 1, 2]) expect((await row<{ name: string }>(pool, sql, [id]))?.name).toBe(id === 1 ? 'one' : 'two');
    expect(await preparedTexts()).toEqual(['SELECT name FROM things WHERE id = $1']);
    // The same text in a transaction, on the pool's connection: the statement prepared there.
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      expect(await run(client, 'UPDATE things SET name = ? WHERE id = ?', ['uno', 1])).toBe(1);
      await client.query('COMMIT');
    } finally {
      client.release();
    }
    expect((await row<{ name: string }>(pool, sql, [1]))?.name).toBe('uno');
  });

  it('a migration that changes a prepared statement\'s columns: the call is sent again as text, and the text is not prepared again', async () => {
    const sql = 'SELECT * FROM things WHERE id >= ? ORDER BY id';
    for (let i = 0; i < 3; i++) expect(await rows(pool, sql, [1])).toHaveLength(2);
    expect(await preparedTexts()).toContain('SELECT * FROM things WHERE id >= $1 ORDER BY id');
    await pool.query("ALTER TABLE things ADD COLUMN colour text NOT NULL DEFAULT 'red'");
    // The server refuses the prepared plan (0A000): the pool's call is answered from the text.
    expect(await rows(pool, sql, [1])).toEqual([{ id: 1, name: 'uno', colour: 'red' }, { id: 2, name: 'two', colour: 'red' }]);
    // In a transaction the text is sent as it is from then on, so nothing fails there.
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      expect(await rows(client, sql, [2])).toEqual([{ id: 2, name: 'two', colour: 'red' }]);
      await client.query('COMMIT');
    } finally {
      client.release();
    }
  });

  it('a statement gone from the connection (a pooler in transaction mode): the call is sent as text, and nothing is prepared again', async () => {
    const sql = 'SELECT count(*)::int AS n FROM things WHERE id <= ?';
    for (let i = 0; i < 3; i++) expect((await row<{ n: number }>(pool, sql, [2]))?.n).toBe(2);
    expect(await preparedTexts()).toContain('SELECT count(*)::int AS n FROM things WHERE id <= $1');
    // What a pooler does when the next transaction lands on another server connection.
    await pool.query('DEALLOCATE ALL');
    expect((await row<{ n: number }>(pool, sql, [1]))?.n).toBe(1);
    const fresh = 'SELECT name FROM things WHERE id = ? AND name IS NOT NULL';
    for (let i = 0; i < 5; i++) expect((await row<{ name: string }>(pool, fresh, [2]))?.name).toBe('two');
    expect(await preparedTexts()).toEqual([]);
  });
});
