// What the sync and push workers need; built in the worker thread (or in-process by tests).
import type { Clock } from '../../lib/clock.js';
import type { PlatformAdapter } from '../integrations/adapter.js';
import type { Sealer } from '../secrets.js';
import type { Store } from '../store/store.js';

export interface SyncDeps {
  store: Store;
  clock: Clock;
  sealer: Sealer;
  adapter: PlatformAdapter;
  /** Records per platform page. */
  pageSize?: number;
  /** Pulls run at the same time. */
  concurrency?: number;
  /** The base of links in event payloads (the service's public URL, when known). */
  publicUrl?: string;
  /** Told after events were committed (in-process runs; the worker thread's are found by polling). */
  changed?: () => void;
  /** Internal failures (never sent to clients). */
  onError?: (err: unknown, context: string) => void;
}
