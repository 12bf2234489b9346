// A job's lease while this worker runs it: a company's pulls, claimed together under one
// lease_until. The value this worker last wrote is its token (store/sqlite/pulls.ts,
// store/pg/pulls.ts): every write of a running pull is conditional on it, so a worker that
// lost a pull (paused past its lease, and another worker took it) writes nothing more of it
// and stops it. A heartbeat renews each job's leases in one statement every third of their
// length, so a slow platform page never lets them lapse, and a worker killed mid-job holds
// its pulls for one lease length at most.
import { isoSeconds, type Clock } from '../../lib/clock.js';
import type { AsyncStore } from '../store/async-store.js';
import type { PullFields } from '../store/pulls.js';
import type { SyncDeps } from './deps.js';

/**
 * Short enough that a killed worker's pulls are taken over within half a minute; long
 * enough that two missed heartbeats (a database slow to answer) do not lose it. Losing one
 * costs little: the next holder fetches the page in hand again, from the cursor.
 */
export const DEFAULT_LEASE_SECONDS = 30;
/** Leases are kept to the second: below this, the heartbeat's renewals could not keep ahead of them. */
export const MIN_LEASE_SECONDS = 3;

export type { PullFields };

/** What a pull's write answers when the pull is no longer this worker's: nothing of the write was written (job-writes.ts). */
export class LeaseLost extends Error {
  constructor(pullId: string) {
    super(`Pull ${pullId} is no longer held by this worker.`);
    this.name = 'LeaseLost';
  }
}

export const leaseUntil = (clock: Clock, seconds: number): string => isoSeconds(new Date(clock.now().getTime() + seconds * 1000));

/**
 * A job this worker holds: a company's pulls under one lease token. Its writes take turns
 * (hold), so the token never moves under a transaction, which would then find it gone.
 */
export class HeldJob {
  private turn: Promise<unknown> = Promise.resolve();
  /** The job's pulls still held: not ended here, not lost to another worker. */
  readonly open = new Map<string, HeldPull>();

  constructor(public lease: string) {}

  /** A pull of the job, held from now until it ends. */
  pull(id: string): HeldPull {
    const held = new HeldPull(id, this);
    this.open.set(id, held);
    return held;
  }

  /** Runs `work` after the job's earlier writes and renewals. */
  hold<T>(work: () => Promise<T>): Promise<T> {
    const run = this.turn.then(() => work());
    this.turn = run.catch(() => undefined);
    return run;
  }

  /** One statement for all the job's open pulls; a pull not renewed is lost (taken over, or ended elsewhere). */
  renew(store: AsyncStore, until: string): Promise<void> {
    return this.hold(async () => {
      if (this.open.size === 0) return;
      const renewed = new Set(await store.renewPullLeases([...this.open.keys()], this.lease, until));
      for (const [id, held] of this.open) if (!renewed.has(id)) held.lose();
      this.lease = until;
    });
  }
}

/** A pull of a job this worker holds. */
export class HeldPull {
  /** A write found the lease gone: another worker has the pull, or it ended. */
  lost = false;

  constructor(readonly id: string, private readonly job: HeldJob) {}

  lose(): void {
    this.lost = true;
    this.job.open.delete(this.id);
  }

  /** The pull's lease was freed (it ended, or waits to retry): the job holds it no more. */
  released(): void {
    this.job.open.delete(this.id);
  }
}

/** The leases of the jobs this worker runs, renewed every third of their length until each job ends. */
export class LeaseHeartbeat {
  private readonly held = new Set<HeldJob>();
  private readonly renewing = new Set<HeldJob>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly deps: Pick<SyncDeps, 'store' | 'clock' | 'onError'>, readonly seconds: number) {}

  /** A job just leased until `lease`: renewed from now on, until dropped. */
  hold(lease: string): HeldJob {
    const job = new HeldJob(lease);
    this.held.add(job);
    if (!this.timer) {
      this.timer = setInterval(() => void this.beat(), (this.seconds * 1000) / 3);
      this.timer.unref();
    }
    return job;
  }

  /** The job ended: no more renewals; the timer stops with the last. */
  drop(job: HeldJob): void {
    this.held.delete(job);
    if (this.held.size > 0 || !this.timer) return;
    clearInterval(this.timer);
    this.timer = undefined;
  }

  get beating(): boolean {
    return this.timer !== undefined;
  }

  /** One renewal of every job held and not being renewed already (the timer's; tests call it). */
  async beat(): Promise<void> {
    const until = leaseUntil(this.deps.clock, this.seconds);
    await Promise.all([...this.held].filter((job) => !this.renewing.has(job)).map(async (job) => {
      this.renewing.add(job);
      try {
        await job.renew(this.deps.store, until);
      } catch (err) {
        // The next beat tries again.
        this.deps.onError?.(err, 'pull leases');
      } finally {
        this.renewing.delete(job);
      }
    }));
  }
}
