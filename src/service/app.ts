// createService() builds the HTTP API over a data dir; listen() and close() are separate
// so tests bind port 0 and the CLI can embed the service in-process. The parts: the store,
// context and background work (app-core.ts), the HTTP plumbing (app-http.ts) and the routes
// (app-routes.ts).
import type { FastifyInstance } from 'fastify';
import { hostname } from 'node:os';
import { closeCore, openCore } from './app-core.js';
import { addRequestHooks, addResponseHandling, createFastify, type HttpState } from './app-http.js';
import { registerRoutes } from './app-routes.js';
import type { ServiceContext } from './context.js';
import { ApiError } from './errors.js';
import { AuthCache } from './http/auth.js';
import { registerProbeRoutes, type Readiness } from './observability/health.js';
import { Observation, type Exposition } from './observability/observe.js';
import { InFlight, observeRequests } from './observability/requests.js';
import type { ServiceOptions } from './options.js';
import type { AsyncStore } from './store/async-store.js';
import type { Db } from './store/sqlite/db.js';

export { DEFAULT_RATE_LIMIT, type ServiceOptions } from './options.js';

const WILDCARD_HOSTS = new Set(['0.0.0.0', '::', '[::]']);

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
  /** What /readyz answers (observability/health.ts). */
  readiness: Readiness;
  /** The Prometheus exposition, with metrics on. */
  exposition?: () => Promise<Exposition>;
  /** The start of a stop: /readyz answers 503 from now on; resolves once the requests in flight (event streams aside) have ended, or after `deadlineMs`. */
  drain(deadlineMs: number): Promise<void>;
}

export async function createService(options: ServiceOptions): Promise<Service> {
  const observation = new Observation(options);
  const core = await openCore(options, observation);
  const { store, db, ctx } = core;
  const state: HttpState = { maintenance: options.maintenance ?? false, publicUrl: options.publicUrl?.replace(/\/+$/, '') };
  const app = createFastify(options);
  // First: every request is counted, timed and logged, whatever the hooks below make of it.
  const inFlight = new InFlight();
  observeRequests(app, inFlight, observation.http(ctx, inFlight), options.logger, core.requests);
  const readiness = observation.readiness(store, core.outage, core.background, () => state.maintenance);
  const authCache = new AuthCache(store, core.clock);
  addRequestHooks(app, core, authCache, state, options.trustProxy);
  addResponseHandling(app, core.outage, options.onInternalError);
  registerRoutes(app, ctx, options);
  registerProbeRoutes(app, readiness);
  const exposition = observation.exposition(core.background);

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
    readiness,
    ...(exposition ? { exposition } : {}),
    drain(deadlineMs) {
      readiness.drain();
      return inFlight.settled(deadlineMs);
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
