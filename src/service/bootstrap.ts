// First start on an empty data dir: create the admin account and write its key to
// <data-dir>/admin.key (0600), the one place the CLI's embedded target reads it from.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isoSeconds, type Clock } from '../lib/clock.js';
import { hashApiKey } from './api-keys.js';
import type { Store } from './store/store.js';

export const ADMIN_KEY_FILE = 'admin.key';

export function ensureAdmin(store: Store, dataDir: string, clock: Clock): string {
  const file = join(dataDir, ADMIN_KEY_FILE);
  const admin = store.findAdminClient() ?? store.insertClient({ name: 'ferry admin', plan: 'Paid', created: isoSeconds(clock.now()), isAdmin: true });
  if (existsSync(file)) {
    const key = readFileSync(file, 'utf8').trim();
    const row = store.findApiKeyByHash(hashApiKey(key));
    if (row && !row.revoked && row.client_id === admin.id) return key;
  }
  // No usable key on disk (first start, or the file was removed or its key revoked).
  const { apiKey } = store.insertApiKey(admin.id, isoSeconds(clock.now()));
  writeFileSync(file, `${apiKey}\n`, { mode: 0o600 });
  return apiKey;
}
