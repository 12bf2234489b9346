// First start on an empty data dir: create the admin account and write its key to
// <data-dir>/admin.key (0600), the one place the CLI's embedded target reads it from.
// Instances sharing one PostgreSQL database share its admin account: the first to start
// creates it (the caller holds a lock across instances, open-store.ts), and each writes a
// key of that account into its own data dir.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isoSeconds, type Clock } from '../lib/clock.js';
import { hashApiKey } from './api-keys.js';
import type { AsyncStore } from './store/async-store.js';

export const ADMIN_KEY_FILE = 'admin.key';

export async function ensureAdmin(store: AsyncStore, dataDir: string, clock: Clock): Promise<string> {
  const file = join(dataDir, ADMIN_KEY_FILE);
  return store.transaction(async (tx) => {
    const admin = (await tx.findAdminClient()) ?? await tx.insertClient({ name: 'ferry admin', plan: 'Paid', created: isoSeconds(clock.now()), isAdmin: true });
    if (existsSync(file)) {
      const key = readFileSync(file, 'utf8').trim();
      const row = await tx.findApiKeyByHash(hashApiKey(key));
      if (row && !row.revoked && row.client_id === admin.id) return key;
    }
    // No usable key on disk (first start, the file was removed or its key revoked, or
    // another instance made the account).
    const { apiKey } = await tx.insertApiKey(admin.id, isoSeconds(clock.now()));
    writeFileSync(file, `${apiKey}\n`, { mode: 0o600 });
    return apiKey;
  });
}
