// The metrics of the request thread: requests by route template, method and status (a
// counter and a latency histogram), those in flight, the 429s by reason, the response
// cache and the read pool's queue. The requests' series are plain numbers (array-metrics.ts);
// what is in flight, the cache and the pool are read when scraped.
import { Counter, Gauge, type Registry } from 'prom-client';
import type { ServiceContext } from '../context.js';
import { ArrayCounter, ArrayHistogram, type CounterSeries, type HistogramSeries } from './array-metrics.js';
import { METHOD_LABELS } from './labels.js';
import { METRICS } from './metric-names.js';

export interface HttpMetrics {
  /** A request's counter and histogram series, kept once made. */
  series(route: string, method: string, status: number): RequestSeries;
  refused: Counter<'reason'>;
}

export interface RequestSeries {
  requests: CounterSeries;
  duration: HistogramSeries;
}

/** What is being answered now, read at each scrape. */
export interface InFlightCounts {
  /** Requests, open event streams included. */
  readonly all: number;
  readonly streams: number;
}

/** Buckets from 1 ms: a cached page answers in well under a millisecond of service time, an uncached one in a few. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export function httpMetrics(registry: Registry, ctx: Pick<ServiceContext, 'responseCache' | 'reads'>, inFlight: InFlightCounts): HttpMetrics {
  const registers = [registry];
  const cache = ctx.responseCache;
  countedFrom(registry, METRICS.cacheHits, 'GET /companies pages answered from the response cache.', () => cache.hits);
  countedFrom(registry, METRICS.cacheMisses, 'GET /companies pages the response cache did not hold, so built.', () => cache.misses);
  new Gauge({ name: METRICS.cacheBytes, help: 'Bytes of pages the response cache holds.', registers, collect() { this.set(cache.size()); } });
  new Gauge({ name: METRICS.readQueue, help: 'Costly list reads (query or orderBy) waiting for a reader thread.', registers, collect() { this.set(ctx.reads.waiting()); } });
  const requests = new ArrayCounter({ name: METRICS.httpRequests, help: 'HTTP requests answered, by route template, method and status.', registry });
  const duration = new ArrayHistogram({ name: METRICS.httpDuration, help: 'Seconds from a request\'s arrival to the end of its answer.', buckets: LATENCY_BUCKETS, registry });
  new Gauge({ name: METRICS.httpInFlight, help: 'HTTP requests being answered now (open event streams included).', registers, collect() { this.set(inFlight.all); } });
  const refused = new Counter({
    name: METRICS.tooManyRequests, help: 'Requests refused with 429, by reason: rate_limit, fair_queue (costly reads), render_queue (PDFs), stream_cap, platform_rate_limit.',
    labelNames: ['reason'], registers,
  });
  new Gauge({ name: METRICS.eventStreams, help: 'Event streams (GET /events/stream) open in this process.', registers, collect() { this.set(inFlight.streams); } });
  // Bounded as the labels are: route templates x methods x statuses. By route, then by
  // status and method as one number: no key is built per request.
  const byRoute = new Map<string, Map<number, RequestSeries>>();
  return {
    series(route, method, status) {
      let ofRoute = byRoute.get(route);
      if (!ofRoute) byRoute.set(route, ofRoute = new Map());
      const key = status * 16 + methodIndex(method);
      let found = ofRoute.get(key);
      if (!found) {
        const labels = { route, method, status: String(status) };
        found = { requests: requests.series(labels), duration: duration.series(labels) };
        ofRoute.set(key, found);
      }
      return found;
    },
    refused,
  };
}

const METHOD_INDEX = new Map<string, number>(METHOD_LABELS.map((m, i) => [m, i]));

/** A method label's place in METHOD_LABELS (under 16). */
function methodIndex(method: string): number {
  return METHOD_INDEX.get(method) ?? METHOD_INDEX.get('OTHER')!;
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
