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
import type { HttpMetrics } from './http-metrics.js';
import { methodLabel, routeLabel } from './labels.js';
import type { Logger } from './logger.js';

/** The event stream: a request that lasts as long as its reader likes, so no drain waits for it (the close ends it). */
const STREAM_ROUTE = '/events/stream';

interface Seen {
  bytesBefore: number;
  refusal: TooManyReason | undefined;
}

declare module 'fastify' {
  interface FastifyRequest {
    seen: Seen | null;
  }
}

export class InFlight {
  /** Requests being answered, event streams left out: each by a token of its own. */
  private readonly active = new Set<object>();
  private streams = 0;
  /** Drains waiting, each for the requests that were in flight when it began. */
  private readonly drains = new Set<{ left: Set<object>; done: () => void }>();

  constructor(private readonly metrics: HttpMetrics | undefined) {}

  /** A request began; the function ends it. */
  started(stream: boolean): () => void {
    const token = {};
    this.metrics?.inFlight.inc();
    if (stream) this.metrics?.streams.set(++this.streams);
    else this.active.add(token);
    return () => {
      this.metrics?.inFlight.dec();
      if (stream) this.metrics?.streams.set(--this.streams);
      this.active.delete(token);
      for (const drain of this.drains) {
        drain.left.delete(token);
        if (drain.left.size === 0) drain.done();
      }
    };
  }

  /** Requests being answered, event streams left out. */
  get requests(): number {
    return this.active.size;
  }

  /**
   * Resolves once every request in flight now (event streams aside) has ended, or after
   * `deadlineMs`. Requests that arrive meanwhile are served but not waited for: under
   * steady traffic there would always be one.
   */
  settled(deadlineMs: number): Promise<void> {
    if (this.active.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const drain = {
        left: new Set(this.active),
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
export function observeRequests(app: FastifyInstance, metrics: HttpMetrics | undefined, logger: Logger | undefined, requests?: RequestTime): InFlight {
  const inFlight = new InFlight(metrics);
  app.decorateRequest('seen', null);
  app.addHook('onRequest', (request, reply, done) => {
    const route = request.routeOptions.url ?? '';
    const stream = route === STREAM_ROUTE;
    request.seen = { bytesBefore: request.raw.socket?.bytesWritten ?? 0, refusal: undefined };
    const end = inFlight.started(stream);
    const answered = stream || PROBE_PATHS.has(route) ? undefined : requests?.begin();
    reply.raw.once('close', () => {
      end();
      answered?.();
      ended(request, reply, metrics, logger);
    });
    done();
  });
  app.addHook('onError', (request, _reply, error, done) => {
    if (request.seen && error instanceof ApiError && error.statusCode === 429) request.seen.refusal = error.refusal;
    done();
  });
  return inFlight;
}

function ended(request: FastifyRequest, reply: FastifyReply, metrics: HttpMetrics | undefined, logger: Logger | undefined): void {
  const route = routeLabel(request.routeOptions.url);
  const method = methodLabel(request.method);
  const status = reply.statusCode;
  const seconds = reply.elapsedTime / 1000;
  if (metrics) {
    const series = metrics.series(route, method, status);
    series.requests.inc();
    series.duration.observe(seconds);
    if (status === 429) metrics.refused.inc({ reason: request.seen?.refusal ?? 'rate_limit' });
  }
  if (!logger) return;
  const aborted = !reply.raw.writableFinished;
  const path = request.url.split('?')[0] ?? '/';
  const durationMs = Math.round(reply.elapsedTime * 10) / 10;
  // Only the client's id: never the key, nor the Authorization header it came in.
  const clientId = request.auth?.caller.id;
  const actingFor = request.auth && request.auth.client.id !== request.auth.caller.id ? request.auth.client.id : undefined;
  logger.info({
    event: 'request', method: request.method, route, path, status, durationMs, bytes: bytesOf(request, reply), clientId, actingFor,
    correlationId: request.id, ...(aborted ? { aborted: true } : {}),
  }, `${request.method} ${path} ${status} in ${durationMs} ms${aborted ? ' (client went away)' : ''}`);
}

/** The body's length as sent; for a streamed answer (no Content-Length), the bytes written to the connection. */
function bytesOf(request: FastifyRequest, reply: FastifyReply): number {
  const length = Number(reply.getHeader('content-length'));
  if (Number.isFinite(length)) return length;
  return Math.max(0, (request.raw.socket?.bytesWritten ?? 0) - (request.seen?.bytesBefore ?? 0));
}

/**
 * The line of an answer written on the bare socket (a request that did not arrive in time,
 * headers too large, not HTTP): no route, method or client is known, only what was answered.
 */
export function clientErrorLine(logger: Logger | undefined): ((statusCode: number, correlationId: string) => void) | undefined {
  if (!logger) return undefined;
  return (status, correlationId) => logger.info({ event: 'request', route: routeLabel(undefined), status, correlationId }, `request refused before it was read: ${status}`);
}
