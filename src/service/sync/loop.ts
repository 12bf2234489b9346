// The start/stop loop around syncOnce(): runs passes back to back while there is work,
// idles (until woken or the poll interval passes) when there is none, and on stop waits
// for the pass in flight, so a pull is never cut off between its transactions by us.
// The only worker of its database (`exclusive`) first frees the leases a killed one left.
import type { SyncDeps } from './deps.js';
import { MIN_LEASE_SECONDS } from './pull-lease.js';
import { syncOnce } from './sync-once.js';

/** The pause after a pass while the request thread is busy (sync-once.ts). */
const YIELD_MS = 20;

export class SyncLoop {
  private stopping = false;
  private running: Promise<void> | undefined;
  private wakeUp: (() => void) | undefined;
  private yielding = false;

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
    if (!this.yielding) this.wakeUp?.();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.wakeUp?.();
    await this.running;
  }

  private async run(): Promise<void> {
    if (this.deps.exclusive) {
      try {
        await this.deps.store.releaseOpenPullLeases();
      } catch (err) {
        this.deps.onError?.(err, 'pull leases');
      }
    }
    while (!this.stopping) {
      let busy = false;
      let yielded = false;
      try {
        const pass = await syncOnce(this.deps);
        busy = pass.pulls > 0;
        yielded = pass.yielded;
      } catch (err) {
        this.deps.onError?.(err, 'sync pass');
      }
      if (this.stopping) break;
      if (yielded) await this.idle(YIELD_MS, true);
      else if (!busy) await this.idle(this.idleMs, false);
    }
  }

  private idle(ms: number, yielding: boolean): Promise<void> {
    this.yielding = yielding;
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.yielding = false;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wakeUp = done;
    });
  }
}
