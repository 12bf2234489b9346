// `ferry worker`: the service's background work (background.ts) on a PostgreSQL database
// shared with API instances (`ferry serve --no-worker`) and other workers, serving no
// requests. It makes no admin account; its data dir holds at most its secret key.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { systemClock, type Clock } from '../lib/clock.js';
import { startBackground } from './background.js';
import { EventBus } from './events/bus.js';
import { Outage } from './outage.js';
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
  onNotice?: (message: string) => void;
  onInternalError?: (err: unknown, context: string) => void;
}

/**
 * A worker serves no requests and a pull mostly waits on the platform and the database, so
 * it runs more at once than the sync thread beside an API (4).
 */
export const DEFAULT_WORKER_CONCURRENCY = 16;

export interface RunningWorker {
  /** Finishes the work in flight to a safe point, then stops. */
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
  const opened = await openStore({
    dataDir: options.dataDir, database: options.database, keyCheck: keyCheckValue(secretKey),
    onIdleError: (err) => onError(err, 'database connection'),
  });
  const events = new EventBus(opened.store);
  const background = startBackground({
    opened, secretKey, sealer: createSealer(secretKey), clock, events, platformUrl: options.platformUrl,
    ...(options.publicUrl ? { publicUrl: options.publicUrl } : {}),
    ...(options.leaseSeconds ? { leaseSeconds: options.leaseSeconds } : {}),
    concurrency: options.concurrency ?? DEFAULT_WORKER_CONCURRENCY,
    webhookTargets,
    sync: true, webhooks: true, onError,
  });
  // No requests here to tell when the database is back: a cheap look every few seconds does.
  const probe = setInterval(() => {
    if (outage.ongoing) void opened.store.dataVersion().then(() => outage.back(), () => undefined);
  }, 2_000);
  probe.unref();
  return {
    async stop() {
      clearInterval(probe);
      await background.stop();
      events.close();
      await opened.store.close();
    },
  };
}
