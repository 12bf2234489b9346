// How each SQL dialect spells what the query compiler writes, so one query means the same
// in SQLite and in PostgreSQL. Values stay `?` parameters in both (placeholders.ts numbers
// them for node-postgres); the resolver's field expression is the only other SQL.
//
// The rules both dialects keep (docs/api.md, "Query language"):
// - Strings fold ASCII letters only, whatever the database's locale: SQLite's NOCASE and
//   lower(); in PostgreSQL lower() under COLLATE "C". Order is then by bytes (code points).
// - Numbers compare as numbers (PostgreSQL: numeric), booleans as booleans, dates as
//   instants (PostgreSQL: timestamptz; SQLite: canonical UTC text, see compile.ts).
// - NULL (no value, or a JSON null) sorts first ascending and last descending, as in SQLite.
// - An empty filter is `1` in SQLite and `TRUE` in PostgreSQL, which wants a boolean.
import type { FieldType } from './types.js';

export type Dialect = 'sqlite' | 'postgres';

export interface Spelling {
  always: string;
  never: string;
  /** `x IS NULL`, or `x IS NOT NULL` when negated. */
  isNull(x: string, negated?: boolean): string;
  /** The field as `=`, `!=`, `<`… compare it. */
  operand(x: string, type: FieldType): string;
  /** A parameter compared with a field of `type`. */
  param(type: FieldType): string;
  /** Case-insensitive "contains" of the parameter, literally (no wildcards). */
  contains(x: string): string;
  order(x: string, type: FieldType, descending: boolean): string;
}

const sqlite: Spelling = {
  always: '1',
  never: '0',
  isNull: (x, negated) => `${x} IS ${negated ? 'NOT ' : ''}NULL`,
  operand: (x) => x,
  // `x = ? COLLATE NOCASE` rather than lower() on both sides, so a NOCASE index on x is used.
  param: (type) => (type === 'string' ? '? COLLATE NOCASE' : '?'),
  contains: (x) => `instr(lower(${x}), lower(?)) > 0`,
  order: (x, type, descending) => `${x}${type === 'string' ? ' COLLATE NOCASE' : ''} ${descending ? 'DESC' : 'ASC'}`,
};

// PostgreSQL casts every parameter: node-postgres sends text, and an uncast `?` would take
// the field's type (an integer column would refuse `1.5`).
const PG_PARAM: Record<FieldType, string> = {
  string: 'lower(?::text COLLATE "C")',
  number: '?::numeric',
  // The compiler binds booleans as 1 and 0, which PostgreSQL reads as true and false.
  boolean: '?::boolean',
  date: '?::timestamptz',
};

/** ASCII-only lowercase: under COLLATE "C", lower() leaves every other letter as it is. */
const pgFolded = (x: string) => `lower((${x}) COLLATE "C")`;

const postgres: Spelling = {
  always: 'TRUE',
  never: 'FALSE',
  isNull: (x, negated) => `(${x}) IS ${negated ? 'NOT ' : ''}NULL`,
  operand: (x, type) => (type === 'string' ? pgFolded(x) : `(${x})`),
  param: (type) => PG_PARAM[type],
  contains: (x) => `strpos(${pgFolded(x)}, ${PG_PARAM.string}) > 0`,
  order: (x, type, descending) => `${postgres.operand(x, type)} ${descending ? 'DESC NULLS LAST' : 'ASC NULLS FIRST'}`,
};

export const SPELLINGS: Readonly<Record<Dialect, Spelling>> = { sqlite, postgres };
