// The start/stop loop around syncOnce(): runs passes back to back while there is work,
// idles (until woken or the poll interval passes) when there is none, and on stop waits
// for the pass in flight, so a pull is never cut off between its transactions by us.
import type { SyncDeps } from './deps.js';
import { syncOnce } from './sync-once.js';

export class SyncLoop {
  private stopping = false;
  private running: Promise<void> | undefined;
  private wakeUp: (() => void) | undefined;

  constructor(private readonly deps: SyncDeps, private readonly idleMs = 500) {}

  start(): void {
    this.running ??= this.run();
  }

  wake(): void {
    this.wakeUp?.();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.wake();
    await this.running;
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      let busy = false;
      try {
        const pass = await syncOnce(this.deps);
        busy = pass.pulls > 0;
      } catch (err) {
        this.deps.onError?.(err, 'sync pass');
      }
      if (!busy && !this.stopping) await this.idle();
    }
  }

  private idle(): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, this.idleMs);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wakeUp = done;
    });
  }
}
