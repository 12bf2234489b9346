// A company's sync is one job: the worker claims every claimable pull of the company under
// one lease (store claimJobs), reads each connection and its tokens once, fetches a few data
// types at a time, and writes their pages through one writer that groups them into few
// transactions (job-writes.ts). Each data type keeps its own pull: its status, progress,
// errors and events are what they were when a pull ran alone, and its failure ends only it.
import type { PullJob, PullRow } from '../store/pulls.js';
import type { SyncDeps } from './deps.js';
import { ConnectionAccess } from './connection-access.js';
import { backgroundEvents } from './events.js';
import { JobWriter } from './job-writes.js';
import { jobSignals } from './job-signals.js';
import type { HeldJob } from './pull-lease.js';
import { runPull, type JobShare, type PullOutcome } from './run-pull.js';

/** Data types of a job fetched at once: the platform prepares the next while one is written. */
export const FETCH_AHEAD = 3;

/** Runs the job's pulls to their ends (or retry times); settles when all have. */
export async function runJob(deps: SyncDeps, job: PullJob, held: HeldJob): Promise<void> {
  const writer = new JobWriter(deps.store, backgroundEvents(deps), held, job.companyId);
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
  if (failed) throw failed.reason;
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
