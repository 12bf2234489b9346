// createSandbox() builds the emulated third-party platforms, one per registry
// integration, as their own HTTP server over <dataDir>/sandbox.db; listen() and close()
// are separate so tests bind port 0 and a restart over the same data dir keeps every
// app, tenant, token and push as it was.
import Fastify, { type FastifyInstance } from 'fastify';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { systemClock, type Clock } from '../lib/clock.js';
import { NO_SCHEMAS } from '../lib/no-schemas.js';
import { denyAll, type AdminCheck } from './admin-auth.js';
import { applySettings, type SandboxContext } from './context.js';
import { SandboxError, fail } from './errors.js';
import { registerAdminRoutes } from './routes/admin.js';
import { registerDataRoutes } from './routes/data.js';
import { registerOAuthRoutes } from './routes/oauth.js';
import { registerPushRoutes } from './routes/push.js';
import { DEFAULT_SETTINGS, parseSettings, type SandboxSettings } from './settings.js';
import { openSandboxStore } from './store.js';
import { TokenAuthority } from './tokens.js';

export const DEFAULT_ACCESS_TOKEN_TTL_SECONDS = 30 * 60;
const BODY_LIMIT = 1024 * 1024;

export interface SandboxOptions extends Partial<SandboxSettings> {
  dataDir: string;
  /** Who may use /admin (default: nobody). */
  adminAuth?: AdminCheck;
  clock?: Clock;
  accessTokenTtlSeconds?: number;
}

export interface Sandbox {
  app: FastifyInstance;
  /** Set once listen() has bound. */
  url?: string;
  listen(options?: { port?: number; host?: string }): Promise<string>;
  close(): Promise<void>;
}

export function createSandbox(options: SandboxOptions): Sandbox {
  const { dataDir, clock = systemClock, accessTokenTtlSeconds = DEFAULT_ACCESS_TOKEN_TTL_SECONDS, adminAuth = denyAll, ...settings } = options;
  const initial = parseSettings(settings);
  const store = openSandboxStore(join(dataDir, 'sandbox.db'));
  const ctx: SandboxContext = {
    store,
    clock,
    tokens: new TokenAuthority(store, clock, accessTokenTtlSeconds),
    settings: { ...DEFAULT_SETTINGS },
    limiter: undefined,
  };
  applySettings(ctx, initial);

  const app = Fastify({
    logger: false,
    bodyLimit: BODY_LIMIT,
    schemaController: NO_SCHEMAS,
    genReqId: () => randomUUID(),
    requestIdHeader: false,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    routerOptions: { ignoreTrailingSlash: true },
  });

  // OAuth token requests are form-encoded by the RFC; JSON is accepted too.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });

  app.setNotFoundHandler(async (request) => {
    throw fail.notFound(`No route ${request.method} ${request.url.split('?')[0] ?? '/'}.`);
  });

  app.setErrorHandler(async (err, _request, reply) => {
    const error = toSandboxError(err);
    reply.code(error.statusCode).headers(error.options.headers ?? {}).send(error.body());
  });

  registerOAuthRoutes(app, ctx);
  // The admin surface lists tenants and mints valid tokens: ferry's admin key only.
  app.register(async (admin) => {
    admin.addHook('onRequest', async (request) => {
      const verdict = await adminAuth(request.headers.authorization);
      if (verdict === 'unauthenticated') throw fail.adminUnauthenticated();
      if (verdict === 'forbidden') throw fail.forbidden('The sandbox admin routes need ferry\'s admin key.');
      if (verdict === 'unavailable') throw fail.judgeUnavailable();
    });
    registerAdminRoutes(admin, ctx);
  });
  // Latency and faults apply to the platform's data and push calls only (not the token
  // endpoint, so a rotation is never lost in flight; not the admin surface).
  app.register(async (platform) => {
    platform.addHook('onRequest', async () => {
      const { latencyMs, faultRate } = ctx.settings;
      if (latencyMs > 0) await sleep(latencyMs);
      if (faultRate > 0 && Math.random() < faultRate) throw fail.fault(Math.random() < 0.5 ? 500 : 503);
    });
    registerDataRoutes(platform, ctx);
    registerPushRoutes(platform, ctx);
  });

  const sandbox: Sandbox = {
    app,
    async listen({ port = 0, host = '127.0.0.1' } = {}) {
      await app.listen({ port, host });
      const address = app.server.address();
      const actualPort = typeof address === 'object' && address ? address.port : port;
      sandbox.url = `http://${host.includes(':') ? `[${host}]` : host}:${actualPort}`;
      return sandbox.url;
    },
    async close() {
      await app.close();
      store.close();
    },
  };
  return sandbox;
}

interface FrameworkError {
  code?: string;
  statusCode?: number;
}

/** Everything becomes a SandboxError; anything unexpected is a 500 with no internals. */
function toSandboxError(err: unknown): SandboxError {
  if (err instanceof SandboxError) return err;
  const { code, statusCode } = (err ?? {}) as FrameworkError;
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') return fail.badRequest(`The request body is larger than ${BODY_LIMIT} bytes.`);
  if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return new SandboxError(415, 'unsupported_media_type', 'Send JSON or form-encoded bodies.');
  if (statusCode !== undefined && statusCode >= 400 && statusCode < 500) return fail.badRequest('The request is not valid (malformed body or parameters).');
  return fail.internal();
}
