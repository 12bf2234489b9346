// Prepared statements cached by SQL text: list endpoints build SQL from the query
// language, and preparing the same text again on every request is measurable.
import type { Statement } from 'better-sqlite3';
import type { Db } from './db.js';

const caches = new WeakMap<Db, Map<string, Statement>>();
const MAX_CACHED = 500;

export function prepared(db: Db, sql: string): Statement {
  let cache = caches.get(db);
  if (!cache) {
    cache = new Map();
    caches.set(db, cache);
  }
  let statement = cache.get(sql);
  if (!statement) {
    if (cache.size >= MAX_CACHED) cache.clear();
    statement = db.prepare(sql);
    cache.set(sql, statement);
  }
  return statement;
}
