// Sync settings per account (company_id '') and per company (an override).
import type { Db } from './db.js';
import { prepared } from './statements.js';
import type { SyncSetting } from '../sync-settings.js';

export function readSettings(db: Db, clientId: string, companyId = ''): SyncSetting[] | undefined {
  const row = prepared(db, 'SELECT settings FROM sync_settings WHERE client_id = ? AND company_id = ?').get(clientId, companyId) as { settings: string } | undefined;
  return row ? (JSON.parse(row.settings) as SyncSetting[]) : undefined;
}

export function writeSettings(db: Db, clientId: string, companyId: string, settings: SyncSetting[]): void {
  prepared(db, `INSERT INTO sync_settings (client_id, company_id, settings) VALUES (?, ?, ?)
                ON CONFLICT (client_id, company_id) DO UPDATE SET settings = excluded.settings`).run(clientId, companyId, JSON.stringify(settings));
}
