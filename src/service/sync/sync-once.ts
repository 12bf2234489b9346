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
  /** The request thread was busy: the pass ran one pull, and the loop pauses before the next. */
  yielded: boolean;
  pushes: number;
  scheduled: number;
}

export async function syncOnce(deps: SyncDeps): Promise<PassResult> {
  const { store, clock } = deps;
  const scheduled = await queueScheduledSyncs(store, clock);
  const now = isoSeconds(clock.now());
  const lease = isoSeconds(new Date(clock.now().getTime() + LEASE_SECONDS * 1000));
  const yielded = deps.busy?.() ?? false;
  // The leases in one commit; an idle pass (nothing claimable) writes nothing.
  const claimable = await store.claimablePulls(now, yielded ? 1 : deps.concurrency ?? 4);
  const claimed = claimable.length === 0 ? [] : await store.transaction(async (tx) => {
    const leased: typeof claimable = [];
    for (const pull of claimable) if (await tx.leasePull(pull.id, now, lease)) leased.push(pull);
    return leased;
  });
  await Promise.all(claimed.map((pull) => runPull(deps, pull)));
  const pushes = await pollPendingPushes(deps);
  return { pulls: claimed.length, yielded: yielded && claimed.length > 0, pushes, scheduled };
}
