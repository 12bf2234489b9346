// createService() builds the HTTP API over a data dir; listen() and close() are separate
// so tests bind port 0 and the CLI can embed the service in-process.
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { privateDataDir } from '../lib/private-files.js';
import { DEFAULT_ATTACHMENT_QUOTA_BYTES, MAX_BODY_BYTES } from '../platforms/limits.js';
import { systemClock, type Clock } from '../lib/clock.js';
import type { ServiceContext } from './context.js';
import { ApiError, errorBody, errors } from './errors.js';
import { AuthCache, type AuthContext } from './http/auth.js';
import { arrivalOptions, closeIfBodyUnread, DEFAULT_REQUEST_TIMEOUT_MS } from './http/incoming.js';
import { parseJsonBody } from './http/json-body.js';
import { clearStaleUploads } from './uploads/staged-upload.js';
import { RateLimiter, type RateDecision } from '../lib/rate-limit.js';
import { SharedRateLimiter } from './shared-rate-limit.js';
import type { CacheLimits } from '../lib/byte-lru.js';
import { ResponseCache } from './http/response-cache.js';
import { platformVerifier } from './adapters/platform-verifier.js';
import { platformAdapter, type ClosablePlatform } from './adapters/platforms.js';
import { schemaOnlyVerifier, type TokenVerifier } from './adapters/verifier.js';
import { registerAdminRoutes } from './routes/admin.js';
import { registerAttachmentRoutes } from './routes/attachments.js';
import { registerCompanyRoutes } from './routes/companies.js';
import { registerCompanyProductRoutes } from './routes/company-products.js';
import { registerConnectionRoutes } from './routes/connections.js';
import { registerDataConfigRoutes } from './routes/data-configs.js';
import { registerDataRoutes } from './routes/data.js';
import { registerIntegrationRoutes } from './routes/integrations.js';
import { registerInvoicePdfRoutes } from './routes/invoice-pdf.js';
import { registerProfileRoutes } from './routes/profile.js';
import { registerPushRoutes } from './routes/push.js';
import { registerSyncSettingsRoutes } from './routes/sync-settings.js';
import { registerWebhookRoutes } from './routes/webhooks.js';
import { registerEventRoutes } from './routes/events.js';
import { ReadPool } from './read-pool/pool.js';
import { RenderPool } from './documents/render-pool.js';
import { createSealer, keyCheckValue, loadSecretKey } from './secrets.js';
import { setAutoCheckpoint, type Db } from './store/sqlite/db.js';
import type { AsyncStore } from './store/async-store.js';
import { openStore } from './store/open-store.js';
import { Outage } from './outage.js';
import { EventBus } from './events/bus.js';
import { eventsOf } from './events/record.js';
import { RateLimitWatch } from './events/rate-limit-watch.js';
import type { StreamLimits } from './events/open-streams.js';
import { loadGauge, measureLoad } from './sync/request-load.js';
import type { LoopDeps } from './webhooks/loop.js';
import { TargetPolicy, type WebhookTargets } from './webhooks/target-policy.js';
import { startBackground } from './background.js';
import { ensureAdmin } from './bootstrap.js';

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthContext;
    /** The database's version, read once the request arrived: the key of the auth and response caches. */
    dataVersion: string;
    /** Where links in the response point: configured, never taken from the Host header. */
    baseUrl: string;
  }
}

export const DEFAULT_RATE_LIMIT = 2000;
/** One reader thread: on two cores a second would take the core the request thread needs. */
const DEFAULT_READ_THREADS = 1;
/** One render thread, for the same reason. */
const DEFAULT_RENDER_THREADS = 1;
const WILDCARD_HOSTS = new Set(['0.0.0.0', '::', '[::]']);

export interface ServiceOptions {
  dataDir: string;
  /**
   * A postgres:// URL: the service runs on that PostgreSQL database, which any number of
   * instances and workers may share, instead of <data-dir>/ferry.db.
   */
  database?: string;
  /** Requests per second per API key; 0 turns rate limiting (and its headers) off. */
  rateLimit?: number;
  maintenance?: boolean;
  clock?: Clock;
  env?: NodeJS.ProcessEnv;
  /** A file holding the token-encryption key, ahead of FERRY_SECRET_KEY and <data-dir>/secret.key (secrets.ts). */
  secretKeyFile?: string;
  verifier?: TokenVerifier;
  /**
   * Base URL of the third-party platforms (the sandbox). With it the service verifies
   * tokens with the platform, syncs and pushes; without it, only the schema is checked.
   */
  platformUrl?: string;
  /** Run the sync and push workers in their worker thread (default true with platformUrl). */
  startWorker?: boolean;
  /** Reader threads for costly list reads (default 1; 0 reads on the request thread). */
  readThreads?: number;
  /** Render threads for invoice PDFs (default 1). */
  renderThreads?: number;
  /** Byte bounds of the invoice PDF cache. */
  pdfCache?: CacheLimits;
  /** Byte bounds of the companies list response cache. */
  responseCache?: CacheLimits;
  /** Base of every link in responses (default: the address listen() binds). */
  publicUrl?: string;
  /** Build links from X-Forwarded-Proto/-Host when a proxy sends them. */
  trustProxy?: boolean;
  /** One-line notices for the person running the service (stderr in the CLI). */
  onNotice?: (message: string) => void;
  /** Where internal errors are reported; never sent to clients. */
  onInternalError?: (err: unknown, correlationId: string) => void;
  /** Run the webhook delivery loop (default true; tests on a fake clock drive deliverOnce themselves). */
  startWebhooks?: boolean;
  /** Timeouts, backoff and concurrency of webhook deliveries (tests shorten them). */
  webhookTuning?: Omit<LoopDeps, 'store' | 'clock' | 'sealer' | 'changed' | 'onError' | 'targets'>;
  /**
   * Where webhook consumers may point and deliveries connect: public addresses only unless
   * the operator opts in (`--webhook-allow-private`, `--webhook-allow HOST[:PORT]`).
   */
  webhookTargets?: WebhookTargets;
  /** The event stream's heartbeat interval in ms (default 15 s; tests shorten it). */
  eventHeartbeatMs?: number;
  /** Caps on open event streams in this process: per key (10), per account (50), in all (half the open-file limit). */
  streamLimits?: Partial<StreamLimits>;
  /** How long a request may take to arrive in full, headers and body, before a 408 (default 60 s). */
  requestTimeoutMs?: number;
  /** Bytes of attachments each account may hold (default 1 GiB). */
  attachmentQuota?: number;
}

export interface Service {
  app: FastifyInstance;
  store: AsyncStore;
  /** The SQLite handle under the store (none on PostgreSQL): for diagnostics and tests that look at what is at rest, never for routes. */
  db?: Db;
  adminKey: string;
  dataDir: string;
  context: ServiceContext;
  listen(options?: { port?: number; host?: string }): Promise<string>;
  close(): Promise<void>;
  setMaintenance(on: boolean): void;
  /** Whether an Authorization header carries a live admin key (for the sandbox's admin routes). */
  checkAdmin(authorization: string | undefined): Promise<'admin' | 'unauthenticated' | 'forbidden'>;
}

export async function createService(options: ServiceOptions): Promise<Service> {
  const core = await openCore(options);
  const { store, db, ctx } = core;
  const state: HttpState = { maintenance: options.maintenance ?? false, publicUrl: options.publicUrl?.replace(/\/+$/, '') };
  const app = createFastify(options);
  const authCache = new AuthCache(store, core.clock);
  addRequestHooks(app, core, authCache, state, options.trustProxy);
  addResponseHandling(app, core.outage, options.onInternalError);
  registerRoutes(app, ctx, options);

  return {
    app,
    store,
    ...(db ? { db } : {}),
    adminKey: core.adminKey,
    dataDir: options.dataDir,
    context: ctx,
    listen: (at) => listen(app, state, at, options.onNotice),
    async close() {
      await app.close();
      await closeCore(core);
    },
    setMaintenance(on) {
      state.maintenance = on;
    },
    async checkAdmin(authorization) {
      try {
        return (await authCache.arrive(authorization, undefined)).auth.caller.is_admin ? 'admin' : 'forbidden';
      } catch (err) {
        return err instanceof ApiError && err.statusCode === 401 ? 'unauthenticated' : 'forbidden';
      }
    },
  };
}

type Limiter = { take(key: string): RateDecision; close?(): void };

/** What the service is made of beneath HTTP: the store, the context routes take, the background work and the rate limiter. */
interface Core {
  clock: Clock;
  store: AsyncStore;
  db: Db | undefined;
  adminKey: string;
  ctx: ServiceContext;
  outage: Outage;
  platform: ClosablePlatform | undefined;
  background: ReturnType<typeof startBackground>;
  stopLoadGauge: (() => void) | undefined;
  rateLimit: number;
  limiter: Limiter | undefined;
}

/** What requests read that the service's owner may change while it runs. */
interface HttpState {
  maintenance: boolean;
  /** Where links point, unless a trusted proxy says otherwise; settled by listen() when not configured. */
  publicUrl: string | undefined;
}

/** Opens the store and starts what runs beside the requests: the key, the platform, the read and render pools, the background work. */
async function openCore(options: ServiceOptions): Promise<Core> {
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
  const opened = await openStore({
    dataDir: options.dataDir, keyCheck: keyCheckValue(secretKey), ...(options.database ? { database: options.database } : {}),
    admin: (store) => ensureAdmin(store, options.dataDir, clock),
    // An idle connection the server ended: the pool opens another; requests say if the database is gone.
    onIdleError: (err) => backgroundError(err, 'database connection'),
  });
  const { store, adminKey } = opened;
  const uploadDir = join(options.dataDir, 'uploads');
  clearStaleUploads(uploadDir);
  const db = opened.kind === 'sqlite' ? opened.db : undefined;
  const platform: ClosablePlatform | undefined = options.platformUrl ? platformAdapter(options.platformUrl, clock) : undefined;
  const syncing = Boolean(options.platformUrl) && (options.startWorker ?? true);
  const load = syncing ? loadGauge() : undefined;
  const stopLoadGauge = load && measureLoad(load);
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
    events: new EventBus(store),
    webhookTargets,
    attachmentQuota: options.attachmentQuota ?? DEFAULT_ATTACHMENT_QUOTA_BYTES,
    uploadDir,
  };
  const background = startBackground({
    opened, secretKey, sealer: ctx.sealer, clock, events: ctx.events,
    ...(options.platformUrl ? { platformUrl: options.platformUrl } : {}),
    ...(options.publicUrl ? { publicUrl: options.publicUrl } : {}),
    ...(load ? { load } : {}),
    ...(options.webhookTuning ? { webhookTuning: options.webhookTuning } : {}),
    webhookTargets,
    sync: syncing, webhooks: options.startWebhooks ?? true, onError: backgroundError,
    // Once the sync thread is gone, this thread's commits checkpoint the WAL again.
    onSyncExit: () => {
      if (db?.open) setAutoCheckpoint(db, true);
    },
  });
  // The sync thread checkpoints the WAL (worker-thread.ts), so no request waits for one.
  if (db && syncing) setAutoCheckpoint(db, false);
  const rateLimit = options.rateLimit ?? DEFAULT_RATE_LIMIT;
  // Instances sharing a PostgreSQL database share each key's limit through it.
  const limiter: Limiter | undefined = rateLimit <= 0 ? undefined
    : opened.kind === 'postgres'
      ? new SharedRateLimiter({ limit: rateLimit, clock, settle: opened.rateLedger, onError: (err) => backgroundError(err, 'shared rate limit') })
      : new RateLimiter(rateLimit, clock);
  return { clock, store, db, adminKey, ctx, outage, platform, background, stopLoadGauge, rateLimit, limiter };
}

/** Stops what openCore started, the store last. */
async function closeCore(core: Core): Promise<void> {
  core.limiter?.close?.();
  await core.background.stop();
  core.stopLoadGauge?.();
  core.ctx.events.close();
  await core.ctx.reads.close();
  await core.ctx.renders.close();
  await core.platform?.close();
  await core.store.close();
}

/** The fastify instance with the service's limits and its body parsers: JSON, and no other type but an empty body. */
function createFastify(options: ServiceOptions): FastifyInstance {
  const app = Fastify({
    logger: false,
    bodyLimit: MAX_BODY_BYTES,
    genReqId: () => randomUUID(),
    requestIdHeader: false,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    routerOptions: { ignoreTrailingSlash: true },
    trustProxy: options.trustProxy ?? false,
    ...arrivalOptions(options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS),
  });

  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    try {
      done(null, parseJsonBody(body as string));
    } catch (err) {
      done(err as Error, undefined);
    }
  });

  // A body of any other type is refused, but an empty one is no body at all: some clients
  // (the public SDKs among them) label a bodiless POST as a form.
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => {
    if ((body as Buffer).length === 0) done(null, undefined);
    else done(errors.unsupportedMediaType(), undefined);
  });
  return app;
}

/**
 * Before any route: the correlation id and the links' base, maintenance, the caller's key
 * and its rate limit, a NUL in the URL and an unknown route.
 */
function addRequestHooks(app: FastifyInstance, core: Core, authCache: AuthCache, state: HttpState, trustProxy: boolean | undefined): void {
  // Requests without a valid key are counted per address, so every response carries the
  // rate-limit headers and unauthenticated floods are limited too.
  const limit = rateLimitTaker(core.limiter, new RateLimitWatch(eventsOf(core.ctx), core.rateLimit));
  app.decorateRequest('baseUrl', '');
  app.decorateRequest('dataVersion', '');
  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    reply.header('X-Correlation-Id', request.id);
    const forwarded = trustProxy && request.headers['x-forwarded-host'] !== undefined;
    request.baseUrl = forwarded || !state.publicUrl ? `${request.protocol}://${request.host}` : state.publicUrl;
    const clientId = request.headers['x-client-id'];
    // Branding images go into <img> tags, which cannot send a key; they hold no data.
    if (request.url.startsWith('/branding/') && request.method === 'GET' && !state.maintenance) return limit(reply, `ip:${request.ip}`);
    try {
      if (state.maintenance) throw errors.maintenance();
      // One read serves both caches and the key's lookup: on PostgreSQL each read is a round trip.
      ({ version: request.dataVersion, auth: request.auth } = await authCache.arrive(request.headers.authorization, Array.isArray(clientId) ? clientId[0] : clientId));
    } catch (err) {
      await limit(reply, `ip:${request.ip}`);
      throw err;
    }
    await limit(reply, `key:${request.auth.keyId}`, request.auth.caller.id);
    // %00 is the only way a NUL reaches a path segment or a query value; no store keeps it as text.
    if (request.url.includes('%00')) throw errors.nulCharacter('URL');
    // Before the body is read: an unknown route has no use for it.
    if (request.is404) throw errors.routeNotFound(request.method, request.url.split('?')[0] ?? '/');
  });

  app.addHook('onSend', closeIfBodyUnread);
}

/**
 * Takes one request from the bucket; an account's keys also tell the watch, which records
 * the rate-limit events (committed before the response, as any other write of a request).
 */
function rateLimitTaker(limiter: Limiter | undefined, rateLimitWatch: RateLimitWatch) {
  return async (reply: FastifyReply, bucket: string, clientId?: string): Promise<void> => {
    if (!limiter) return;
    const decision = limiter.take(bucket);
    reply.headers(decision.headers);
    if (!decision.allowed) {
      if (clientId) await rateLimitWatch.refused(clientId, decision.retryAfterSeconds);
      throw errors.tooManyRequests(decision.retryAfterSeconds);
    }
    if (clientId) await rateLimitWatch.admitted(clientId, Number(decision.headers['X-Rate-Limit-Remaining']));
  };
}

/** After the routes: an outage ends with the first answer below 500, and every error is answered from the catalogue. */
function addResponseHandling(app: FastifyInstance, outage: Outage, onInternalError: ServiceOptions['onInternalError']): void {
  app.addHook('onResponse', (_request, reply, done) => {
    if (outage.ongoing && reply.statusCode < 500) outage.back();
    done();
  });

  app.setNotFoundHandler(async (request) => {
    throw errors.routeNotFound(request.method, request.url.split('?')[0] ?? '/');
  });

  app.setErrorHandler(async (err, request, reply) => {
    const apiError = !(err instanceof ApiError) && outage.lost(err) ? errors.databaseUnavailable() : toApiError(err);
    if (apiError.statusCode === 500) onInternalError?.(err, request.id);
    reply.code(apiError.statusCode).headers(apiError.headers).send(errorBody(apiError, request.id));
  });
}

function registerRoutes(app: FastifyInstance, ctx: ServiceContext, options: ServiceOptions): void {
  registerAdminRoutes(app, ctx);
  registerProfileRoutes(app, ctx);
  registerCompanyProductRoutes(app, ctx);
  registerCompanyRoutes(app, ctx);
  registerConnectionRoutes(app, ctx);
  registerIntegrationRoutes(app);
  registerDataRoutes(app, ctx);
  registerDataConfigRoutes(app, ctx);
  registerInvoicePdfRoutes(app, ctx);
  registerPushRoutes(app, ctx);
  registerAttachmentRoutes(app, ctx);
  registerSyncSettingsRoutes(app, ctx);
  registerWebhookRoutes(app, ctx);
  registerEventRoutes(app, ctx, { heartbeatMs: options.eventHeartbeatMs, ...(options.streamLimits ? { streamLimits: options.streamLimits } : {}) });
}

/** Binds the port; the URL it answers at, which becomes the links' base unless one was configured. */
async function listen(app: FastifyInstance, state: HttpState, { port = 8080, host = '127.0.0.1' } = {}, onNotice?: (message: string) => void): Promise<string> {
  await app.listen({ port, host });
  const address = app.server.address();
  const actualPort = typeof address === 'object' && address ? address.port : port;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  const url = `http://${shownHost}:${actualPort}`;
  if (!state.publicUrl && WILDCARD_HOSTS.has(host)) {
    // Every interface: no single address is the right one for links, so the machine's name is the best guess.
    state.publicUrl = `http://${hostname()}:${actualPort}`;
    onNotice?.(`links in responses use ${state.publicUrl}; set --public-url to the address clients reach this service at`);
  }
  state.publicUrl ??= url;
  return url;
}

interface FrameworkError {
  code?: string;
  statusCode?: number;
}

/** Everything becomes a catalogue error; anything unexpected is a 500 with no internals. */
function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  const { code, statusCode } = (err ?? {}) as FrameworkError;
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') return errors.bodyTooLarge(MAX_BODY_BYTES);
  if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return errors.unsupportedMediaType();
  if (code?.startsWith('FST_ERR_CTP_')) return errors.malformedJson();
  if (statusCode && statusCode >= 400 && statusCode < 500) return errors.badRequest();
  return errors.internal();
}
