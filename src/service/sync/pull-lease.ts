// A pull's lease while this worker runs it. The value of lease_until this worker last wrote
// is its token (store/sqlite/pulls.ts, store/pg/pulls.ts): every write of the running pull
// is conditional on it, so a worker that lost the pull (paused past its lease, and another
// worker took it) writes nothing more and stops. A heartbeat renews each lease held every
// third of its length, so a slow platform page never lets it lapse, and a worker killed
// mid-pull holds its pulls for one lease length at most.
import { isoSeconds, type Clock } from '../../lib/clock.js';
import type { AsyncStore } from '../store/async-store.js';
import type { PullFields, PullRow } from '../store/pulls.js';
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

/** Thrown inside a pull's transaction (rolling it back) when the pull is no longer this worker's. */
export class LeaseLost extends Error {
  constructor(pullId: string) {
    super(`Pull ${pullId} is no longer held by this worker.`);
    this.name = 'LeaseLost';
  }
}

export const leaseUntil = (clock: Clock, seconds: number): string => isoSeconds(new Date(clock.now().getTime() + seconds * 1000));

/** A pull this worker holds, and its token. */
export class HeldPull {
  /** A write found the lease gone: another worker has the pull, or it ended. */
  lost = false;
  private turn: Promise<unknown> = Promise.resolve();

  constructor(readonly id: string, private lease: string) {}

  /**
   * Runs `work` after this pull's earlier writes and renewals: the token never moves under
   * a page's transaction, which would then find the lease gone.
   */
  hold<T>(work: () => Promise<T>): Promise<T> {
    const run = this.turn.then(() => work());
    this.turn = run.catch(() => undefined);
    return run;
  }

  /** Sets `fields` if this worker still holds the pull, else LeaseLost with nothing written. Call inside hold(). */
  async update(store: AsyncStore, fields: PullFields): Promise<void> {
    if (this.lost || !(await store.updatePull(this.id, fields, this.lease))) {
      this.lost = true;
      throw new LeaseLost(this.id);
    }
  }

  /**
   * The pull's final write: as update, answering the pull as written, so the events that
   * report its end need not read it again. Call inside hold().
   */
  async end(store: AsyncStore, fields: PullFields): Promise<PullRow> {
    const written = this.lost ? undefined : await store.updatePullReturning(this.id, fields, this.lease);
    if (!written) {
      this.lost = true;
      throw new LeaseLost(this.id);
    }
    return written;
  }

  renew(store: AsyncStore, until: string): Promise<void> {
    return this.hold(async () => {
      await this.update(store, { lease_until: until });
      this.lease = until;
    });
  }
}

/** The leases of one pass's pulls, renewed every third of their length until each pull ends. */
export class LeaseHeartbeat {
  private readonly held = new Set<HeldPull>();
  private readonly renewing = new Set<HeldPull>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly deps: Pick<SyncDeps, 'store' | 'clock' | 'onError'>, readonly seconds: number) {}

  /** A pull just leased until `until`: renewed from now on, until dropped. */
  hold(id: string, until: string): HeldPull {
    const pull = new HeldPull(id, until);
    this.held.add(pull);
    if (!this.timer) {
      this.timer = setInterval(() => void this.beat(), (this.seconds * 1000) / 3);
      this.timer.unref();
    }
    return pull;
  }

  /** The pull ended (or was lost): no more renewals; the timer stops with the last. */
  drop(pull: HeldPull): void {
    this.held.delete(pull);
    if (this.held.size > 0 || !this.timer) return;
    clearInterval(this.timer);
    this.timer = undefined;
  }

  get beating(): boolean {
    return this.timer !== undefined;
  }

  /** One renewal of every lease held and not being renewed already (the timer's; tests call it). */
  async beat(): Promise<void> {
    const until = leaseUntil(this.deps.clock, this.seconds);
    await Promise.all([...this.held].filter((pull) => !pull.lost && !this.renewing.has(pull)).map(async (pull) => {
      this.renewing.add(pull);
      try {
        await pull.renew(this.deps.store, until);
      } catch (err) {
        // Lost: the pull's next write says so and stops it. Anything else: the next beat tries again.
        if (!(err instanceof LeaseLost)) this.deps.onError?.(err, `pull ${pull.id} lease`);
      } finally {
        this.renewing.delete(pull);
      }
    }));
  }
}
