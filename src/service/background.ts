// The service's background work: syncs, pushes and schedules on sync threads
// (sync/worker-thread.ts), and webhook deliveries (webhooks/loop.ts). `ferry serve` runs it
// beside the API unless --no-worker; `ferry worker` runs only this. On PostgreSQL any number
// of processes may run it at once: leases keep them off each other's work. On SQLite this
// process is the database's only worker, and runs two sync threads: one thread's
// CPU (page JSON, record JSON, its commits) was the embedded sync's limit, and leases keep
// the two apart as they keep processes apart on PostgreSQL. The second starts once there is
// sync work: an embedded command that syncs nothing does not pay for it.
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
  /** The sync thread that checkpoints SQLite's WAL (the first) has ended, stopped or not. */
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
  /** The metrics of each sync thread that keeps them and answers in time. */
  threadMetrics(): Promise<ThreadMetrics[]>;
  /** Sync threads started and not ended. */
  syncThreads(): number;
}

/** A sync thread busy past this (a long synchronous write) is not answering: readiness says so. */
const PING_DEADLINE_MS = 5_000;
/** A scrape does not wait longer than this for the thread's figures; the host's own are sent without them. */
const METRICS_DEADLINE_MS = 2_000;
/**
 * Sync threads on SQLite. Two took about 30% off a 1,000-company sync on two cores
 * (docs/performance.md); on PostgreSQL one a process, and more processes scale it.
 */
const SQLITE_SYNC_THREADS = 2;

export function startBackground(options: BackgroundOptions): Background {
  const { opened } = options;
  // On SQLite this process is the database's only worker; on PostgreSQL others may share it.
  const shared = opened.kind === 'postgres';
  const { platformUrl } = options;
  let stopping = false;
  const sync = options.sync && platformUrl ? new SyncThreads(options, platformUrl, () => stopping) : undefined;
  const threads = (): readonly SyncWorker[] => sync?.started ?? [];
  let webhooks: DeliveryLoop | undefined;
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
      await Promise.all(threads().map((thread) => thread.stop()));
    },
    async health() {
      if (stopping) return [];
      const reasons: string[] = [];
      if (webhooks && !webhooks.alive) reasons.push('the webhook delivery loop has stopped');
      const asked = threads();
      const answers = await Promise.all(asked.map(async (thread) => thread.exited || (await thread.ask('ping', PING_DEADLINE_MS)) !== undefined));
      // Asked and not answered because it ended meanwhile: it stopped.
      const stopped = asked.filter((thread) => thread.exited).length;
      const silent = answers.filter((answered, index) => !answered && !asked[index]!.exited).length;
      if (stopped > 0) reasons.push(`${threadsNamed(stopped, asked.length)} ${stopped === 1 ? 'has' : 'have'} stopped`);
      if (silent > 0) reasons.push(`${threadsNamed(silent, asked.length)} did not answer within ${PING_DEADLINE_MS / 1000} s`);
      return reasons;
    },
    async threadMetrics() {
      if (!options.watch?.metrics) return [];
      const answers = await Promise.all(threads().map((thread) => thread.ask('metrics', METRICS_DEADLINE_MS)));
      return answers.flatMap((answer) => (answer?.metrics ? [answer.metrics] : []));
    },
    syncThreads: () => threads().filter((thread) => !thread.exited).length,
  };
}

/**
 * The sync threads: SQLITE_SYNC_THREADS on SQLite, one on PostgreSQL. The first starts at
 * once (it also queues scheduled syncs, polls pending pushes and, on SQLite, checkpoints the
 * WAL); the others once there is sync work: new work queued here (wake), or a job the first
 * claimed (work queued before this process began, or by a schedule). Starting a thread (its
 * modules, its connection) was about a fifth of the CPU of an embedded `ferry companies list`.
 */
class SyncThreads {
  readonly started: SyncWorker[] = [];
  private readonly count: number;

  constructor(private readonly options: BackgroundOptions, private readonly platformUrl: string, private readonly stopping: () => boolean) {
    this.count = options.opened.kind === 'sqlite' ? SQLITE_SYNC_THREADS : 1;
    this.start(() => this.startOthers());
  }

  wake(): void {
    this.startOthers();
    for (const thread of this.started) thread.wake();
  }

  private startOthers(): void {
    while (!this.stopping() && this.started.length < this.count) this.start();
  }

  private start(onWorking?: () => void): void {
    const { options } = this;
    const { opened } = options;
    const first = this.started.length === 0;
    this.started.push(startSyncWorker(
      {
        ...(opened.kind === 'sqlite' ? { dbFile: opened.dbFile, checkpoints: first } : { database: opened.database }),
        secretKeyHex: options.secretKey.toString('hex'),
        platformUrl: this.platformUrl,
        ...(options.publicUrl ? { publicUrl: options.publicUrl } : {}),
        ...(options.leaseSeconds ? { leaseSeconds: options.leaseSeconds } : {}),
        ...(options.concurrency ? { concurrency: options.concurrency } : {}),
        ...(options.load ? { load: options.load } : {}),
        ...(options.watch ? { watch: options.watch } : {}),
      },
      { onError: options.onError, ...(first && options.onSyncExit ? { onExit: options.onSyncExit } : {}), ...(options.log ? { log: options.log } : {}), ...(onWorking ? { onWorking } : {}) },
    ));
  }
}

/** "the sync worker thread", or where a process runs several, how many of them. */
function threadsNamed(count: number, of: number): string {
  return of === 1 ? 'the sync worker thread' : `${count} of ${of} sync worker threads`;
}
