// The background work's steps: claim due pulls and run each to completion, to its next
// retry time, or until another worker takes it over, their leases renewed while they run;
// queue scheduled syncs; poll pending pushes. The loop in loop.ts keeps pulls running as
// slots free up; syncOnce runs the steps once, in order, for tests on a fake clock.
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

/** Pulls run at once unless SyncDeps.concurrency says otherwise. */
export const DEFAULT_CONCURRENCY = 4;

/**
 * Claims up to `limit` due pulls (the leases in one commit; none claimed writes nothing;
 * workers claiming at once each get other pulls) and starts each, its lease renewed by
 * `heartbeat`; each returned promise settles when its pull has ended here.
 */
export async function startPulls(deps: SyncDeps, heartbeat: LeaseHeartbeat, limit: number): Promise<Array<Promise<void>>> {
  const { clock } = deps;
  const now = isoSeconds(clock.now());
  const lease = leaseUntil(clock, heartbeat.seconds);
  const claimed = await deps.store.claimPulls(now, lease, limit);
  return claimed.map(async (pull) => {
    const held = heartbeat.hold(pull.id, lease);
    try {
      const outcome = await runPull(deps, pull, held);
      const sinceRequested = (clock.now().getTime() - Date.parse(pull.requested)) / 1000;
      deps.signals?.pullRan({ pullId: pull.id, companyId: pull.company_id, dataType: pull.data_type, outcome, sinceRequested });
    } finally {
      heartbeat.drop(held);
    }
  });
}

/** One pass: scheduled syncs queued, due pulls run to their end, pending pushes polled (tests drive passes one by one). */
export async function syncOnce(deps: SyncDeps): Promise<PassResult> {
  const scheduled = await queueScheduledSyncs(deps.store, deps.clock);
  const yielded = deps.busy?.() ?? false;
  const heartbeat = new LeaseHeartbeat(deps, deps.leaseSeconds ?? DEFAULT_LEASE_SECONDS);
  const running = await startPulls(deps, heartbeat, yielded ? 1 : deps.concurrency ?? DEFAULT_CONCURRENCY);
  // Every pull to its end before the pass ends (a stop waits for them), even if one failed.
  const ran = await Promise.allSettled(running);
  const failed = ran.find((result) => result.status === 'rejected');
  if (failed) throw failed.reason;
  const pushes = await pollPendingPushes(deps);
  return { pulls: running.length, yielded: yielded && running.length > 0, pushes, scheduled };
}
