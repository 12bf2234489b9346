// `ferry worker`: the service's background work (background.ts) on a PostgreSQL database
// shared with API instances (`ferry serve --no-worker`) and other workers, serving no
// requests. It makes no admin account; its data dir holds at most its secret key.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { systemClock, type Clock } from '../lib/clock.js';
import { startBackground } from './background.js';
import { EventBus } from './events/bus.js';
import { Outage } from './outage.js';
import type { Logger } from './observability/logger.js';
import { startMetricsServer, type MetricsServer } from './observability/metrics-server.js';
import { Observation } from './observability/observe.js';
import { createSealer, keyCheckValue, loadSecretKey, SecretKeyError } from './secrets.js';
import { openStore } from './store/open-store.js';
import { TargetPolicy, type WebhookTargets } from './webhooks/target-policy.js';

export interface WorkerProcessOptions {
  dataDir: string;
  /** A postgres:// URL. */
  database: string;
  /** The platforms' base URL (the sandbox's). */
  platformUrl: string;
  publicUrl?: string;
  secretKeyFile?: string;
  env?: NodeJS.ProcessEnv;
  clock?: Clock;
  /** How long a claimed pull stays leased without renewal: how long a killed worker's pulls wait for another. */
  leaseSeconds?: number;
  /** Pulls run at once (DEFAULT_WORKER_CONCURRENCY unless set). */
  concurrency?: number;
  /** Where webhook deliveries may connect (default: public addresses only). */
  webhookTargets?: WebhookTargets;
  onNotice?: (message: string, event?: string) => void;
  onInternalError?: (err: unknown, context: string) => void;
  /** Serve /metrics, /healthz and /readyz on this port (0: any free one); metrics are kept only then. */
  metricsPort?: number;
  /** The metrics port's interface (default 127.0.0.1). */
  metricsHost?: string;
  /** Where pulls failed, deliveries failed and the like are logged. */
  logger?: Logger;
}

/**
 * A worker serves no requests and a pull mostly waits on the platform and the database, so
 * it runs more at once than the sync thread beside an API (4).
 */
export const DEFAULT_WORKER_CONCURRENCY = 16;

export interface RunningWorker {
  /** http://host:port/metrics, with metricsPort. */
  metricsUrl?: string;
  /** Finishes the work in flight to a safe point (/readyz answering 503 meanwhile), then stops. */
  stop(): Promise<void>;
}

export async function startWorker(options: WorkerProcessOptions): Promise<RunningWorker> {
  const clock = options.clock ?? systemClock;
  const webhookTargets = new TargetPolicy(options.webhookTargets);
  // A worker opens the tokens the API instances sealed: it never makes a key of its own.
  if (!options.secretKeyFile && !(options.env ?? process.env).FERRY_SECRET_KEY && !existsSync(join(options.dataDir, 'secret.key'))) {
    throw new SecretKeyError('a worker needs the token-encryption key the API instances use: give --secret-key-file PATH or set FERRY_SECRET_KEY.', 'unusable');
  }
  const secretKey = loadSecretKey(options.dataDir, options.env, { keyFile: options.secretKeyFile, onNotice: options.onNotice });
  const outage = new Outage(options.onNotice);
  const onError = (err: unknown, context: string) => {
    if (!outage.lost(err)) options.onInternalError?.(err, context);
  };
  const observation = new Observation({ metrics: options.metricsPort !== undefined, ...(options.logger ? { logger: options.logger } : {}) });
  const opened = observation.store(await openStore({
    dataDir: options.dataDir, database: options.database, keyCheck: keyCheckValue(secretKey),
    onIdleError: (err) => onError(err, 'database connection'),
  }));
  const events = new EventBus(opened.store, opened.kind === 'postgres' ? { notices: opened.notices } : {});
  const background = startBackground({
    opened, secretKey, sealer: createSealer(secretKey), clock, events, platformUrl: options.platformUrl,
    ...(options.publicUrl ? { publicUrl: options.publicUrl } : {}),
    ...(options.leaseSeconds ? { leaseSeconds: options.leaseSeconds } : {}),
    concurrency: options.concurrency ?? DEFAULT_WORKER_CONCURRENCY,
    webhookTargets,
    sync: true, webhooks: true, onError,
    signals: observation.signals, ...(observation.watch ? { watch: observation.watch } : {}), ...(observation.log ? { log: observation.log } : {}),
  });
  observation.watchStore(opened, outage, clock, true);
  const readiness = observation.readiness(opened.store, outage, background);
  let metrics: MetricsServer | undefined;
  try {
    if (options.metricsPort !== undefined) {
      metrics = await startMetricsServer({
        host: options.metricsHost ?? '127.0.0.1', port: options.metricsPort, readiness, metrics: observation.exposition(background)!,
        onError: (err) => options.onInternalError?.(err, 'metrics'),
      });
    }
  } catch (err) {
    await background.stop();
    await events.close();
    await opened.store.close();
    throw err;
  }
  // No requests here to tell when the database is back: a cheap look every few seconds does.
  const probe = setInterval(() => {
    if (outage.ongoing) void opened.store.dataVersion().then(() => outage.back(), () => undefined);
  }, 2_000);
  probe.unref();
  return {
    ...(metrics ? { metricsUrl: metrics.url } : {}),
    async stop() {
      readiness.drain();
      clearInterval(probe);
      await background.stop();
      await events.close();
      await metrics?.close();
      await opened.store.close();
    },
  };
}
