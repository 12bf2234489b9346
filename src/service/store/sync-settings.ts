// Sync settings as both stores keep them (sqlite/sync-settings.ts, pg/settings.ts).

export interface SyncSetting {
  dataType: string;
  fetchOnFirstLink: boolean;
  syncSchedule: number;
  syncOrder: number;
  syncFromUtc?: string;
  syncFromWindow?: number;
  monthsToSync?: number;
  isLocked?: boolean;
}
