import Database from 'better-sqlite3';
import { describe, it, expect } from 'vitest';
import { ApiError } from '../src/service/errors.js';
import { compileOrderBy, compileQuery, parseQuery } from '../src/service/query/index.js';
import type { FieldResolver, Operator, QueryNode, ResolvedField } from '../src/service/query/index.js';

const MALFORMED = 'Error parsing query - Malformed query.';
const unknown = (path: string) => `Error parsing query - Could not resolve property ${path}`;

function failure(run: () => unknown): ApiError {
  try {
    run();
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected an ApiError');
}

const clause = (path: string, op: Operator, value: string, quoted = false): QueryNode =>
  ({ kind: 'clause', path, op, value, quoted });

describe('parseQuery', () => {
  const cases: Array<[string, QueryNode | undefined]> = [
    ['', undefined],
    ['   ', undefined],
    ['status=paid', clause('status', '=', 'paid')],
    ['  status  !=  paid  ', clause('status', '!=', 'paid')],
    ['name~acme', clause('name', '~', 'acme')],
    ['amountDue>0', clause('amountDue', '>', '0')],
    ['amountDue<0', clause('amountDue', '<', '0')],
    ['amountDue>=0', clause('amountDue', '>=', '0')],
    ['amountDue<=0', clause('amountDue', '<=', '0')],
    ['dueDate>2021-01-28', clause('dueDate', '>', '2021-01-28')],
    ['name=Acme Ltd', clause('name', '=', 'Acme Ltd')],
    ['name = Acme Ltd   && x=1', { kind: 'and', items: [clause('name', '=', 'Acme Ltd'), clause('x', '=', '1')] }],
    ['customerRef.id=61', clause('customerRef.id', '=', '61')],
    // The operator is the first one after the path; the rest is value.
    ['tags.x=a=b', clause('tags.x', '=', 'a=b')],
    ['a<=>b', clause('a', '<=', '>b')],
    ['a==1', clause('a', '=', '=1')],
    ['name=A & B | C', clause('name', '=', 'A & B | C')],
    ['name=a{b', clause('name', '=', 'a{b')],
    ['name=say "hi"', clause('name', '=', 'say "hi"')],
    ['name="A && B"', clause('name', '=', 'A && B', true)],
    ['name="a || {b}"', clause('name', '=', 'a || {b}', true)],
    ['name="say \\"hi\\" \\\\o/"', clause('name', '=', 'say "hi" \\o/', true)],
    ['name = "  padded  "  ', clause('name', '=', '  padded  ', true)],
    ['name=""', clause('name', '=', '', true)],
    ['name="null"', clause('name', '=', 'null', true)],
    ['a=1 || b=2 && c=3', { kind: 'or', items: [clause('a', '=', '1'), { kind: 'and', items: [clause('b', '=', '2'), clause('c', '=', '3')] }] }],
    ['a=1 && b=2 || c=3', { kind: 'or', items: [{ kind: 'and', items: [clause('a', '=', '1'), clause('b', '=', '2')] }, clause('c', '=', '3')] }],
    ['{a=1 || b=2} && c=3', { kind: 'and', items: [{ kind: 'or', items: [clause('a', '=', '1'), clause('b', '=', '2')] }, clause('c', '=', '3')] }],
    ['a=1&&b=2&&c=3', { kind: 'and', items: [clause('a', '=', '1'), clause('b', '=', '2'), clause('c', '=', '3')] }],
    [' { { a = x y } } ', clause('a', '=', 'x y')],
    ['{a="}"}||b=2', { kind: 'or', items: [clause('a', '=', '}', true), clause('b', '=', '2')] }],
  ];
  it.each(cases)('%j', (query, expected) => {
    expect(parseQuery(query)).toEqual(expected);
  });

  const malformed = [
    '=x', 'name', 'name=', 'name=   ', 'name x=1', 'na-me=x', '.a=1', 'a.=1', 'a..b=1', 'näme=1', '"a"=1',
    'name!x', 'a=1 &&', 'a=1 ||', '&& a=1', '|| a=1', 'a=1 && && b=2', 'a=1 && || b=2',
    '{a=1', 'a=1}', '{a=1}}', '{{a=1}', '{}', '{a=1} b=2', 'a=1 {b=2}', 'a=1 && {',
    'name="abc', 'name="a"b', 'name="a\\n"', 'name="a\\', 'name=a || b',
  ];
  it.each(malformed)('rejects %j', (query) => {
    const err = failure(() => parseQuery(query));
    expect([err.statusCode, err.message]).toEqual([400, MALFORMED]);
  });

  it('accepts at most 2048 characters', () => {
    expect(parseQuery(`a=${'x'.repeat(2046)}`)).toEqual(clause('a', '=', 'x'.repeat(2046)));
    for (const query of [`a=${'x'.repeat(2047)}`, ' '.repeat(2049)]) {
      expect(failure(() => parseQuery(query)).message).toBe(MALFORMED);
    }
  });
});

// Test table: mixed-case strings, numbers, canonical dates, booleans, JSON, NULLs, and
// `legacy` dates stored non-canonically (milliseconds, no Z, date only).
const db = new Database(':memory:');
db.exec(`
  CREATE TABLE c (id INTEGER PRIMARY KEY, name TEXT NOT NULL COLLATE NOCASE, status TEXT, amount REAL,
    due TEXT, paid INTEGER, tags TEXT, legacy TEXT);
  CREATE INDEX c_name ON c (name);
  CREATE INDEX c_status ON c (status COLLATE NOCASE);
  CREATE INDEX c_due ON c (due);
`);
const insert = db.prepare('INSERT INTO c VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
for (const row of [
  [1, 'Acme Ltd', 'Paid', 100, '2021-01-28T00:00:00Z', 1, { region: 'North', customerRef: { id: 61, name: 'Big Co' } }, '2021-01-28T10:00:00.500Z'],
  [2, 'acme holdings', 'paid', 0, '2021-01-28T10:00:00Z', 0, { region: 'south', customerRef: { id: 62 } }, '2021-01-28T10:00:00'],
  [3, 'Beta & Sons', 'Draft', -5.5, '2021-02-01T09:30:00Z', 0, { region: 'NORTH' }, '2021-02-01'],
  [4, 'A && B', null, null, null, null, null, null],
  [5, '50%_off', 'Void', 2500, '2020-12-31T23:59:59Z', 1, { customerRef: { id: 61 } }, '2020-12-31T23:59:59Z'],
] as const) {
  insert.run(...row.slice(0, 6), row[6] && JSON.stringify(row[6]), row[7]);
}

// A Map, so paths such as `constructor` do not resolve through Object.prototype.
const fields = new Map<string, ResolvedField>(Object.entries({
  id: { sql: 'c.id', type: 'number' },
  name: { sql: 'c.name', type: 'string' },
  status: { sql: 'c.status', type: 'string' },
  amount: { sql: 'c.amount', type: 'number' },
  dueDate: { sql: 'c.due', type: 'date' },
  isPaid: { sql: 'c.paid', type: 'boolean' },
  'tags.region': { sql: `json_extract(c.tags, '$.region')`, type: 'string' },
  'customerRef.id': { sql: `json_extract(c.tags, '$.customerRef.id')`, type: 'number' },
  'customerRef.name': { sql: `json_extract(c.tags, '$.customerRef.name')`, type: 'string' },
  legacyDate: { sql: `strftime('%Y-%m-%dT%H:%M:%SZ', c.legacy)`, type: 'date' },
}));
const resolve: FieldResolver = (path) => fields.get(path);

function ids(query: string | undefined): number[] {
  const { sql, params } = compileQuery(query, resolve);
  return db.prepare(`SELECT id FROM c WHERE ${sql} ORDER BY id`).pluck().all(...params) as number[];
}

describe('compileQuery against SQLite', () => {
  const cases: Array<[string | undefined, number[]]> = [
    [undefined, [1, 2, 3, 4, 5]],
    ['', [1, 2, 3, 4, 5]],
    [' \t ', [1, 2, 3, 4, 5]],
    // strings: case-insensitive; `!=` keeps NULLs; `~` is a literal contains
    ['status=paid', [1, 2]],
    ['status=PAID', [1, 2]],
    ['status!=paid', [3, 4, 5]],
    ['status=null', [4]],
    ['status=NULL', [4]],
    ['status!=null', [1, 2, 3, 5]],
    ['status="null"', []],
    ['name=acme ltd', [1]],
    ['name~ACME', [1, 2]],
    ['name~%', [5]],
    ['name~_', [5]],
    ['name~&', [3, 4]],
    ['name="A && B"', [4]],
    ['name~"&&"', [4]],
    ['name=""', []],
    [`name=x' OR '1'='1`, []],
    ['status~null', []],
    // numbers
    ['amount>0', [1, 5]],
    ['amount >= 0', [1, 2, 5]],
    ['amount<0', [3]],
    ['amount<=-5.5', [3]],
    ['amount=100', [1]],
    ['amount=1e2', [1]],
    ['amount=+100.0', [1]],
    ['amount!=100', [2, 3, 4, 5]],
    ['amount=null', [4]],
    // dates: value normalised to canonical UTC text
    ['dueDate>2021-01-28', [2, 3]],
    ['dueDate>=2021-01-28', [1, 2, 3]],
    ['dueDate<2021-01-01', [5]],
    ['dueDate=2021-01-28T10:00', [2]],
    ['dueDate=2021-01-28T10:00:00', [2]],
    ['dueDate=2021-01-28t10:00:00z', [2]],
    ['dueDate=2021-01-28T10:00:00.000Z', [2]],
    ['dueDate=2021-01-28T12:00:00+02:00', [2]],
    ['dueDate!=2021-01-28T10:00:00Z', [1, 3, 4, 5]],
    ['dueDate=null', [4]],
    // a fractional second lies between stored (whole-second) dates
    ['dueDate=2021-01-28T10:00:00.5Z', []],
    ['dueDate!=2021-01-28T10:00:00.5Z', [1, 2, 3, 4, 5]],
    ['dueDate>2021-01-28T10:00:00.5Z', [3]],
    ['dueDate>=2021-01-28T10:00:00.5Z', [3]],
    ['dueDate<2021-01-28T10:00:00.5Z', [1, 2, 5]],
    ['dueDate<=2021-01-28T10:00:00.5Z', [1, 2, 5]],
    // non-canonical storage, normalised by the resolver's strftime() expression
    ['legacyDate=2021-01-28T10:00:00Z', [1, 2]],
    ['legacyDate>=2021-02-01', [3]],
    // booleans
    ['isPaid=true', [1, 5]],
    ['isPaid=FALSE', [2, 3]],
    ['isPaid!=true', [2, 3, 4]],
    // JSON paths
    ['tags.region=north', [1, 3]],
    ['tags.region!=north', [2, 4, 5]],
    ['customerRef.id=61', [1, 5]],
    ['customerRef.name~big', [1]],
    // combinations and precedence
    ['customerRef.id=61 && status=paid', [1]],
    ['status=paid || status=void && amount>1000', [1, 2, 5]],
    ['status=paid || status=void && amount<0', [1, 2]],
    ['{status=paid || status=void} && amount>50', [1, 5]],
    ['{status=paid || status=void} && amount<0', []],
    ['{name~acme && {isPaid=true || amount=0}} || status=null', [1, 2, 4]],
  ];
  it.each(cases)('%j', (query, expected) => {
    expect(ids(query)).toEqual(expected);
  });

  it('compiles to parameterised SQL', () => {
    expect(compileQuery('status=paid', resolve)).toEqual({ sql: 'c.status = ? COLLATE NOCASE', params: ['paid'] });
    expect(compileQuery('status!=paid', resolve)).toEqual({ sql: '(c.status IS NULL OR c.status != ? COLLATE NOCASE)', params: ['paid'] });
    expect(compileQuery('name~Ac', resolve)).toEqual({ sql: 'instr(lower(c.name), lower(?)) > 0', params: ['Ac'] });
    expect(compileQuery('amount>1 || dueDate<2021-01-28 && isPaid=true', resolve)).toEqual({
      sql: '(c.amount > ? OR (c.due < ? AND c.paid = ?))',
      params: [1, '2021-01-28T00:00:00Z', 1],
    });
    const hostile = `x'); DROP TABLE c; --`;
    const compiled = compileQuery(`name=${hostile}`, resolve);
    expect(compiled.sql).not.toContain('DROP');
    expect(compiled.params).toEqual([hostile]);
  });

  const malformed = [
    'name>a', 'name<=a', 'isPaid~t', 'amount~1', 'dueDate~2021',
    'amount=abc', 'amount=0x10', 'amount=Infinity', 'amount=1e999', 'amount=1,5', 'amount>null', 'amount="null"',
    'dueDate=2021-02-30', 'dueDate=2021-13-01', 'dueDate=28/01/2021', 'dueDate=2021-01-28T24:00:00',
    'dueDate=2021-01-28T10:00:61', 'dueDate=2021-01-28 10:00:00', 'dueDate>null', 'dueDate=0000-01-01T00:00:00+01:00',
    'isPaid=yes', 'isPaid=1', 'isPaid>true',
    'nope=1 &&',
  ];
  it.each(malformed)('rejects %j', (query) => {
    const err = failure(() => compileQuery(query, resolve));
    expect([err.statusCode, err.message]).toEqual([400, MALFORMED]);
  });

  const unknownPaths: Array<[string, string]> = [
    ['nope=1', 'nope'],
    ['status=paid && customerRef.nope=1', 'customerRef.nope'],
    ['constructor=1', 'constructor'],
    ['{status=paid || Status=paid}', 'Status'],
  ];
  it.each(unknownPaths)('%j: unknown property', (query, path) => {
    const err = failure(() => compileQuery(query, resolve));
    expect([err.statusCode, err.message]).toEqual([400, unknown(path)]);
  });

  it('uses the NOCASE indexes for equality and the date index for ranges', () => {
    const plan = (query: string) => {
      const { sql, params } = compileQuery(query, resolve);
      return db.prepare(`EXPLAIN QUERY PLAN SELECT * FROM c WHERE ${sql}`).all(...params)
        .map((row) => (row as { detail: string }).detail).join('\n');
    };
    expect(plan('name=acme ltd')).toContain('USING INDEX c_name (name=?)');
    expect(plan('status=paid')).toContain('USING INDEX c_status (status=?)');
    expect(plan('dueDate>2021-01-28')).toContain('USING INDEX c_due (due>?)');
  });
});

describe('compileOrderBy', () => {
  const cases: Array<[string | undefined, string | undefined]> = [
    [undefined, undefined],
    ['  ', undefined],
    ['name', 'c.name COLLATE NOCASE ASC'],
    ['-name', 'c.name COLLATE NOCASE DESC'],
    [' -amount , dueDate', 'c.amount DESC, c.due ASC'],
    ['customerRef.id', `json_extract(c.tags, '$.customerRef.id') ASC`],
  ];
  it.each(cases)('%j', (orderBy, expected) => {
    expect(compileOrderBy(orderBy, resolve)).toBe(expected);
  });

  it.each([',', 'name,', '--name', '- name', 'na me', 'name;DROP TABLE c', 'name DESC'])('rejects %j', (orderBy) => {
    const err = failure(() => compileOrderBy(orderBy, resolve));
    expect([err.statusCode, err.message]).toEqual([400, MALFORMED]);
  });

  it('rejects more than 2048 characters', () => {
    const tooLong = Array(410).fill('-name').join(',');
    expect(tooLong.length).toBe(2459);
    expect(failure(() => compileOrderBy(tooLong, resolve)).message).toBe(MALFORMED);
  });

  it.each([['nope', 'nope'], ['-nope', 'nope'], ['name,-tags.other', 'tags.other']])('%j: unknown property', (orderBy, path) => {
    const err = failure(() => compileOrderBy(orderBy, resolve));
    expect([err.statusCode, err.message]).toEqual([400, unknown(path)]);
  });

  const ordered = (orderBy: string) =>
    db.prepare(`SELECT id FROM c ORDER BY ${compileOrderBy(orderBy, resolve) ?? ''}, c.id`).pluck().all() as number[];

  it('orders rows in SQLite, strings case-insensitively', () => {
    expect(ordered('-amount')).toEqual([5, 1, 2, 3, 4]);
    // BINARY would put `paid` after `Void`; NOCASE ties Paid/paid, broken by id.
    expect(ordered('status')).toEqual([4, 3, 1, 2, 5]);
    expect(ordered('-isPaid,-dueDate')).toEqual([1, 5, 3, 2, 4]);
  });
});
