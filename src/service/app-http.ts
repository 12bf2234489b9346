// The service's HTTP plumbing around the routes: the fastify instance and its body parsers,
// the hooks every request passes (correlation id, maintenance, the key, the rate limit), and
// the one place any error becomes the error envelope.
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { randomUUID } from 'node:crypto';
import { NO_SCHEMAS } from '../lib/no-schemas.js';
import { MAX_BODY_BYTES } from '../platforms/limits.js';
import type { Core, Limiter } from './app-core.js';
import { ApiError, errorBody, errors } from './errors.js';
import { eventsOf } from './events/record.js';
import { RateLimitWatch } from './events/rate-limit-watch.js';
import type { AuthCache, AuthContext } from './http/auth.js';
import { arrivalOptions, closeIfBodyUnread, DEFAULT_REQUEST_TIMEOUT_MS } from './http/incoming.js';
import { parseJsonBody } from './http/json-body.js';
import { PROBE_PATHS } from './observability/health.js';
import { clientErrorLine } from './observability/requests.js';
import type { Outage } from './outage.js';
import type { ServiceOptions } from './options.js';

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthContext;
    /** The database's version, read once the request arrived: the key of the auth and response caches. */
    dataVersion: string;
    /** Where links in the response point: configured, never taken from the Host header. */
    baseUrl: string;
  }
}

/** What requests read that the service's owner may change while it runs. */
export interface HttpState {
  maintenance: boolean;
  /** Where links point, unless a trusted proxy says otherwise; settled by listen() when not configured. */
  publicUrl: string | undefined;
}

/** The fastify instance with the service's limits and its body parsers: JSON, and no other type but an empty body. */
export function createFastify(options: ServiceOptions): FastifyInstance {
  const app = Fastify({
    // The log's own logger when there is one; the request lines are observability/requests.ts's, one per request.
    ...(options.logger ? {
      loggerInstance: childless(options.logger as FastifyBaseLogger),
      logController: new LogController({ disableRequestLogging: true }),
    } : { logger: false }),
    bodyLimit: MAX_BODY_BYTES,
    schemaController: NO_SCHEMAS,
    genReqId: () => randomUUID(),
    requestIdHeader: false,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    // Path words match in any case, as the public API's do; parameters keep the case sent.
    routerOptions: { ignoreTrailingSlash: true, caseSensitive: false },
    trustProxy: options.trustProxy ?? false,
    ...arrivalOptions(options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS, clientErrorLine(options.logger)),
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
 * The process's logger as fastify's, its child() itself: fastify asks for a child per
 * request (a pino child is pino work on every request, and a childLoggerFactory of our own
 * is checked method by method on every request). fastify's own rare lines go to the
 * process's logger; the request line carries the correlation id.
 */
function childless(logger: FastifyBaseLogger): FastifyBaseLogger {
  // pino's own children are made this way: its methods, read through the prototype.
  const same: FastifyBaseLogger = Object.create(logger, { child: { value: () => same } });
  return same;
}

/**
 * Before any route: the correlation id and the links' base, maintenance, the caller's key
 * and its rate limit, a NUL in the URL and an unknown route.
 */
export function addRequestHooks(app: FastifyInstance, core: Core, authCache: AuthCache, state: HttpState, trustProxy: boolean | undefined): void {
  // Requests without a valid key are counted per address, so every response carries the
  // rate-limit headers and unauthenticated floods are limited too.
  const limit = rateLimitTaker(core.limiter, new RateLimitWatch(eventsOf(core.ctx), core.rateLimit));
  app.decorateRequest('baseUrl', '');
  app.decorateRequest('dataVersion', '');
  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    reply.header('X-Correlation-Id', request.id);
    // A balancer's probes: no key, no limit, no data (observability/health.ts).
    if (PROBE_PATHS.has(request.routeOptions.url ?? '')) return;
    const forwarded = trustProxy && request.headers['x-forwarded-host'] !== undefined;
    request.baseUrl = forwarded || !state.publicUrl ? `${request.protocol}://${request.host}` : state.publicUrl;
    const clientId = request.headers['x-client-id'];
    // Branding images go into <img> tags, which cannot send a key; they hold no data.
    if (request.routeOptions.url === '/branding/:platformKey/:image' && request.method === 'GET' && !state.maintenance) return limit(reply, `ip:${request.ip}`);
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
      throw errors.tooManyRequests(decision.retryAfterSeconds, 'rate_limit');
    }
    if (clientId) await rateLimitWatch.admitted(clientId, Number(decision.headers['X-Rate-Limit-Remaining']));
  };
}

/** After the routes: an outage ends with the first answer below 500, and every error is answered from the catalogue. */
export function addResponseHandling(app: FastifyInstance, outage: Outage, onInternalError: ServiceOptions['onInternalError']): void {
  app.addHook('onResponse', (request, reply, done) => {
    // A probe answered without the database (readiness tells the outage itself).
    if (outage.ongoing && reply.statusCode < 500 && !PROBE_PATHS.has(request.routeOptions.url ?? '')) outage.back();
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
