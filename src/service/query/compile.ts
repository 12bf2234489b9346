// Compiles `query` and `orderBy` into SQL for SQLite (the default) or PostgreSQL, spelled
// by dialect.ts. Values only ever travel as `?` parameters; the only SQL text taken from
// outside is the resolver's trusted field expressions, written for the same dialect.
//
// Semantics:
// - Strings compare case-insensitively, folding ASCII letters only (dialect.ts).
// - `~` is a case-insensitive "contains" via instr() / strpos(), so `%` and `_` need no escaping.
// - Bare `null` (any case) with `=` / `!=` is IS NULL / IS NOT NULL; quoted `"null"` is text.
// - `x != v` also returns rows where x is NULL: "status is not paid" includes "no status".
// - Dates must be stored as canonical UTC text `YYYY-MM-DDTHH:MM:SSZ`, so comparing text
//   compares instants and an index on the column is used. Other storage (no `Z`,
//   milliseconds, date only) needs a resolver expression such as
//   `strftime('%Y-%m-%dT%H:%M:%SZ', col)`, which normalises it (without index use;
//   json-fields.ts). In PostgreSQL a date field is a timestamptz expression.
import { errors } from '../errors.js';
import { SPELLINGS, type Dialect, type Spelling } from './dialect.js';
import { MAX_ORDER_BY_FIELDS, MAX_QUERY_LENGTH, isPath, parseQuery } from './parse.js';
import type { Clause, Operator, QueryNode } from './parse.js';
import type { CompiledWhere, FieldResolver, FieldType, ResolvedField } from './types.js';

type Params = CompiledWhere['params'];

const ALLOWED_OPS: Record<FieldType, ReadonlySet<Operator>> = {
  string: new Set(['=', '!=', '~']),
  number: new Set(['=', '!=', '>', '<', '>=', '<=']),
  date: new Set(['=', '!=', '>', '<', '>=', '<=']),
  boolean: new Set(['=', '!=']),
};

// Plain decimals only: Number() alone would also accept '', '0x1f' and 'Infinity'.
const NUMBER = /^[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?$/i;
const DATE = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?(Z|[+-]\d{2}:\d{2})?)?$/i;

export function compileQuery(query: string | undefined, resolve: FieldResolver, dialect: Dialect = 'sqlite'): CompiledWhere {
  const spelling = SPELLINGS[dialect];
  const ast = parseQuery(query ?? '');
  if (!ast) return { sql: spelling.always, params: [] };
  const params: Params = [];
  return { sql: compileNode(ast, { resolve, spelling, params }), params };
}

/**
 * An ORDER BY list without the keyword, e.g. `c.name COLLATE NOCASE DESC`; the caller adds
 * its stable tiebreak (a unique column whose order is the same in every dialect: an
 * integer, or text under COLLATE "C" in PostgreSQL).
 */
export function compileOrderBy(orderBy: string | undefined, resolve: FieldResolver, dialect: Dialect = 'sqlite'): string | undefined {
  if (orderBy === undefined || orderBy.trim() === '') return undefined;
  if (orderBy.length > MAX_QUERY_LENGTH) throw errors.malformedQuery();
  const items = orderBy.split(',');
  if (items.length > MAX_ORDER_BY_FIELDS) throw errors.queryTooCostly('orderBy fields', MAX_ORDER_BY_FIELDS);
  return items.map((item) => {
    const term = item.trim();
    const descending = term.startsWith('-');
    const path = descending ? term.slice(1) : term;
    if (!isPath(path)) throw errors.malformedQuery();
    const field = resolve(path);
    if (!field) throw errors.unknownProperty(path);
    return SPELLINGS[dialect].order(field.sql, field.type, descending);
  }).join(', ');
}

interface Compiling {
  resolve: FieldResolver;
  spelling: Spelling;
  params: Params;
}

function compileNode(node: QueryNode, c: Compiling): string {
  if (node.kind === 'clause') return compileClause(node, c);
  const glue = node.kind === 'and' ? ' AND ' : ' OR ';
  return `(${node.items.map((item) => compileNode(item, c)).join(glue)})`;
}

function compileClause({ path, op, value, quoted }: Clause, c: Compiling): string {
  const field = c.resolve(path);
  if (!field) throw errors.unknownProperty(path);
  if (!quoted && value.toLowerCase() === 'null') {
    if (op === '=') return c.spelling.isNull(field.sql);
    if (op === '!=') return c.spelling.isNull(field.sql, true);
  }
  if (!ALLOWED_OPS[field.type].has(op)) throw errors.malformedQuery();
  switch (field.type) {
    case 'string':
      if (op !== '~') return compare(c, field, op, value);
      c.params.push(value);
      return c.spelling.contains(field.sql);
    case 'number':
      return compare(c, field, op, parseNumber(value));
    case 'boolean':
      return compare(c, field, op, parseBoolean(value));
    case 'date':
      return compareDate(c, field, op, value);
  }
}

function compare(c: Compiling, field: ResolvedField, op: Operator, value: string | number): string {
  c.params.push(value);
  const test = `${c.spelling.operand(field.sql, field.type)} ${op} ${c.spelling.param(field.type)}`;
  return op === '!=' ? `(${c.spelling.isNull(field.sql)} OR ${test})` : test;
}

function compareDate(c: Compiling, field: ResolvedField, op: Operator, value: string): string {
  const { text, fractional } = parseDate(value);
  if (!fractional) return compare(c, field, op, text);
  // Stored dates are whole seconds, so none equals an instant inside second `text`,
  // and "after it" / "before it" become "after that second" / "at or before that second".
  switch (op) {
    case '=': return c.spelling.never;
    case '!=': return c.spelling.always;
    case '>': case '>=': return compare(c, field, '>', text);
    default: return compare(c, field, '<=', text);
  }
}

function parseNumber(value: string): number {
  const number = Number(value);
  if (!NUMBER.test(value) || !Number.isFinite(number)) throw errors.malformedQuery();
  return number;
}

function parseBoolean(value: string): number {
  const lower = value.toLowerCase();
  if (lower !== 'true' && lower !== 'false') throw errors.malformedQuery();
  return lower === 'true' ? 1 : 0;
}

/**
 * Accepts `YYYY-MM-DD`, optionally with `THH:MM`, `:SS`, `.fraction` and `Z` or `±HH:MM`
 * (no zone means UTC). Returns the canonical UTC second and whether a fraction was dropped.
 */
function parseDate(value: string): { text: string; fractional: boolean } {
  const match = DATE.exec(value);
  if (!match) throw errors.malformedQuery();
  const [, year, month, day, hour = '00', minute = '00', second = '00', fraction = '', zone = 'Z'] = match;
  const wall = `${year}-${month}-${day}T${hour}:${minute}:${second}`;
  // Date rolls 2021-02-30 over to March; the round trip catches that, and 24:00.
  const asUtc = new Date(`${wall}Z`);
  if (Number.isNaN(asUtc.getTime()) || asUtc.toISOString().slice(0, 19) !== wall) throw errors.malformedQuery();
  const instant = new Date(`${wall}${zone.toUpperCase()}`);
  // An offset can push the year out of 0000-9999, where toISOString grows past 24 characters.
  if (Number.isNaN(instant.getTime()) || instant.toISOString().length !== 24) throw errors.malformedQuery();
  return { text: `${instant.toISOString().slice(0, 19)}Z`, fractional: /[1-9]/.test(fraction) };
}
