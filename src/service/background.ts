// The service's background work: syncs, pushes and schedules on the sync thread
// (sync/worker-thread.ts), and webhook deliveries (webhooks/loop.ts). `ferry serve` runs it
// beside the API unless --no-worker; `ferry worker` runs only this. On PostgreSQL any number
// of processes may run it at once: leases keep them off each other's work.
import type { Clock } from '../lib/clock.js';
import type { EventBus } from './events/bus.js';
import type { ThreadMetrics, ThreadWatch } from './observability/thread-link.js';
import type { EventLog, Signals } from './observability/signals.js';
import type { Sealer } from './secrets.js';
import type { OpenedStore } from './store/open-store.js';
import { startSyncWorker, type SyncWorker } from './sync/worker-host.js';
import { DeliveryLoop, type LoopDeps } from './webhooks/loop.js';
import type { TargetPolicy } from './webhooks/target-policy.js';

export interface BackgroundOptions {
  opened: OpenedStore;
  secretKey: Buffer;
  sealer: Sealer;
  clock: Clock;
  events: EventBus;
  /** The platforms' base URL (the sandbox): no syncs without it. */
  platformUrl?: string;
  /** The base of links in event payloads. */
  publicUrl?: string;
  sync: boolean;
  webhooks: boolean;
  /** How long a claimed pull stays leased without renewal (sync/pull-lease.ts). */
  leaseSeconds?: number;
  /** Pulls run at once (default 4: the sync thread shares the machine with requests). */
  concurrency?: number;
  /** The request thread's load (sync/request-load.ts): syncs give way to requests in the same process. */
  load?: Int32Array;
  webhookTuning?: Omit<LoopDeps, 'store' | 'clock' | 'sealer' | 'changed' | 'onError' | 'shared' | 'targets'>;
  /** Where webhook deliveries may connect (the operator's opt-ins; default public addresses only). */
  webhookTargets?: TargetPolicy;
  onError: (err: unknown, context: string) => void;
  /** The sync thread has ended (stopped or not). */
  onSyncExit?: () => void;
  /** What the operator watches: the deliveries' signals here, and what the sync thread keeps and says (observability/). */
  signals?: Signals;
  watch?: ThreadWatch;
  log?: EventLog;
}

export interface Background {
  /** New sync or push work was queued. */
  wakeSync(): void;
  /** Deliveries are due that no event announced (a replay). */
  wakeDeliveries(): void;
  /** Waits for the work in flight to reach a safe point, then stops. */
  stop(): Promise<void>;
  /** What keeps the background work from running: a thread or a loop that ended, a thread that does not answer. */
  health(): Promise<string[]>;
  /** The sync thread's metrics, when it keeps them and answers in time. */
  threadMetrics(): Promise<ThreadMetrics | undefined>;
}

/** A sync thread busy past this (a long synchronous write) is not answering: readiness says so. */
const PING_DEADLINE_MS = 5_000;
/** A scrape does not wait longer than this for the thread's figures; the host's own are sent without them. */
const METRICS_DEADLINE_MS = 2_000;

export function startBackground(options: BackgroundOptions): Background {
  const { opened } = options;
  // On SQLite this process is the database's only worker; on PostgreSQL others may share it.
  const shared = opened.kind === 'postgres';
  let sync: SyncWorker | undefined;
  let webhooks: DeliveryLoop | undefined;
  let stopping = false;
  if (options.sync && options.platformUrl) {
    sync = startSyncWorker(
      {
        ...(opened.kind === 'sqlite' ? { dbFile: opened.dbFile } : { database: opened.database }),
        secretKeyHex: options.secretKey.toString('hex'),
        platformUrl: options.platformUrl,
        ...(options.publicUrl ? { publicUrl: options.publicUrl } : {}),
        ...(options.leaseSeconds ? { leaseSeconds: options.leaseSeconds } : {}),
        ...(options.concurrency ? { concurrency: options.concurrency } : {}),
        ...(options.load ? { load: options.load } : {}),
        ...(options.watch ? { watch: options.watch } : {}),
      },
      options.onError,
      options.onSyncExit,
      options.log,
    );
  }
  if (options.webhooks) {
    webhooks = new DeliveryLoop({
      ...options.webhookTuning, store: opened.store, clock: options.clock, sealer: options.sealer,
      changed: options.events.changed, shared, onError: options.onError,
      ...(options.signals ? { signals: options.signals } : {}),
      ...(options.webhookTargets ? { targets: options.webhookTargets } : {}),
    }, options.events.deliveries);
    webhooks.start();
  }
  return {
    wakeSync: () => sync?.wake(),
    wakeDeliveries: () => webhooks?.wake(),
    async stop() {
      stopping = true;
      await webhooks?.stop();
      await sync?.stop();
    },
    async health() {
      if (stopping) return [];
      const reasons: string[] = [];
      if (webhooks && !webhooks.alive) reasons.push('the webhook delivery loop has stopped');
      const answered = !sync || sync.exited || (await sync.ask('ping', PING_DEADLINE_MS)) !== undefined;
      // Asked and not answered because it ended meanwhile: it stopped.
      if (sync?.exited) reasons.push('the sync worker thread has stopped');
      else if (!answered) reasons.push(`the sync worker thread did not answer within ${PING_DEADLINE_MS / 1000} s`);
      return reasons;
    },
    async threadMetrics() {
      if (!sync || !options.watch?.metrics) return undefined;
      return (await sync.ask('metrics', METRICS_DEADLINE_MS))?.metrics;
    },
  };
}
