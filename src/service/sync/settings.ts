// Effective sync settings: a company's override, else the account's profile, else the
// defaults (every data type daily, no fetch on first link: the seed's token route has none).
import { DATA_TYPES } from '../../platforms/data-types.js';
import type { AsyncStore } from '../store/async-store.js';
import type { SyncSetting } from '../store/sync-settings.js';

export const DEFAULT_SYNC_SCHEDULE_HOURS = 24;

export function defaultSettings(): SyncSetting[] {
  return DATA_TYPES.map((t, i) => ({ dataType: t.key, fetchOnFirstLink: false, syncSchedule: DEFAULT_SYNC_SCHEDULE_HOURS, syncOrder: i }));
}

/** Accounts' profiles already read, by account: a caller asking for many companies reads each once. */
export type ProfileSettings = Map<string, Promise<SyncSetting[] | undefined>>;

export async function effectiveSettings(
  store: AsyncStore, clientId: string, companyId?: string, profiles?: ProfileSettings,
): Promise<{ settings: SyncSetting[]; overridesDefaults: boolean }> {
  const company = companyId ? await store.readSettings(clientId, companyId) : undefined;
  if (company) return { settings: company, overridesDefaults: true };
  let read = profiles?.get(clientId);
  if (!read) {
    read = store.readSettings(clientId);
    profiles?.set(clientId, read);
  }
  const profile = await read;
  if (profile) return { settings: profile, overridesDefaults: companyId === undefined };
  return { settings: defaultSettings(), overridesDefaults: false };
}
