// Supplemental data and custom data type configurations: one JSON document per account,
// platform and data type (or custom identifier). Their shapes are checked by the routes
// (service/data-configs/) before they get here.
import type { Db } from './db.js';
import { prepared } from './statements.js';
import { CONFIG_TABLES as TABLE, type ConfigKind } from '../data-configs.js';


export function readDataConfig(db: Db, kind: ConfigKind, clientId: string, platformKey: string, name: string): unknown {
  const { table, key } = TABLE[kind];
  const row = prepared(db, `SELECT config FROM ${table} WHERE client_id = ? AND platform_key = ? AND ${key} = ?`).get(clientId, platformKey, name) as
    { config: string } | undefined;
  return row ? (JSON.parse(row.config) as unknown) : undefined;
}

export function writeDataConfig(db: Db, kind: ConfigKind, clientId: string, platformKey: string, name: string, config: unknown): void {
  const { table, key } = TABLE[kind];
  prepared(db, `INSERT INTO ${table} (client_id, platform_key, ${key}, config) VALUES (?, ?, ?, ?)
                ON CONFLICT (client_id, platform_key, ${key}) DO UPDATE SET config = excluded.config`).run(clientId, platformKey, name, JSON.stringify(config));
}
