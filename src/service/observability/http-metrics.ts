// The metrics of the request thread: requests by route template, method and status (a
// counter and a latency histogram), those in flight, the 429s by reason, the response
// cache and the read pool's queue. The cache and the pool are read when scraped.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { ServiceContext } from '../context.js';
import { METRICS } from './metric-names.js';

export interface HttpMetrics {
  /** A request's counter and histogram series, kept once made: finding a series by its labels each time cost a tenth of a cached page's throughput. */
  series(route: string, method: string, status: number): RequestSeries;
  inFlight: Gauge;
  refused: Counter<'reason'>;
  streams: Gauge;
}

interface RequestSeries {
  requests: { inc(): void };
  duration: { observe(seconds: number): void };
}

/** Buckets from 1 ms: a cached page answers in well under a millisecond of service time, an uncached one in a few. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export function httpMetrics(registry: Registry, ctx: Pick<ServiceContext, 'responseCache' | 'reads'>): HttpMetrics {
  const registers = [registry];
  const labelNames = ['route', 'method', 'status'] as const;
  const cache = ctx.responseCache;
  countedFrom(registry, METRICS.cacheHits, 'GET /companies pages answered from the response cache.', () => cache.hits);
  countedFrom(registry, METRICS.cacheMisses, 'GET /companies pages the response cache did not hold, so built.', () => cache.misses);
  new Gauge({ name: METRICS.cacheBytes, help: 'Bytes of pages the response cache holds.', registers, collect() { this.set(cache.size()); } });
  new Gauge({ name: METRICS.readQueue, help: 'Costly list reads (query or orderBy) waiting for a reader thread.', registers, collect() { this.set(ctx.reads.waiting()); } });
  const requests = new Counter({ name: METRICS.httpRequests, help: 'HTTP requests answered, by route template, method and status.', labelNames, registers });
  const duration = new Histogram({ name: METRICS.httpDuration, help: 'Seconds from a request\'s arrival to the end of its answer.', labelNames, buckets: LATENCY_BUCKETS, registers });
  // Bounded as the labels are: route templates x methods x statuses.
  const made = new Map<string, RequestSeries>();
  return {
    series(route, method, status) {
      const key = `${method} ${status} ${route}`;
      let found = made.get(key);
      if (!found) {
        const labels = { route, method, status: String(status) };
        found = { requests: requests.labels(labels), duration: duration.labels(labels) };
        made.set(key, found);
      }
      return found;
    },
    inFlight: new Gauge({ name: METRICS.httpInFlight, help: 'HTTP requests being answered now (open event streams included).', registers }),
    refused: new Counter({
      name: METRICS.tooManyRequests, help: 'Requests refused with 429, by reason: rate_limit, fair_queue (costly reads), render_queue (PDFs), stream_cap, platform_rate_limit.',
      labelNames: ['reason'], registers,
    }),
    streams: new Gauge({ name: METRICS.eventStreams, help: 'Event streams (GET /events/stream) open in this process.', registers }),
  };
}

/** A counter whose value something else keeps (a plain number that only grows): read at each scrape. */
export function countedFrom(registry: Registry, name: string, help: string, read: () => number): void {
  let seen = 0;
  new Counter({
    name, help, registers: [registry],
    collect() {
      const now = read();
      if (now > seen) this.inc(now - seen);
      seen = now;
    },
  });
}
