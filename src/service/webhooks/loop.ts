// The delivery loop of the running service, on the main thread (its work is I/O; each
// database step is one short transaction). A pass claims what is due and delivers it in
// the background, so passes overlap: a slow receiver never holds up the next pass. The
// loop wakes when events are committed (the event bus), when an attempt is recorded (its
// lane's next delivery), when asked (a replay), and on a timer for the next retry. Stop
// cuts the attempts in flight (they are due again, with the same webhook-id), waits for
// every pass and frees the leases: every lease when this is the only loop of its database
// (and at start too: a killed process left them); when loops share it, only its own, which
// its cut-off attempts free as they end.
import type { Agent } from 'undici';
import { isoSeconds } from '../../lib/clock.js';
import { Breakers, type BreakerPolicy } from './breaker.js';
import { DEFAULT_MAX_IN_FLIGHT, startPass, InFlight, type DeliveryDeps } from './deliver-once.js';
import { Recorder } from './outcome.js';
import { targetAgent } from './target-agent.js';
import { TargetPolicy } from './target-policy.js';

export interface WakeSource {
  subscribe(listener: () => void): () => void;
}

export type LoopDeps = Omit<DeliveryDeps, 'inFlight' | 'signal' | 'onSettled' | 'recorder' | 'breakers'> & {
  /** When a consumer's circuit breaker opens, and for how long (default: breaker.ts). */
  breaker?: BreakerPolicy;
  /** Longest sleep between passes when nothing wakes the loop (a lease lost by an error runs out, say). */
  maxIdleMs?: number;
  /**
   * Other loops deliver from this database too (instances on PostgreSQL): leases found at
   * start are theirs, left to run out, and a stop frees only this loop's.
   */
  shared?: boolean;
  /** Where deliveries may connect (default: public addresses only). */
  targets?: TargetPolicy;
};

const DEFAULT_MAX_IDLE_MS = 5_000;
/** After a pass that failed (a busy database): not a tight loop. */
const ERROR_PAUSE_MS = 1_000;

export class DeliveryLoop {
  private stopping = false;
  private running: Promise<void> | undefined;
  private ended = false;
  private wakeUp: (() => void) | undefined;
  private woken = false;
  private unsubscribe: (() => void) | undefined;
  private readonly passes = new Set<Promise<unknown>>();
  private readonly inFlight = new InFlight();
  private readonly abort = new AbortController();
  /** Connections to receivers, kept alive between deliveries; ours to close unless given. */
  private readonly agent: Agent | undefined;
  private readonly deps: DeliveryDeps;
  private readonly maxIdleMs: number;
  private readonly shared: boolean;

  constructor({ maxIdleMs, shared, targets, breaker, ...deps }: LoopDeps, private readonly events: WakeSource) {
    this.maxIdleMs = maxIdleMs ?? DEFAULT_MAX_IDLE_MS;
    this.shared = shared ?? false;
    this.agent = deps.attempt?.dispatcher ? undefined : targetAgent(targets ?? new TargetPolicy());
    this.deps = {
      ...deps,
      attempt: { ...deps.attempt, ...(this.agent ? { dispatcher: this.agent } : {}) },
      inFlight: this.inFlight,
      breakers: new Breakers(breaker),
      signal: this.abort.signal,
      onSettled: () => this.wake(),
      recorder: new Recorder(deps, true),
    };
  }

  start(): void {
    if (this.running) return;
    this.unsubscribe = this.events.subscribe(() => this.wake());
    this.running = this.run().finally(() => (this.ended = true));
  }

  /** Started, not stopped, and its loop still turning (readiness asks). */
  get alive(): boolean {
    return this.running !== undefined && !this.stopping && !this.ended;
  }

  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.unsubscribe?.();
    this.abort.abort();
    this.wake();
    await this.running;
    // No more passes: what the cut-off attempts left is recorded on its own.
    this.deps.recorder?.standAlone();
    await Promise.allSettled([...this.passes]);
    await this.releaseLeases();
    await this.agent?.destroy();
  }

  /**
   * The only loop of its database frees every lease and every head parked for want of a slot.
   * A shared loop has no lease left once its passes have settled (each delivery it claimed
   * is recorded, or its lease freed by the recorder when the attempt was cut off); it makes
   * the heads parked for want of a slot due again, as its safety net would (a loop still
   * running parks those of its own busy consumers again).
   */
  private async releaseLeases(): Promise<void> {
    try {
      if (this.shared) await this.deps.store.transaction((tx) => tx.unparkIdle({ consumers: [], accounts: [] }));
      else await this.deps.store.releaseDeliveryLeases();
    } catch (err) {
      this.deps.onError?.(err, 'webhook leases');
    }
  }

  private async run(): Promise<void> {
    const maxInFlight = this.deps.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT;
    // The only loop of this database: leases left are a killed process's.
    if (!this.shared) await this.releaseLeases();
    while (!this.stopping) {
      // After the I/O of this turn: one pass records every attempt that just finished and
      // claims what they and the new events left due, in one transaction.
      await new Promise((resolve) => setImmediate(resolve));
      if (this.stopping) break;
      this.woken = false;
      let more = false;
      let pause: number | undefined;
      try {
        const pass = await startPass(this.deps);
        more = pass.more && this.inFlight.total < maxInFlight;
        if (pass.claimed > 0) {
          const done = pass.done.catch((err: unknown) => this.deps.onError?.(err, 'webhook pass'));
          this.passes.add(done);
          void done.finally(() => this.passes.delete(done));
        }
      } catch (err) {
        this.deps.onError?.(err, 'webhook claim');
        pause = ERROR_PAUSE_MS;
      }
      if (this.stopping) break;
      if (more) continue;
      if (this.woken) continue;
      const sleep = pause ?? await this.untilNextRetry();
      // Woken while the next retry was looked up: no sleep, or the wake would be lost.
      if (!this.woken && !(await this.idle(sleep))) await this.safetyNet();
    }
  }

  /** Until the earliest retry time, or the longest idle. */
  private async untilNextRetry(): Promise<number> {
    const maxIdle = this.maxIdleMs;
    try {
      const now = this.deps.clock.now();
      const next = await this.deps.store.nextDeliveryDue(isoSeconds(now));
      return next === undefined ? maxIdle : Math.max(0, Math.min(maxIdle, Date.parse(next) - now.getTime()));
    } catch (err) {
      this.deps.onError?.(err, 'webhook timer');
      return maxIdle;
    }
  }

  /** Sleeps until woken (true) or `ms` pass (false). */
  private idle(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const done = (woken: boolean) => {
        clearTimeout(timer);
        this.wakeUp = undefined;
        resolve(woken);
      };
      const timer = setTimeout(() => done(false), ms);
      this.wakeUp = () => done(true);
    });
  }

  /** Nothing woke the loop for a while: free any head left parked for a slot (its consumer's or its account's) that is long free. */
  private async safetyNet(): Promise<void> {
    try {
      await this.deps.store.transaction((tx) => tx.unparkIdle(this.inFlight.ids()));
    } catch (err) {
      this.deps.onError?.(err, 'webhook safety net');
    }
  }
}
