// What the sync and push workers need; built in the worker thread (or in-process by tests).
import type { Clock } from '../../lib/clock.js';
import type { PlatformAdapter } from '../adapters/adapter.js';
import type { Signals } from '../observability/signals.js';
import type { Sealer } from '../secrets.js';
import type { AsyncStore } from '../store/async-store.js';

export interface SyncDeps {
  store: AsyncStore;
  clock: Clock;
  sealer: Sealer;
  adapter: PlatformAdapter;
  /** Records per platform page. */
  pageSize?: number;
  /** Pulls run at the same time. */
  concurrency?: number;
  /** Whether clients keep the request thread busy (request-load.ts): jobs then run one at a time, with a pause after each pass. */
  busy?: () => boolean;
  /** The base of links in event payloads (the service's public URL, when known). */
  publicUrl?: string;
  /** Told after events were committed (in-process runs; the worker thread's are found by polling). */
  changed?: () => void;
  /**
   * How long a claimed pull stays leased without a renewal, in whole seconds (pull-lease.ts:
   * DEFAULT_LEASE_SECONDS, at least MIN_LEASE_SECONDS). A heartbeat renews it every third
   * while the pull runs: this is how long a killed worker's pulls wait for another.
   */
  leaseSeconds?: number;
  /** Told once, when the loop first claims a job (the host then starts its other sync threads). */
  onClaimed?: () => void;
  /** Internal failures (never sent to clients). */
  onError?: (err: unknown, context: string) => void;
  /** Pulls ended and records written, pushes settled: for the metrics and the log. */
  signals?: Signals;
}
