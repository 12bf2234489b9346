// What the service is made of beneath HTTP: the store, the context the routes take, the
// background work and the rate limiter. openCore() starts them in order, closeCore() stops them.
import { join } from 'node:path';
import { systemClock, type Clock } from '../lib/clock.js';
import { privateDataDir } from '../lib/private-files.js';
import { RateLimiter, type RateDecision } from '../lib/rate-limit.js';
import { DEFAULT_ATTACHMENT_QUOTA_BYTES } from '../platforms/limits.js';
import { platformVerifier } from './adapters/platform-verifier.js';
import { platformAdapter, type ClosablePlatform } from './adapters/platforms.js';
import { schemaOnlyVerifier } from './adapters/verifier.js';
import { startServiceBackground } from './app-background.js';
import { RequestTime } from './sync/request-load.js';
import type { Background } from './background.js';
import { ensureAdmin } from './bootstrap.js';
import type { ServiceContext } from './context.js';
import { RenderPool } from './documents/render-pool.js';
import { EventBus } from './events/bus.js';
import { ResponseCache } from './http/response-cache.js';
import { DEFAULT_RATE_LIMIT, type ServiceOptions } from './options.js';
import { Outage } from './outage.js';
import { ReadPool } from './read-pool/pool.js';
import { createSealer, keyCheckValue, loadSecretKey } from './secrets.js';
import { SharedRateLimiter } from './shared-rate-limit.js';
import type { AsyncStore } from './store/async-store.js';
import { openStore, type OpenedStore } from './store/open-store.js';
import type { Observation } from './observability/observe.js';
import type { Db } from './store/sqlite/db.js';
import { clearStaleUploads } from './uploads/staged-upload.js';
import { TargetPolicy } from './webhooks/target-policy.js';

/** One reader thread: on two cores a second would take the core the request thread needs. */
const DEFAULT_READ_THREADS = 1;
/** One render thread, for the same reason. */
const DEFAULT_RENDER_THREADS = 1;

export type Limiter = { take(key: string): RateDecision; close?(): void };

/** What the service is made of beneath HTTP. */
export interface Core {
  clock: Clock;
  store: AsyncStore;
  db: Db | undefined;
  adminKey: string;
  ctx: ServiceContext;
  outage: Outage;
  platform: ClosablePlatform | undefined;
  background: Background;
  rateLimit: number;
  limiter: Limiter | undefined;
  /** The time clients' requests are in flight, which the sync worker gives way to (sync/request-load.ts). */
  requests: RequestTime;
}

/** Opens the store and starts what runs beside the requests: the key, the platform, the read and render pools, the background work. */
export async function openCore(options: ServiceOptions, observation: Observation): Promise<Core> {
  const clock = options.clock ?? systemClock;
  const webhookTargets = new TargetPolicy(options.webhookTargets);
  privateDataDir(options.dataDir, options.onNotice);
  // Before anything opens: a key that cannot be settled on stops the start with nothing changed.
  const secretKey = loadSecretKey(options.dataDir, options.env, { keyFile: options.secretKeyFile, onNotice: options.onNotice });
  const outage = new Outage(options.onNotice);
  /** Background work's errors: the database going away pauses it (said once); anything else is internal. */
  const backgroundError = (err: unknown, context: string) => {
    if (!outage.lost(err)) options.onInternalError?.(err, context);
  };
  const opened = observation.store(await openStore({
    dataDir: options.dataDir, keyCheck: keyCheckValue(secretKey), ...(options.database ? { database: options.database } : {}),
    admin: (store) => ensureAdmin(store, options.dataDir, clock),
    // An idle connection the server ended: the pool opens another; requests say if the database is gone.
    onIdleError: (err) => backgroundError(err, 'database connection'),
  }));
  const { store, adminKey } = opened;
  const uploadDir = join(options.dataDir, 'uploads');
  clearStaleUploads(uploadDir);
  const platform: ClosablePlatform | undefined = options.platformUrl ? platformAdapter(options.platformUrl, clock) : undefined;
  const ctx: ServiceContext = {
    store,
    clock,
    responseCache: new ResponseCache(store, options.responseCache),
    // PostgreSQL does a costly read on its own server, so it needs no reader thread here.
    reads: new ReadPool(store, opened.kind === 'sqlite' ? { dbFile: opened.dbFile, threads: options.readThreads ?? DEFAULT_READ_THREADS } : { threads: 0 }),
    renders: new RenderPool({ threads: options.renderThreads ?? DEFAULT_RENDER_THREADS, ...(options.pdfCache ? { cache: options.pdfCache } : {}) }),
    sealer: createSealer(secretKey),
    verifier: options.verifier ?? (platform ? platformVerifier(platform) : schemaOnlyVerifier),
    ...(platform ? { platform, platformUrl: options.platformUrl } : {}),
    wakeWorker: () => background.wakeSync(),
    wakeDeliveries: () => background.wakeDeliveries(),
    events: new EventBus(store, opened.kind === 'postgres' ? { notices: opened.notices } : {}),
    webhookTargets,
    attachmentQuota: options.attachmentQuota ?? DEFAULT_ATTACHMENT_QUOTA_BYTES,
    uploadDir,
    signals: observation.signals,
  };
  const requests = new RequestTime();
  const background = startServiceBackground(options, { opened, secretKey, clock, ctx, webhookTargets, onError: backgroundError, observation, requests });
  const syncing = Boolean(options.platformUrl) && (options.startWorker ?? true);
  observation.watchStore(opened, outage, clock, syncing || (options.startWebhooks ?? true));
  const rateLimit = options.rateLimit ?? DEFAULT_RATE_LIMIT;
  const limiter = createLimiter(rateLimit, opened, clock, backgroundError);
  const db = opened.kind === 'sqlite' ? opened.db : undefined;
  return { clock, store, db, adminKey, ctx, outage, platform, background, rateLimit, limiter, requests };
}

/** Each key's bucket: instances sharing a PostgreSQL database share each key's limit through it. */
function createLimiter(rateLimit: number, opened: OpenedStore, clock: Clock, onError: (err: unknown, context: string) => void): Limiter | undefined {
  if (rateLimit <= 0) return undefined;
  return opened.kind === 'postgres'
    ? new SharedRateLimiter({ limit: rateLimit, clock, settle: opened.rateLedger, onError: (err) => onError(err, 'shared rate limit') })
    : new RateLimiter(rateLimit, clock);
}

/** Stops what openCore started, the store last. */
export async function closeCore(core: Core): Promise<void> {
  core.limiter?.close?.();
  await core.background.stop();
  await core.ctx.events.close();
  await core.ctx.reads.close();
  await core.ctx.renders.close();
  await core.platform?.close();
  await core.store.close();
}
