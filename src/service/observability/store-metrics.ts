// The store as the metrics see it: how long each store operation takes (the time a request
// or a pull waits for it: queueing behind a transaction, the pool and the database), the
// PostgreSQL pool's connections and the requests waiting for one, and whether the
// database can be reached.
import { Gauge, type Registry } from 'prom-client';
import type { AsyncStore } from '../store/async-store.js';
import { ArrayHistogram, type HistogramSeries } from './array-metrics.js';
import type { PoolCounts } from '../store/monitoring.js';
import { METRICS } from './metric-names.js';

const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/** Kept in plain numbers (array-metrics.ts): a request makes a store call or two. */
export function storeTiming(registry: Registry): ArrayHistogram {
  return new ArrayHistogram({
    name: METRICS.storeDuration, help: 'Seconds a store operation took, by operation (the store method, or transaction for a whole transaction).',
    buckets: BUCKETS, registry,
  });
}

/** The pool's connections in use and idle, and the requests waiting for one; `pools` is read at each scrape. */
export function poolGauges(registry: Registry, pools: () => PoolCounts[]): void {
  new Gauge({
    name: METRICS.storePool, help: 'PostgreSQL connections of this process\'s pools, by state: in_use or idle.', labelNames: ['state'], registers: [registry],
    collect() {
      const all = pools();
      this.set({ state: 'in_use' }, all.reduce((n, p) => n + p.total - p.idle, 0));
      this.set({ state: 'idle' }, all.reduce((n, p) => n + p.idle, 0));
    },
  });
  new Gauge({
    name: METRICS.storePoolWaiting, help: 'Store requests waiting for a PostgreSQL connection of this process\'s pools.', registers: [registry],
    collect() { this.set(pools().reduce((n, p) => n + p.waiting, 0)); },
  });
}

export function unreachableGauge(registry: Registry, ongoing: () => boolean): void {
  new Gauge({
    name: METRICS.databaseUnreachable, help: '1 while this process cannot reach its database (requests answer 503, background work pauses), else 0.', registers: [registry],
    collect() { this.set(ongoing() ? 1 : 0); },
  });
}

/**
 * The store with each operation timed. Only calls that answer a promise are: the page-plan
 * builders compile SQL and touch no database. A transaction is timed whole, its work
 * included; calls made inside it go to its own store (`tx`), untimed.
 */
export function timedStore(store: AsyncStore, timing: ArrayHistogram): AsyncStore {
  const timed: Record<string, unknown> = {};
  for (const [name, method] of Object.entries(store) as Array<[string, (...args: unknown[]) => unknown]>) {
    if (typeof method !== 'function') continue;
    // Made on first use: the series of operations never called are not sent.
    let series: HistogramSeries | undefined;
    timed[name] = (...args: unknown[]) => {
      const started = performance.now();
      const answer = method(...args);
      if (!(answer instanceof Promise)) return answer;
      const stop = () => (series ??= timing.series({ operation: name })).observe((performance.now() - started) / 1000);
      answer.then(stop, stop);
      return answer;
    };
  }
  return timed as unknown as AsyncStore;
}
