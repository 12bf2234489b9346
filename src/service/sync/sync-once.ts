// The background work's steps: claim due jobs (a company's due pulls each, job.ts) and run
// each pull to completion, to its next retry time, or until another worker takes it over,
// their leases renewed while they run;
// queue scheduled syncs; poll pending pushes. The loop in loop.ts keeps pulls running as
// slots free up; syncOnce runs the steps once, in order, for tests on a fake clock.
import { isoSeconds } from '../../lib/clock.js';
import type { SyncDeps } from './deps.js';
import { DEFAULT_LEASE_SECONDS, LeaseHeartbeat, leaseUntil } from './pull-lease.js';
import { pollPendingPushes } from './push-poll.js';
import type { PullJob } from '../store/pulls.js';
import type { ClaimNext } from './job-writes.js';
import { runJob } from './job.js';
import { queueScheduledSyncs } from './schedule.js';

export interface PassResult {
  /** Pulls run, in all the jobs. */
  pulls: number;
  /** The request thread was busy: the pass ran one job, and the loop pauses before the next. */
  yielded: boolean;
  pushes: number;
  scheduled: number;
}

/** Jobs run at once unless SyncDeps.concurrency says otherwise. */
export const DEFAULT_CONCURRENCY = 4;

/** A job running: its pulls' count, and its end, with the next job when it claimed one (claimNext). */
export interface StartedJob {
  pulls: number;
  run: Promise<PullJob | undefined>;
}

/**
 * Claims up to `limit` due jobs (their leases in one commit; none claimed writes nothing;
 * workers claiming at once each get other companies) and starts each, its leases renewed by
 * `heartbeat`; each returned promise settles when its job has ended here.
 */
export async function startJobs(deps: SyncDeps, heartbeat: LeaseHeartbeat, limit: number, claimNext?: ClaimNext): Promise<StartedJob[]> {
  const { clock } = deps;
  const now = isoSeconds(clock.now());
  const lease = leaseUntil(clock, heartbeat.seconds);
  const claimed = await deps.store.claimJobs(now, lease, limit);
  return claimed.map((job) => startJob(deps, heartbeat, job, claimNext));
}

/** Runs a job claimed (by startJobs, or in the last transaction of the job before), its leases renewed by `heartbeat` until it ends. */
export function startJob(deps: SyncDeps, heartbeat: LeaseHeartbeat, job: PullJob, claimNext?: ClaimNext): StartedJob {
  const held = heartbeat.hold(job.lease);
  return { pulls: job.pulls.length, run: runJob(deps, job, held, claimNext).finally(() => heartbeat.drop(held)) };
}

/** One pass: scheduled syncs queued, due pulls run to their end, pending pushes polled (tests drive passes one by one). */
export async function syncOnce(deps: SyncDeps): Promise<PassResult> {
  const scheduled = await queueScheduledSyncs(deps.store, deps.clock);
  const yielded = deps.busy?.() ?? false;
  const heartbeat = new LeaseHeartbeat(deps, deps.leaseSeconds ?? DEFAULT_LEASE_SECONDS);
  const running = await startJobs(deps, heartbeat, yielded ? 1 : deps.concurrency ?? DEFAULT_CONCURRENCY);
  // Every job to its end before the pass ends (a stop waits for them), even if one failed.
  const ran = await Promise.allSettled(running.map((job) => job.run));
  const failed = ran.find((result) => result.status === 'rejected');
  if (failed) throw failed.reason;
  const pushes = await pollPendingPushes(deps);
  const pulls = running.reduce((sum, job) => sum + job.pulls, 0);
  return { pulls, yielded: yielded && running.length > 0, pushes, scheduled };
}
