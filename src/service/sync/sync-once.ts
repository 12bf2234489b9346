// One pass of the background work: run the pulls that are due (up to the concurrency
// bound, each to completion or to its next retry time), then poll pending pushes.
// The start/stop loop in loop.ts calls this; tests call it directly with a fake clock.
import { isoSeconds } from '../../lib/clock.js';
import type { SyncDeps } from './deps.js';
import { pollPendingPushes } from './push-poll.js';
import { runPull, LEASE_SECONDS } from './run-pull.js';
import { queueScheduledSyncs } from './schedule.js';

export interface PassResult {
  pulls: number;
  pushes: number;
  scheduled: number;
}

export async function syncOnce(deps: SyncDeps): Promise<PassResult> {
  const { store, clock } = deps;
  const scheduled = queueScheduledSyncs(store, clock);
  const now = isoSeconds(clock.now());
  const lease = isoSeconds(new Date(clock.now().getTime() + LEASE_SECONDS * 1000));
  const claimed = store.claimablePulls(now, deps.concurrency ?? 4).filter((pull) => store.leasePull(pull.id, now, lease));
  await Promise.all(claimed.map((pull) => runPull(deps, pull)));
  const pushes = await pollPendingPushes(deps);
  return { pulls: claimed.length, pushes, scheduled };
}
