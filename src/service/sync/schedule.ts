// Scheduled syncs: a data set that has been synced before is queued again once its
// syncSchedule (hours) has passed since it was last requested. Data sets never requested
// are left alone: the service does not fetch on first link.
import type { Clock } from '../../lib/clock.js';
import { getConnectionById, listConnections } from '../store/connections.js';
import type { Db } from '../store/db.js';
import { latestPullConnectionId } from '../store/pulls.js';
import { scheduleCandidates } from '../store/datasets.js';
import { queuePull } from './enqueue.js';
import { effectiveSettings } from './settings.js';

/** How often (by the clock) the due data sets are looked for. */
const CHECK_EVERY_MS = 60_000;
const lastCheck = new WeakMap<Db, number>();

export function queueScheduledSyncs(db: Db, clock: Clock): number {
  const now = clock.now().getTime();
  const previous = lastCheck.get(db);
  if (previous !== undefined && now - previous < CHECK_EVERY_MS && now >= previous) return 0;
  lastCheck.set(db, now);
  const candidates = scheduleCandidates(db);
  const schedules = new Map<string, Map<string, number>>();
  let queued = 0;
  for (const candidate of candidates) {
    const scope = `${candidate.client_id}/${candidate.company_id}`;
    let byType = schedules.get(scope);
    if (!byType) {
      byType = new Map(effectiveSettings(db, candidate.client_id, candidate.company_id).settings.map((s) => [s.dataType, s.syncSchedule]));
      schedules.set(scope, byType);
    }
    const hours = byType.get(candidate.data_type);
    if (!hours || Date.parse(candidate.last_requested) + hours * 3_600_000 > now) continue;
    const latest = latestPullConnectionId(db, candidate.company_id, candidate.data_type);
    const connection = (latest && getConnectionById(db, latest))
      || listConnections(db, candidate.company_id, { page: 1, pageSize: 100 }).rows.find((c) => c.status === 'Linked');
    if (!connection || connection.status !== 'Linked') continue;
    queuePull(db, clock, connection, candidate.data_type);
    queued += 1;
  }
  return queued;
}

/** Tests move a fake clock around; this lets the next pass look again at once. */
export function resetScheduleCheck(db: Db): void {
  lastCheck.delete(db);
}
