// Sync settings (per account, company_id '', or per company) and the data configurations
// (supplemental data, custom data types) on PostgreSQL: ../sqlite/sync-settings.ts and
// ../sqlite/data-configs.ts statement by statement. Each document is json holding the text SQLite
// holds; writes are one upsert.
import type { AsyncStore } from '../async-store.js';
import type { DataConfigStore, SyncSettingStore } from '../store.js';
import { CONFIG_TABLES as TABLE } from '../data-configs.js';
import type { SyncSetting } from '../sync-settings.js';
import { row, run, type Queryable } from './query.js';

type SettingMethods = keyof SyncSettingStore | keyof DataConfigStore;

export function settingMethods(db: Queryable): Pick<AsyncStore, SettingMethods> {
  return {
    readSettings: async (clientId, companyId = '') => {
      const found = await row<{ settings: string }>(db, 'SELECT settings FROM sync_settings WHERE client_id = ? AND company_id = ?', [clientId, companyId]);
      return found ? (JSON.parse(found.settings) as SyncSetting[]) : undefined;
    },
    writeSettings: async (clientId, companyId, settings) => {
      await run(db, `INSERT INTO sync_settings (client_id, company_id, settings) VALUES (?, ?, ?)
                     ON CONFLICT (client_id, company_id) DO UPDATE SET settings = excluded.settings`, [clientId, companyId, JSON.stringify(settings)]);
    },
    readDataConfig: async (kind, clientId, platformKey, name) => {
      const { table, key } = TABLE[kind];
      const found = await row<{ config: string }>(db, `SELECT config FROM ${table} WHERE client_id = ? AND platform_key = ? AND ${key} = ?`, [clientId, platformKey, name]);
      return found ? (JSON.parse(found.config) as unknown) : undefined;
    },
    writeDataConfig: async (kind, clientId, platformKey, name, config) => {
      const { table, key } = TABLE[kind];
      await run(db, `INSERT INTO ${table} (client_id, platform_key, ${key}, config) VALUES (?, ?, ?, ?)
                     ON CONFLICT (client_id, platform_key, ${key}) DO UPDATE SET config = excluded.config`, [clientId, platformKey, name, JSON.stringify(config)]);
    },
  };
}
