// A company's sync is one job: the worker claims every claimable pull of the company under
// one lease (store claimJobs), reads each connection and its tokens once, fetches a few data
// types at a time, and writes their pages through one writer that groups them into few
// transactions (job-writes.ts). Each data type keeps its own pull: its status, progress,
// errors and events are what they were when a pull ran alone, and its failure ends only it.
import type { PullJob, PullRow } from '../store/pulls.js';
import type { SyncDeps } from './deps.js';
import { ConnectionAccess } from './connection-access.js';
import { backgroundEvents } from './events.js';
import { JobWriter, type ClaimNext } from './job-writes.js';
import { jobSignals } from './job-signals.js';
import type { HeldJob } from './pull-lease.js';
import { runPull, type JobShare, type PullOutcome } from './run-pull.js';

/** Data types of a job fetched at once: the platform prepares the next while one is written. */
export const FETCH_AHEAD = 3;

/**
 * Runs the job's pulls to their ends (or retry times); settles when all have, with the next
 * job when `claimNext` claimed one in this job's last transaction (its lease is then the
 * caller's to run or free).
 */
export async function runJob(deps: SyncDeps, job: PullJob, held: HeldJob, claimNext?: ClaimNext): Promise<PullJob | undefined> {
  const writer = new JobWriter(deps.store, backgroundEvents(deps), held, job.companyId, claimNext);
  const share: JobShare = { access: new ConnectionAccess(deps), writer, fetchSlot: slots(FETCH_AHEAD) };
  const pulls = job.pulls.map((pull) => ({ pull, held: held.pull(pull.id) }));
  writer.running = pulls.length;
  const ran = await Promise.allSettled(pulls.map(async ({ pull, held: heldPull }) => {
    try {
      return { pull, outcome: await runPull({ deps, pull, held: heldPull, ...share }) };
    } finally {
      writer.running -= 1;
      writer.check();
    }
  }));
  const ended: Array<{ pull: PullRow; outcome: PullOutcome }> = [];
  for (const result of ran) if (result.status === 'fulfilled') ended.push(result.value);
  // A pull that failed here (its database gone, say) is free for any worker at once, where it can be.
  const left = [...held.open.keys()];
  if (left.length > 0) await deps.store.releasePullLeases(left, held.lease).catch((err: unknown) => deps.onError?.(err, 'pull leases'));
  jobSignals(deps, ended);
  const failed = ran.find((result) => result.status === 'rejected');
  if (failed) {
    // The next job, claimed before this one failed here, is free for any worker at once.
    if (writer.claimed) await freeJob(deps, writer.claimed);
    throw failed.reason;
  }
  return writer.claimed;
}

/** A job claimed and not to be run here: its leases freed, so any worker takes it at once. */
export async function freeJob(deps: SyncDeps, job: PullJob): Promise<void> {
  await deps.store.releasePullLeases(job.pulls.map((pull) => pull.id), job.lease).catch((err: unknown) => deps.onError?.(err, 'pull leases'));
}

/** At most `count` of the functions given run at once; the others wait their turn. */
function slots(count: number): JobShare['fetchSlot'] {
  let free = count;
  const waiting: Array<() => void> = [];
  return async (fetch) => {
    if (free > 0) free -= 1;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      return await fetch();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else free += 1;
    }
  };
}
