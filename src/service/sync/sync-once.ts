// One pass of the background work: run the pulls that are due (up to the concurrency
// bound, each to completion, to its next retry time, or until another worker takes it
// over), their leases renewed while they run; then poll pending pushes.
// The start/stop loop in loop.ts calls this; tests call it directly with a fake clock.
import { isoSeconds } from '../../lib/clock.js';
import type { SyncDeps } from './deps.js';
import { DEFAULT_LEASE_SECONDS, LeaseHeartbeat, leaseUntil } from './pull-lease.js';
import { pollPendingPushes } from './push-poll.js';
import { runPull } from './run-pull.js';
import { queueScheduledSyncs } from './schedule.js';

export interface PassResult {
  pulls: number;
  /** The request thread was busy: the pass ran one pull, and the loop pauses before the next. */
  yielded: boolean;
  pushes: number;
  scheduled: number;
}

export async function syncOnce(deps: SyncDeps): Promise<PassResult> {
  const { store, clock } = deps;
  const scheduled = await queueScheduledSyncs(store, clock);
  const now = isoSeconds(clock.now());
  const seconds = deps.leaseSeconds ?? DEFAULT_LEASE_SECONDS;
  const lease = leaseUntil(clock, seconds);
  const yielded = deps.busy?.() ?? false;
  // The leases in one commit; an idle pass (nothing claimable) writes nothing. Workers
  // claiming at once each get other pulls, so none idles while pulls wait.
  const claimed = await store.claimPulls(now, lease, yielded ? 1 : deps.concurrency ?? 4);
  const heartbeat = new LeaseHeartbeat(deps, seconds);
  // Every pull to its end before the pass ends (a stop waits for them), even if one failed.
  const ran = await Promise.allSettled(claimed.map(async (pull) => {
    const held = heartbeat.hold(pull.id, lease);
    try {
      await runPull(deps, pull, held);
    } finally {
      heartbeat.drop(held);
    }
  }));
  const failed = ran.find((result) => result.status === 'rejected');
  if (failed) throw failed.reason;
  const pushes = await pollPendingPushes(deps);
  return { pulls: claimed.length, yielded: yielded && claimed.length > 0, pushes, scheduled };
}
