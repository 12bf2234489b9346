// Reads and writes for many items at once on PostgreSQL, as ../sqlite/grouped.ts.
import type { AsyncStore } from '../async-store.js';
import { CONFIG_TABLES } from '../data-configs.js';
import type { GroupedStore } from '../store.js';
import { rows, type Queryable } from './query.js';

export function groupedMethods(db: Queryable): Pick<AsyncStore, keyof GroupedStore> {
  return {
    readDataConfigs: async (kind, clientId, platformKey) => {
      const { table, key } = CONFIG_TABLES[kind];
      const found = await rows<{ name: string; config: string }>(db, `SELECT ${key} AS name, config FROM ${table} WHERE client_id = ? AND platform_key = ?`,
        [clientId, platformKey]);
      return new Map(found.map((row) => [row.name, JSON.parse(row.config) as unknown]));
    },
  };
}
