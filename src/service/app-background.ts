// The service's background work as createService() runs it: the sync thread when the service
// reaches the platforms, the webhook deliveries, and the gauge of clients' requests in flight
// that lets syncs give way to them in the same process.
import type { Clock } from '../lib/clock.js';
import { startBackground, type Background } from './background.js';
import type { ServiceContext } from './context.js';
import type { Observation } from './observability/observe.js';
import type { ServiceOptions } from './options.js';
import { releaseOpenPullLeases, setAutoCheckpoint } from './store/sqlite/db.js';
import type { OpenedStore } from './store/open-store.js';
import { loadGauge, measureLoad, type RequestTime } from './sync/request-load.js';
import type { TargetPolicy } from './webhooks/target-policy.js';

export interface BackgroundParts {
  opened: OpenedStore;
  secretKey: Buffer;
  clock: Clock;
  /** The context's sealer and event bus, which the background work shares with the routes. */
  ctx: Pick<ServiceContext, 'sealer' | 'events'>;
  webhookTargets: TargetPolicy;
  onError: (err: unknown, context: string) => void;
  /** What the operator watches of the background work (observability/). */
  observation: Observation;
  /** The time clients' requests are in flight: the sync worker gives way while it is most of the time. */
  requests: RequestTime;
}

/** Starts the background work; its stop() also stops the load gauge. */
export function startServiceBackground(options: ServiceOptions, parts: BackgroundParts): Background {
  const { opened, clock, ctx, observation } = parts;
  const db = opened.kind === 'sqlite' ? opened.db : undefined;
  const syncing = Boolean(options.platformUrl) && (options.startWorker ?? true);
  const load = syncing ? loadGauge() : undefined;
  const stopLoadGauge = load && measureLoad(load, parts.requests);
  if (db && syncing) {
    try {
      releaseOpenPullLeases(db);
    } catch (err) {
      // Not fatal: the leases run out instead.
      parts.onError(err, 'pull leases');
    }
  }
  const background = startBackground({
    opened, secretKey: parts.secretKey, sealer: ctx.sealer, clock, events: ctx.events,
    ...(options.platformUrl ? { platformUrl: options.platformUrl } : {}),
    ...(options.publicUrl ? { publicUrl: options.publicUrl } : {}),
    ...(load ? { load } : {}),
    ...(options.webhookTuning ? { webhookTuning: options.webhookTuning } : {}),
    webhookTargets: parts.webhookTargets,
    sync: syncing, webhooks: options.startWebhooks ?? true, onError: parts.onError,
    signals: observation.signals, ...(observation.watch ? { watch: observation.watch } : {}), ...(observation.log ? { log: observation.log } : {}),
    // Once the sync thread that checkpoints is gone, this thread's commits checkpoint the WAL again.
    onSyncExit: () => {
      if (db?.open) setAutoCheckpoint(db, true);
    },
  });
  // The first sync thread checkpoints the WAL (worker-thread.ts), so no request waits for one.
  if (db && syncing) setAutoCheckpoint(db, false);
  return {
    wakeSync: () => background.wakeSync(),
    wakeDeliveries: () => background.wakeDeliveries(),
    health: () => background.health(),
    threadMetrics: () => background.threadMetrics(),
    syncThreads: () => background.syncThreads(),
    async stop() {
      await background.stop();
      stopLoadGauge?.();
    },
  };
}
