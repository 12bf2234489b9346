// Effective sync settings: a company's override, else the account's profile, else the
// defaults (every data type daily, no fetch on first link: the seed's token route has none).
import { DATA_TYPES } from '../../platforms/data-types.js';
import type { AsyncStore } from '../store/async-store.js';
import type { SyncSetting } from '../store/sync-settings.js';

export const DEFAULT_SYNC_SCHEDULE_HOURS = 24;

export function defaultSettings(): SyncSetting[] {
  return DATA_TYPES.map((t, i) => ({ dataType: t.key, fetchOnFirstLink: false, syncSchedule: DEFAULT_SYNC_SCHEDULE_HOURS, syncOrder: i }));
}

export async function effectiveSettings(
  store: AsyncStore, clientId: string, companyId?: string,
): Promise<{ settings: SyncSetting[]; overridesDefaults: boolean }> {
  const company = companyId ? await store.readSettings(clientId, companyId) : undefined;
  if (company) return { settings: company, overridesDefaults: true };
  const profile = await store.readSettings(clientId);
  if (profile) return { settings: profile, overridesDefaults: companyId === undefined };
  return { settings: defaultSettings(), overridesDefaults: false };
}
