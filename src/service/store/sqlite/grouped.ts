// Reads and writes for many items at once, where a sync job would otherwise make one call
// per data type (sync/job.ts).
import type { Db } from './db.js';
import { prepared } from './statements.js';
import { CONFIG_TABLES, type ConfigKind } from '../data-configs.js';

/** Every configuration of a kind the account has for a platform, by data type (or custom identifier). */
export function readDataConfigs(db: Db, kind: ConfigKind, clientId: string, platformKey: string): Map<string, unknown> {
  const { table, key } = CONFIG_TABLES[kind];
  const found = prepared(db, `SELECT ${key} AS name, config FROM ${table} WHERE client_id = ? AND platform_key = ?`).all(clientId, platformKey) as
    Array<{ name: string; config: string }>;
  return new Map(found.map((row) => [row.name, JSON.parse(row.config) as unknown]));
}
