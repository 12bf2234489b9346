// Scheduled syncs: a data set that has been synced before is queued again once its
// syncSchedule (hours) has passed since it was last requested. Data sets never requested
// are left alone: the service does not fetch on first link. A check reads only the data
// sets requested at least the shortest schedule ago (an hour), and each account's settings
// once: a migration's thousands of companies, all just synced, cost it one read.
import type { Clock } from '../../lib/clock.js';
import type { AsyncStore } from '../store/async-store.js';
import { queuePull } from './enqueue.js';
import { effectiveSettings, type ProfileSettings } from './settings.js';
import { isoSeconds } from '../../lib/clock.js';

/** How often (by the clock) the due data sets are looked for. */
const CHECK_EVERY_MS = 60_000;
/** The shortest syncSchedule there is (routes/sync-settings.ts): a data set requested since is due under none. */
const SHORTEST_SCHEDULE_MS = 3_600_000;
const lastCheck = new WeakMap<AsyncStore, number>();

export async function queueScheduledSyncs(store: AsyncStore, clock: Clock): Promise<number> {
  const now = clock.now().getTime();
  const previous = lastCheck.get(store);
  if (previous !== undefined && now - previous < CHECK_EVERY_MS && now >= previous) return 0;
  // Marked before the first await: a pass that starts meanwhile does not look again.
  lastCheck.set(store, now);
  const candidates = await store.scheduleCandidates(isoSeconds(new Date(now - SHORTEST_SCHEDULE_MS)));
  const schedules = new Map<string, Map<string, number>>();
  const profiles: ProfileSettings = new Map();
  let queued = 0;
  for (const candidate of candidates) {
    const scope = `${candidate.client_id}/${candidate.company_id}`;
    let byType = schedules.get(scope);
    if (!byType) {
      byType = new Map((await effectiveSettings(store, candidate.client_id, candidate.company_id, profiles)).settings.map((s) => [s.dataType, s.syncSchedule]));
      schedules.set(scope, byType);
    }
    const hours = byType.get(candidate.data_type);
    if (!hours || Date.parse(candidate.last_requested) + hours * 3_600_000 > now) continue;
    const latest = await store.latestPullConnectionId(candidate.company_id, candidate.data_type);
    const connection = (latest && await store.getConnectionById(latest))
      || (await store.listConnections(candidate.company_id, { page: 1, pageSize: 100 })).rows.find((c) => c.status === 'Linked');
    if (!connection || connection.status !== 'Linked') continue;
    // Every worker checks: the candidates read above may be stale by now (another worker
    // queued the data set, and its pull may even have ended). Looked at again once the
    // company is locked (openPull), so each due data set is queued once.
    if (await store.transaction(async (tx) => {
      if (await tx.openPull(candidate.company_id, candidate.data_type)) return false;
      if ((await tx.getDataset(candidate.company_id, candidate.data_type))?.last_requested !== candidate.last_requested) return false;
      await queuePull(tx, clock, connection, candidate.data_type);
      return true;
    })) queued += 1;
  }
  return queued;
}

/** Tests move a fake clock around; this lets the next pass look again at once. */
export function resetScheduleCheck(store: AsyncStore): void {
  lastCheck.delete(store);
}
