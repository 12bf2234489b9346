// The start/stop loop of the background work. It keeps up to `concurrency` jobs (a
// company's pulls each, job.ts) running, claiming more as each ends (a long one never holds
// up the others' successors), queues
// scheduled syncs and polls pending pushes between claims, and idles (until woken or the
// poll interval passes) when nothing is due. While clients keep the request thread busy
// (request-load.ts) it runs one job at a time, pausing after each. On stop it waits for the pulls in flight, so a pull
// is never cut off between its transactions by us. The leases a killed worker left run
// out; the embedded service frees them before its threads start (app-background.ts).
import { isoSeconds } from '../../lib/clock.js';
import type { AsyncStore } from '../store/async-store.js';
import type { PullJob } from '../store/pulls.js';
import type { SyncDeps } from './deps.js';
import { freeJob } from './job.js';
import { DEFAULT_LEASE_SECONDS, LeaseHeartbeat, leaseUntil, MIN_LEASE_SECONDS } from './pull-lease.js';
import { pollPendingPushes } from './push-poll.js';
import { queueScheduledSyncs } from './schedule.js';
import { DEFAULT_CONCURRENCY, startJob, startJobs } from './sync-once.js';

/** The pause after a job started while clients keep the request thread busy (request-load.ts). */
const YIELD_MS = 20;
/**
 * Scheduled syncs and pending pushes are looked at this often while pulls keep the loop
 * turning (at every turn when none run). A second: a pending push waits on its platform for
 * seconds to minutes, schedules are minutes apart, and at 200 ms the pending pushes' read was
 * a third of a statement per migrated row on PostgreSQL.
 */
const HOUSEKEEPING_MS = 1_000;

export class SyncLoop {
  private stopping = false;
  private running: Promise<void> | undefined;
  private wakeUp: (() => void) | undefined;
  private yielding = false;
  /** A wake that came while the loop was busy: its next idle ends at once. */
  private woken = false;
  private readonly inFlight = new Set<Promise<void>>();
  private toldClaimed = false;

  constructor(private readonly deps: SyncDeps, private readonly idleMs = 500) {
    const seconds = deps.leaseSeconds;
    if (seconds !== undefined && !(Number.isInteger(seconds) && seconds >= MIN_LEASE_SECONDS)) {
      throw new RangeError(`A pull lease is a whole number of seconds, at least ${MIN_LEASE_SECONDS}.`);
    }
  }

  start(): void {
    this.running ??= this.run();
  }

  wake(): void {
    // More work queued does not cut short a pause for a busy request thread: that is what keeps it busy.
    if (this.yielding) return;
    this.woken = true;
    this.wakeUp?.();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.wakeUp?.();
    await this.running;
  }

  private async run(): Promise<void> {
    const { deps } = this;
    const heartbeat = new LeaseHeartbeat(deps, deps.leaseSeconds ?? DEFAULT_LEASE_SECONDS);
    const concurrency = deps.concurrency ?? DEFAULT_CONCURRENCY;
    let housekeptAt = -Infinity;
    while (!this.stopping) {
      let claimed = 0;
      let yielded = false;
      let failed = false;
      try {
        if (this.inFlight.size === 0 || Date.now() - housekeptAt >= HOUSEKEEPING_MS) {
          housekeptAt = Date.now();
          await queueScheduledSyncs(deps.store, deps.clock);
          await pollPendingPushes(deps);
        }
        yielded = deps.busy?.() ?? false;
        const slots = yielded ? (this.inFlight.size === 0 ? 1 : 0) : concurrency - this.inFlight.size;
        if (slots > 0) {
          const jobs = await startJobs(deps, heartbeat, slots, this.claimNext(heartbeat));
          claimed = jobs.length;
          if (claimed > 0) this.claimedOnce();
          for (const job of jobs) this.track(job.run, heartbeat);
        }
      } catch (err) {
        failed = true;
        deps.onError?.(err, 'sync pass');
      }
      if (this.stopping) break;
      if (yielded && this.inFlight.size > 0) await this.idle(YIELD_MS, true);
      // Nothing more due (or every slot taken): until a pull ends, work is queued, or the poll interval.
      else if (failed || claimed === 0 || this.inFlight.size >= concurrency) await this.idle(this.idleMs, false);
    }
    await Promise.allSettled([...this.inFlight]);
  }

  private claimedOnce(): void {
    if (this.toldClaimed) return;
    this.toldClaimed = true;
    this.deps.onClaimed?.();
  }

  /**
   * A job ending claims the next in its last transaction (one commit for both) while the
   * loop runs freely: not while it stops, nor while clients keep the request thread busy
   * (then it claims one job a pass, pausing between).
   */
  private claimNext(heartbeat: LeaseHeartbeat): (tx: AsyncStore) => Promise<PullJob | undefined> {
    return async (tx) => {
      if (this.stopping || this.deps.busy?.()) return undefined;
      const { clock } = this.deps;
      return (await tx.claimJobs(isoSeconds(clock.now()), leaseUntil(clock, heartbeat.seconds), 1))[0];
    };
  }

  /**
   * A job in flight: when it ends, the job it claimed runs in its slot, and otherwise its
   * slot is free and the loop looks for more at once.
   */
  private track(run: Promise<PullJob | undefined>, heartbeat: LeaseHeartbeat): void {
    const tracked = run
      .then(async (next) => {
        if (!next) return;
        if (this.stopping) await freeJob(this.deps, next);
        // Tracked before this one is let go: the slot is never seen free in between.
        else this.track(startJob(this.deps, heartbeat, next, this.claimNext(heartbeat)).run, heartbeat);
      })
      .catch((err: unknown) => this.deps.onError?.(err, 'pull'))
      .finally(() => {
        this.inFlight.delete(tracked);
        this.wake();
      });
    this.inFlight.add(tracked);
  }

  private idle(ms: number, yielding: boolean): Promise<void> {
    if (!yielding && this.woken) {
      this.woken = false;
      return Promise.resolve();
    }
    this.yielding = yielding;
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.yielding = false;
        this.woken = false;
        this.wakeUp = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wakeUp = done;
    });
  }
}
