// Every request, seen once it has ended: counted and timed by route template, method and
// status (http-metrics.ts), logged as one line (time, method, route, path, status,
// duration, bytes, the client's id, the correlation id the answer carried), and counted in
// flight while it runs, which is what a drain waits for. A 429 is counted by its reason,
// which the catalogue's error carries (errors.ts). Seen at the response's close, so a
// request whose client went away mid-answer is seen too (logged `aborted`).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, type TooManyReason } from '../errors.js';
import type { RequestTime } from '../sync/request-load.js';
import { PROBE_PATHS } from './health.js';
import type { HttpMetrics, InFlightCounts } from './http-metrics.js';
import { methodLabel, routeLabel } from './labels.js';
import type { Logger } from './logger.js';
import { requestLineWriter, type RequestLineFields } from './request-line.js';

/** The event stream: a request that lasts as long as its reader likes, so no drain waits for it (the close ends it). */
const STREAM_ROUTE = '/events/stream';

declare module 'fastify' {
  interface FastifyRequest {
    /** Its number in flight (InFlight); 0 for an event stream. */
    flight: number;
    /** The route's template as matched (null: no route did). */
    template: string | null;
    /** Bytes the connection had sent before this answer: what a streamed answer sends is what it adds. */
    bytesBefore: number;
    /** Why a 429 was given. */
    refusal: TooManyReason | null;
  }
}

/**
 * Requests being answered, event streams counted apart. Each request gets the next number;
 * a drain waits for the numbers given before it began: no set of requests is kept.
 */
export class InFlight implements InFlightCounts {
  private requests = 0;
  streams = 0;
  private numbered = 0;
  /** Drains waiting, each for the requests numbered up to `upTo` that were still in flight when it began. */
  private readonly drains = new Set<{ upTo: number; left: number; done: () => void }>();

  get all(): number {
    return this.requests + this.streams;
  }

  /** A request began: its number, which ends it (0 for an event stream). */
  started(stream: boolean): number {
    if (stream) {
      this.streams++;
      return 0;
    }
    this.requests++;
    return ++this.numbered;
  }

  ended(flight: number): void {
    if (flight === 0) {
      this.streams--;
      return;
    }
    this.requests--;
    for (const drain of this.drains) {
      if (flight <= drain.upTo && --drain.left === 0) drain.done();
    }
  }

  /**
   * Resolves once every request in flight now (event streams aside) has ended, or after
   * `deadlineMs`. Requests that arrive meanwhile are served but not waited for: under
   * steady traffic there would always be one.
   */
  settled(deadlineMs: number): Promise<void> {
    if (this.requests === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const drain = {
        upTo: this.numbered,
        left: this.requests,
        done: () => {
          clearTimeout(timer);
          this.drains.delete(drain);
          resolve();
        },
      };
      const timer = setTimeout(drain.done, deadlineMs);
      this.drains.add(drain);
    });
  }
}

/** `requests`: the time clients' requests are in flight, probes and event streams aside (the sync worker gives way to it). */
export function observeRequests(
  app: FastifyInstance, inFlight: InFlight, metrics: HttpMetrics | undefined, logger: Logger | undefined, requests?: RequestTime,
): void {
  const write = logger && requestLineWriter(logger);
  app.decorateRequest('flight', 0);
  app.decorateRequest('template', null);
  app.decorateRequest('bytesBefore', 0);
  app.decorateRequest('refusal', null);
  app.addHook('onRequest', (request, reply, done) => {
    const template = request.routeOptions.url ?? null;
    request.template = template;
    request.bytesBefore = request.raw.socket?.bytesWritten ?? 0;
    const stream = template === STREAM_ROUTE;
    request.flight = inFlight.started(stream);
    const client = requests !== undefined && !stream && !PROBE_PATHS.has(template ?? '');
    if (client) requests.start();
    reply.raw.on('close', () => {
      inFlight.ended(request.flight);
      if (client) requests.end();
      ended(request, reply, metrics, write);
    });
    done();
  });
  app.addHook('onError', (request, _reply, error, done) => {
    if (error instanceof ApiError && error.statusCode === 429) request.refusal = error.refusal ?? null;
    done();
  });
}

function ended(request: FastifyRequest, reply: FastifyReply, metrics: HttpMetrics | undefined, write: ((fields: RequestLineFields) => void) | undefined): void {
  const route = routeLabel(request.template ?? undefined);
  const status = reply.statusCode;
  const elapsedMs = reply.elapsedTime;
  if (metrics) {
    const series = metrics.series(route, methodLabel(request.method), status);
    series.requests.inc();
    series.duration.observe(elapsedMs / 1000);
    if (status === 429) metrics.refused.inc({ reason: request.refusal ?? 'rate_limit' });
  }
  if (!write) return;
  const { url, auth } = request;
  const query = url.indexOf('?');
  write({
    method: request.method,
    route,
    path: query === -1 ? url : url.slice(0, query),
    status,
    durationMs: elapsedMs,
    bytes: bytesOf(request, reply),
    // Only the client's id: never the key, nor the Authorization header it came in.
    clientId: auth?.caller.id,
    actingFor: auth && auth.client.id !== auth.caller.id ? auth.client.id : undefined,
    correlationId: request.id,
    aborted: !reply.raw.writableFinished,
  });
}

/** The body's length as sent; for a streamed answer (no Content-Length), the bytes written to the connection. */
function bytesOf(request: FastifyRequest, reply: FastifyReply): number {
  const length = Number(reply.getHeader('content-length'));
  if (Number.isFinite(length)) return length;
  return Math.max(0, (request.raw.socket?.bytesWritten ?? 0) - request.bytesBefore);
}

/**
 * The line of an answer written on the bare socket (a request that did not arrive in time,
 * headers too large, not HTTP): no route, method or client is known, only what was answered.
 */
export function clientErrorLine(logger: Logger | undefined): ((statusCode: number, correlationId: string) => void) | undefined {
  if (!logger) return undefined;
  return (status, correlationId) => logger.info({ event: 'request', route: routeLabel(undefined), status, correlationId }, `request refused before it was read: ${status}`);
}
