// The query language means the same in SQLite and in PostgreSQL: the same records, stored
// as JSON text in SQLite and as json in PostgreSQL, read through each dialect's compiled
// SQL, give the same ids in the same order, page by page.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileOrderBy, compileQuery, jsonField, numberPlaceholders } from '../src/service/query/index.js';
import type { Dialect, FieldResolver, FieldType } from '../src/service/query/index.js';
import { describePostgres, freshDatabase } from './helpers/postgres.js';

// A record is an object, or JSON text where the spelling matters (`3.0`).
const RECORDS: Array<[string, Record<string, unknown> | string]> = [
  ['r01', { name: 'Acme Ltd', status: 'Paid', amount: 100, due: '2021-01-28T10:00:00Z', paid: true, customer: { name: 'Big Corp', ref: { id: 61 } }, labels: { 'region-code': 'EU', 'x.y': '1' }, items: ['a', 'b'] }],
  ['r02', { name: 'acme ltd', status: 'paid', amount: 100.25, due: '2021-01-28T12:00:00+02:00', paid: false, customer: { name: 'big corp', ref: { id: 62 } } }],
  ['r03', { name: 'ACME LTD', status: 'PAID', amount: -0.5, due: '2021-01-28T10:00', paid: true, customer: { ref: { id: 61 } } }],
  ['r04', { name: 'Émile', status: 'Draft', amount: 0, due: '2021-01-28 10:00:00', paid: false }],
  ['r05', { name: 'émile', status: 'draft', amount: 0.1, due: '2021-01-28T10:00:00.500Z', paid: null }],
  ['r06', { name: 'ÉMILE', status: null, amount: 0.30000000000000004, due: '2021-01-28T10:00:00z' }],
  ['r07', { name: 'emile', amount: -1000, due: '2021-01-28', paid: true }],
  ['r08', { name: 'Zoë', status: 'Void', amount: 2500, due: '2021-01-27T23:30:00-01:00', paid: false, customer: null }],
  ['r09', { name: 'zoe', status: 'void', amount: 1e-7, due: '2020-02-29', paid: true }],
  ['r10', { name: 'Straße', status: 'Sent', amount: 12345678.9, due: '2021-02-30', paid: false }],
  ['r11', { name: 'STRASSE', status: 'sent', amount: -12345678.9, due: 'not a date', paid: true }],
  ['r12', { name: 'Ångström', status: 'Paid', amount: 3, due: '2021-03-01T00:00:00+14:00', paid: true, labels: { 'region-code': 'eu' } }],
  ['r13', '{"name":"ångström","status":"Partially Paid","amount":3.0,"due":"2021-02-28T10:00:00Z","paid":false}'],
  ['r14', { name: '50%_off', status: 'Paid', amount: 50, due: '0999-12-31', paid: true }],
  ['r15', { name: 'A && B', status: 'Void', amount: null, due: null, paid: null }],
  ['r16', {}],
  ['r17', { name: 'NULL', status: 'null', amount: 7, due: '2021-01-29T00:00:00Z', paid: false }],
  ['r18', { name: '', status: '', amount: 0, due: '2021-01-28T09:59:59Z', paid: true }],
  ['r19', { name: 'beta & sons', status: 'Draft', amount: -5.5, due: '2021-02-01T09:30:00Z', paid: false, customer: { name: 'Small corp', ref: { id: 7 } } }],
  ['r20', { name: 'Beta & Sons', status: 'draft', amount: -5.5, due: '2021-02-01T09:30:00Z', paid: false, customer: { name: 'SMALL CORP', ref: { id: 7 } } }],
  ['r21', { name: '_under', status: 'Void', amount: 99.99, due: '9999-12-31T23:59:59+14:00', paid: true }],
  ['r22', { name: 'zed', status: 'Paid', amount: 1e21, due: '2021-01-28T10:00:00.999Z', paid: true, items: { 0: 'zero' } }],
  ['r23', { name: 'Zed', status: 'Submitted', amount: 0.5, due: '2021-01-28T10:00:01Z', paid: false, items: { 0: 'Zero' } }],
  ['r24', { name: 'Ωmega', status: 'Paid', amount: 42, due: '2021-06-15T08:00:00+05:45', paid: true }],
  ['r25', { name: 'ωmega', status: 'paid', amount: 42.0001, due: '2021-06-15T02:15:00Z', paid: true }],
  ['r26', { name: 'naïve', status: 'Void', amount: -42, due: '2021-12-31T23:59:59-14:00', paid: false, customer: { name: 'Naïve Co', ref: { id: 61 } } }],
  ['r27', { name: 'NAÏVE', status: 'VOID', amount: 1000000, due: '2022-01-01', paid: true, customer: { name: 'naive co', ref: { id: 8 } } }],
  ['r28', { name: 'Acme Holdings', status: 'Paid', amount: 0.2, due: '2021-01-28T10:00:00+00:00', paid: false, customer: { name: 'Big Corp' } }],
  ['r29', { name: 'acme holdings', status: 'Authorised', amount: -0.25, due: '2021-01-28T00:00:00Z', paid: true, customer: { ref: { id: null } } }],
  ['r30', { name: 'Delta', status: 'Paid', amount: 100, due: '2021-01-28T10:00:00Z', paid: true }],
  ['r31', { name: 'delta', status: 'Paid', amount: 100, due: '2021-01-28T10:00:00Z', paid: true }],
  ['r32', { name: 'Gamma', status: 'Draft', amount: 1.5, due: '2021-13-01', paid: false }],
  ['r33', { name: 'gamma', status: 'Draft', amount: 1.5, due: '2021-04-31', paid: false }],
  ['r34', { name: 'Kappa', status: 'Sent', amount: 8, due: '2021-01-28T10:00:00.000001Z', paid: true }],
  ['r35', { name: 'kappa', status: 'sent', amount: 9, due: '2019-02-29', paid: true }],
  ['r36', { name: 'Lambda', status: 'Paid', amount: 10, due: '2000-02-29T12:00:00Z', paid: false }],
  ['r37', { name: 'lambda', status: 'Paid', amount: 11, due: '1900-02-29', paid: false }],
  ['r38', { name: 'Mu', status: 'Sent', amount: 12, due: '2021-01-28T10:00:00+14:59', paid: true }],
  ['r39', { name: 'mu', status: 'sent', amount: 13, due: '2021-01-28T10:00:00+15:00', paid: true }],
  ['r40', { name: 'Nu', status: 'Paid', amount: 14, due: 2021, paid: true }],
];

const FIELDS: Record<string, { keys: string[]; type: FieldType }> = {
  name: { keys: ['name'], type: 'string' },
  status: { keys: ['status'], type: 'string' },
  amount: { keys: ['amount'], type: 'number' },
  due: { keys: ['due'], type: 'date' },
  paid: { keys: ['paid'], type: 'boolean' },
  'customer.name': { keys: ['customer', 'name'], type: 'string' },
  'customer.ref.id': { keys: ['customer', 'ref', 'id'], type: 'number' },
  regionCode: { keys: ['labels', 'region-code'], type: 'string' },
  xy: { keys: ['labels', 'x.y'], type: 'string' },
  firstItem: { keys: ['items', '0'], type: 'string' },
};

const resolver = (dialect: Dialect): FieldResolver => (path) => {
  const field = Object.hasOwn(FIELDS, path) ? FIELDS[path] : undefined;
  return field && { sql: jsonField(dialect, 'data', field.keys, field.type), type: field.type };
};

const ids = (...numbers: number[]) => numbers.map((n) => `r${String(n).padStart(2, '0')}`);
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const ALL = RECORDS.map(([id]) => id);

// Expected ids (in id order) pin what the contract says; `undefined` asks only that the
// dialects agree, on an answer that is neither every record nor none.
const QUERIES: Array<[string, string[] | undefined]> = [
  // strings: ASCII letters fold, every other letter is itself
  ['name=emile', ids(7)],
  ['name=émile', ids(5)],
  ['name=ÉMILE', ids(4, 6)],
  ['name~MILE', ids(4, 5, 6, 7)],
  ['name=strasse', ids(11)],
  ['name~ß', ids(10)],
  ['name=ångström', ids(13)],
  ['name=acme ltd', ids(1, 2, 3)],
  ['name~%', ids(14)],
  ['name~_', ids(14, 21)],
  ['name~"&&"', ids(15)],
  ['name=""', ids(18)],
  ['name~""', ALL.filter((id) => id !== 'r16')],
  ['name=null', ids(16)],
  ['name="null"', ids(17)],
  ['name!=null', ALL.filter((id) => id !== 'r16')],
  ['status=PAID', undefined],
  ['status!=paid', undefined],
  ['status~AI', undefined],
  // numbers
  ['amount=3', ids(12, 13)],
  ['amount=0.3', []],
  ['amount>0.3 && amount<0.4', ids(6)],
  ['amount=1e-7', ids(9)],
  ['amount>1e20', ids(22)],
  ['amount<=-5.5', ids(7, 11, 19, 20, 26)],
  ['amount=null', ids(15, 16)],
  ['amount!=100', ALL.filter((id) => !['r01', 'r30', 'r31'].includes(id))],
  ['amount>=0 && amount<1', undefined],
  // dates: instants, whatever the spelling; what is no calendar date has no value
  ['due=2021-01-28T10:00:00Z', ids(1, 2, 3, 4, 5, 6, 22, 28, 30, 31, 34)],
  ['due=2021-01-28T15:45:00+05:45', ids(1, 2, 3, 4, 5, 6, 22, 28, 30, 31, 34)],
  ['due>=2021-01-28 && due<2021-01-29', ids(...range(1, 8), 18, 22, 23, 28, 29, 30, 31, 34)],
  ['due=null', ids(10, 11, 15, 16, 32, 33, 35, 37, 39, 40)],
  ['due<2000-01-01', ids(14)],
  ['due=2000-02-29T12:00', ids(36)],
  ['due=2021-06-15T02:15:00Z', ids(24, 25)],
  ['due>9000-01-01', ids(21)],
  ['due=2021-01-27T19:01:00Z', ids(38)],
  ['due>2021-01-28T10:00:00.5Z', ids(12, 13, 17, 19, 20, 21, 23, 24, 25, 26, 27)],
  ['due=2021-01-28T10:00:00.5Z', []],
  ['due<=2021-01-28T10:00:00.5Z', undefined],
  ['due!=2021-01-28T10:00:00Z', undefined],
  // booleans
  ['paid=true', undefined],
  ['paid!=TRUE', undefined],
  ['paid=null', ids(5, 6, 15, 16)],
  // nested objects and keys with `-` and `.`; a key is never an array index
  ['customer.ref.id=61', ids(1, 3, 26)],
  ['customer.name=big corp', ids(1, 2, 28)],
  ['customer.name~CO', undefined],
  ['customer.ref.id=null', ALL.filter((id) => !ids(1, 2, 3, 19, 20, 26, 27).includes(id))],
  ['regionCode=eu', ids(1, 12)],
  ['xy=1', ids(1)],
  ['firstItem=zero', ids(22, 23)],
  ['firstItem!=null', ids(22, 23)],
  // combinations
  ['{status=paid || status=void} && amount>50', undefined],
  ['name~acme || due<2021-01-01 && paid=true', undefined],
  ['{name~a && {paid=true || amount<0}} || status=null', undefined],
];

const ORDERS = [
  'name', '-name', 'status,-amount', 'amount', '-amount', 'due', '-due', 'paid,-due', '-paid,name',
  'customer.ref.id,-name', 'customer.name,due', 'firstItem,-regionCode', '-xy',
];

// By name, NULL first, then by bytes with ASCII letters folded: `_` before `a`, `z` before
// any non-ASCII letter, `NAÏVE` (Ï) before `naïve` (ï); ties by id.
const BY_NAME = ids(16, 18, 14, 21, 15, 28, 29, 1, 2, 3, 19, 20, 30, 31, 7, 32, 33, 34, 35, 36, 37, 38, 39,
  27, 26, 40, 17, 11, 10, 22, 23, 9, 8, 12, 4, 6, 13, 5, 24, 25);

interface Store {
  /** Ids matching `query`, ordered by `orderBy` then id; a page of them with `page`. */
  ids(query: string | undefined, orderBy?: string, page?: { limit: number; offset: number }): Promise<string[]>;
}

function select(dialect: Dialect, query: string | undefined, orderBy: string | undefined, paged: boolean) {
  const resolve = resolver(dialect);
  const where = compileQuery(query, resolve, dialect);
  const order = compileOrderBy(orderBy, resolve, dialect);
  const tiebreak = dialect === 'postgres' ? 'id COLLATE "C"' : 'id';
  const sql = `SELECT id FROM records WHERE ${where.sql} ORDER BY ${order ? `${order}, ` : ''}${tiebreak}${paged ? ' LIMIT ? OFFSET ?' : ''}`;
  return { sql, params: where.params };
}

let dir: string;
let sqlite: Database.Database;
let pg: Client;
const stores: Record<Dialect, Store> = {
  sqlite: {
    ids: async (query, orderBy, page) => {
      const { sql, params } = select('sqlite', query, orderBy, page !== undefined);
      return sqlite.prepare(sql).pluck().all(...params, ...(page ? [page.limit, page.offset] : [])) as string[];
    },
  },
  postgres: {
    ids: async (query, orderBy, page) => {
      const { sql, params } = select('postgres', query, orderBy, page !== undefined);
      const result = await pg.query<{ id: string }>(numberPlaceholders(sql), [...params, ...(page ? [page.limit, page.offset] : [])]);
      return result.rows.map((row) => row.id);
    },
  },
};

const dataText = (data: Record<string, unknown> | string) => (typeof data === 'string' ? data : JSON.stringify(data));

describePostgres('the query language in SQLite and PostgreSQL', () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ferry-query-dialects-'));
    sqlite = new Database(join(dir, 'records.db'));
    sqlite.exec('CREATE TABLE records (id TEXT PRIMARY KEY, data TEXT NOT NULL)');
    const insert = sqlite.prepare('INSERT INTO records (id, data) VALUES (?, ?)');
    for (const [id, data] of RECORDS) insert.run(id, dataText(data));

    // A session time zone far from UTC: no date may depend on it.
    pg = new Client({ connectionString: await freshDatabase(), options: '-c TimeZone=Asia/Kathmandu' });
    await pg.connect();
    await pg.query('CREATE TABLE records (id text PRIMARY KEY, data json NOT NULL)');
    for (const [id, data] of RECORDS) await pg.query('INSERT INTO records (id, data) VALUES ($1, $2::json)', [id, dataText(data)]);
  });

  afterAll(async () => {
    await pg?.end();
    sqlite?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it.each(QUERIES)('query %j', async (query, expected) => {
    const [inSqlite, inPostgres] = [await stores.sqlite.ids(query), await stores.postgres.ids(query)];
    expect(inPostgres).toEqual(inSqlite);
    if (expected) expect(inSqlite).toEqual(expected);
    else expect(inSqlite.length > 0 && inSqlite.length < ALL.length, `${query} matched ${inSqlite.length} records`).toBe(true);
  });

  it.each(ORDERS)('orderBy %j', async (orderBy) => {
    const inSqlite = await stores.sqlite.ids(undefined, orderBy);
    expect(await stores.postgres.ids(undefined, orderBy)).toEqual(inSqlite);
    expect([...inSqlite].sort()).toEqual(ALL);
  });

  it('orders strings by bytes with ASCII letters folded, NULL first', async () => {
    expect(await stores.sqlite.ids(undefined, 'name')).toEqual(BY_NAME);
    expect(await stores.postgres.ids(undefined, 'name')).toEqual(BY_NAME);
    expect(await stores.postgres.ids(undefined, '-name')).toEqual(await stores.sqlite.ids(undefined, '-name'));
  });

  it.each([
    [undefined, 'name'],
    ['due!=null', '-due,name'],
    ['amount>-100', 'paid,-amount'],
    ['status!=paid', undefined],
  ])('pages of %j ordered by %j are the same pages', async (query, orderBy) => {
    const whole = await stores.sqlite.ids(query, orderBy);
    expect(await stores.postgres.ids(query, orderBy)).toEqual(whole);
    const pages: string[] = [];
    for (let offset = 0; offset <= whole.length; offset += 7) {
      const page = await stores.sqlite.ids(query, orderBy, { limit: 7, offset });
      expect(await stores.postgres.ids(query, orderBy, { limit: 7, offset })).toEqual(page);
      pages.push(...page);
    }
    expect(pages).toEqual(whole);
  });
});

describe('the PostgreSQL spelling', () => {
  const resolve = resolver('postgres');

  it('carries every value as a parameter, never as SQL text', () => {
    const hostile = `x'); DROP TABLE records; --`;
    const { sql, params } = compileQuery(`name=${hostile} || amount>1.5 && due<2021-01-28 && paid=true`, resolve, 'postgres');
    expect(sql).not.toContain('DROP');
    expect(params).toEqual([hostile, 1.5, '2021-01-28T00:00:00Z', 1]);
    expect(sql.match(/\?/g)).toHaveLength(4);
    expect(compileQuery('', resolve, 'postgres').sql).toBe('TRUE');
    expect(compileQuery('due=2021-01-28T10:00:00.5Z', resolve, 'postgres').sql).toBe('FALSE');
  });

  it('casts parameters and folds ASCII under COLLATE "C"', () => {
    expect(compileQuery('status!=paid', resolve, 'postgres').sql).toBe(
      `(((data ->> 'status')) IS NULL OR lower(((data ->> 'status')) COLLATE "C") != lower(?::text COLLATE "C"))`);
    expect(compileQuery('customer.ref.id>=61', resolve, 'postgres').sql).toBe(
      `((CASE WHEN json_typeof((data -> 'customer' -> 'ref' -> 'id')) = 'number' THEN (data -> 'customer' -> 'ref' ->> 'id')::numeric END)) >= ?::numeric`);
    expect(compileOrderBy('-name,amount', resolve, 'postgres')).toBe(
      `lower(((data ->> 'name')) COLLATE "C") DESC NULLS LAST, ((CASE WHEN json_typeof((data -> 'amount')) = 'number' THEN (data ->> 'amount')::numeric END)) ASC NULLS FIRST`);
  });

  it('refuses unsafe columns and keys', () => {
    expect(() => jsonField('postgres', 'data; DROP', ['a'], 'string')).toThrow('Unsafe column');
    expect(() => jsonField('sqlite', 'data', [`a'b`], 'string')).toThrow('Unsafe JSON key');
    expect(() => jsonField('postgres', 'data', [], 'string')).toThrow('Unsafe JSON key');
  });
});

describe('numberPlaceholders', () => {
  it.each([
    ['SELECT a FROM t WHERE b = ? AND c > ? LIMIT ? OFFSET ?', 'SELECT a FROM t WHERE b = $1 AND c > $2 LIMIT $3 OFFSET $4'],
    [`SELECT '?', "a?b", ?::text -- what?\n, ?`, `SELECT '?', "a?b", $1::text -- what?\n, $2`],
    [`SELECT 'it''s ?', E'\\' ?', ?`, `SELECT 'it''s ?', E'\\' ?', $1`],
    ['SELECT /* a /* nested ? */ still ? */ ?, $$ ? $$, $x$ ? $ ? $x$, ?', 'SELECT /* a /* nested ? */ still ? */ $1, $$ ? $$, $x$ ? $ ? $x$, $2'],
    ['SELECT a$b, ?', 'SELECT a$b, $1'],
  ])('%j', (sql, expected) => {
    expect(numberPlaceholders(sql)).toBe(expected);
  });

  it.each([
    [`SELECT data ? 'key'`, 'jsonb'],
    [`SELECT data ?| array['a']`, 'jsonb'],
    ['SELECT $1, ?', 'numbered placeholder'],
    [`SELECT 'open`, 'unterminated'],
    ['SELECT /* open', 'unterminated'],
  ])('refuses %j', (sql, message) => {
    expect(() => numberPlaceholders(sql)).toThrow(message);
  });
});
