// Resolver expressions for a field inside a JSON column, read as its query type, in each
// dialect: SQLite's JSON text with json_extract, PostgreSQL's json with `->` / `->>`
// (json, not jsonb: the store keeps documents as written; the same operators read both).
// The column and the keys become SQL text, so both are checked against safe shapes here.
//
// What each type reads, the same in both dialects for values of the field's type:
// - string: the text. A number or boolean under a string path reads differently
//   (SQLite compares it as a number, PostgreSQL as its JSON text): outside the contract.
// - number: the number (PostgreSQL numeric; anything but a JSON number has no value).
// - boolean: true/false (anything but a JSON boolean has no value in PostgreSQL).
// - date: ISO 8601 text, `YYYY-MM-DD` with optional `THH:MM[:SS[.fraction]]` (or a space
//   for `T`) and `Z` or `±HH:MM` (hours up to 14); no zone means UTC. It reads as that
//   instant, cut to the whole second. Any other text, or a date that is not on the calendar
//   (2021-02-30), has no value, and never makes the query fail. Out of the contract: a few
//   spellings only SQLite reads (year 0000, the hour 24, a space before the zone). A bare
//   json_extract (what an index can hold) agrees only while dates are canonical UTC text.
// A key is a member name, never an array index, in both (`items.0` is the member "0").
import type { Dialect } from './dialect.js';
import type { FieldType } from './types.js';

const COLUMN = /^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)?$/;
const KEY = /^[A-Za-z0-9_.-]{1,64}$/;
const PLAIN_KEY = /^[A-Za-z0-9_]+$/;

/** The expression of `keys` (a path, one member name each) inside JSON `column`, as a `type`. */
export function jsonField(dialect: Dialect, column: string, keys: readonly string[], type: FieldType): string {
  if (!COLUMN.test(column)) throw new Error('Unsafe column reached jsonField.');
  if (keys.length === 0 || !keys.every((key) => KEY.test(key))) throw new Error('Unsafe JSON key reached jsonField.');
  return dialect === 'sqlite' ? sqliteField(column, keys, type) : postgresField(column, keys, type);
}

function sqliteField(column: string, keys: readonly string[], type: FieldType): string {
  const path = keys.map((key) => (PLAIN_KEY.test(key) ? `.${key}` : `."${key}"`)).join('');
  const value = `json_extract(${column}, '$${path}')`;
  return type === 'date' ? sqliteDate(value) : value;
}

function postgresField(column: string, keys: readonly string[], type: FieldType): string {
  const parents = keys.slice(0, -1).map((key) => ` -> '${key}'`).join('');
  const last = keys[keys.length - 1]!;
  if (type === 'string') return `(${column}${parents} ->> '${last}')`;
  if (type === 'date') return postgresDate(`(${column}${parents} ->> '${last}')`);
  // json has no cast to numeric or boolean (jsonb has): the type from `->`, the value from `->>`.
  const value = `(${column}${parents} -> '${last}')`;
  const text = `(${column}${parents} ->> '${last}')`;
  const jsonType = type === 'number' ? 'number' : 'boolean';
  return `(CASE WHEN json_typeof(${value}) = '${jsonType}' THEN ${text}::${type === 'number' ? 'numeric' : 'boolean'} END)`;
}

/**
 * Text holding an ISO date (see above) as canonical UTC text `YYYY-MM-DDTHH:MM:SSZ`, the
 * form SQLite compares dates in; NULL for text that is no calendar date.
 */
export function sqliteDate(text: string): string {
  return `(CASE WHEN date(substr(${text}, 1, 10)) = substr(${text}, 1, 10) THEN strftime('%Y-%m-%dT%H:%M:%SZ', ${text}) END)`;
}

// The calendar, leap days included, so the cast below never meets a date it refuses.
// No `?` (a placeholder to placeholders.ts) and no backslash: `{0,1}` and `[.]` instead.
const YEAR = '(000[1-9]|00[1-9][0-9]|0[1-9][0-9]{2}|[1-9][0-9]{3})';
const LEAP_YEAR = '([0-9]{2}(0[48]|[2468][048]|[13579][26])|([2468][048]|[13579][26]|0[48])00)';
const DAY = `(${YEAR}-(0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])|${YEAR}-(0[469]|11)-(0[1-9]|[12][0-9]|30)`
  + `|${YEAR}-02-(0[1-9]|1[0-9]|2[0-8])|${LEAP_YEAR}-02-29)`;
const TIME = '[T ]([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9]([.][0-9]+){0,1}){0,1}';
const ZONE = '([Zz]|[+-](0[0-9]|1[0-4]):[0-5][0-9])';

/**
 * Text holding an ISO date (see above) as a timestamptz cut to the second; NULL for text
 * that is no calendar date. Independent of the session's TimeZone.
 */
export function postgresDate(text: string): string {
  return `(CASE WHEN ${text} ~ '^${DAY}${TIME}${ZONE}$' THEN date_trunc('second', (${text})::timestamptz)`
    + ` WHEN ${text} ~ '^${DAY}(${TIME}){0,1}$' THEN date_trunc('second', (${text})::timestamp) AT TIME ZONE 'UTC' END)`;
}
