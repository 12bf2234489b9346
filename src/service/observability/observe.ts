// What a process keeps and says for its operator, made once per service (app.ts) or
// `ferry worker` (worker.ts): the metrics registry, with the process's own metrics, the
// work's and the store's; the signals the work sends them and the log; and readiness.
// With neither metrics nor a logger, nothing is kept and nothing is timed.
import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import type { Clock } from '../../lib/clock.js';
import type { Background } from '../background.js';
import type { Outage } from '../outage.js';
import type { ServiceContext } from '../context.js';
import type { AsyncStore } from '../store/async-store.js';
import type { OpenedStore } from '../store/open-store.js';
import { backlogGauges } from './backlog-metrics.js';
import { Readiness } from './health.js';
import { httpMetrics, type HttpMetrics, type InFlightCounts } from './http-metrics.js';
import { eventLog, type Logger } from './logger.js';
import { signalsOf, type EventLog, type Signals } from './signals.js';
import { poolGauges, storeTiming, timedStore, unreachableGauge } from './store-metrics.js';
import { withThreads, type ThreadWatch } from './thread-link.js';
import { METRICS } from './metric-names.js';
import { workMetrics } from './work-metrics.js';

export interface ObserveOptions {
  /** Keep Prometheus metrics (what `--metrics-port` serves). */
  metrics?: boolean;
  /** Where request lines and background events go; none: nothing is logged. */
  logger?: Logger;
}

export interface Exposition {
  contentType: string;
  text: string;
}

export class Observation {
  readonly registry: Registry | undefined;
  readonly log: EventLog | undefined;
  readonly signals: Signals;
  /** What the sync thread is to keep and say. */
  readonly watch: ThreadWatch | undefined;

  constructor(readonly options: ObserveOptions) {
    this.registry = options.metrics ? new Registry() : undefined;
    if (this.registry) collectDefaultMetrics({ register: this.registry });
    this.log = options.logger ? eventLog(options.logger) : undefined;
    this.signals = signalsOf(this.registry && workMetrics(this.registry), this.log);
    this.watch = this.registry || this.log ? { metrics: Boolean(this.registry), log: Boolean(this.log) } : undefined;
  }

  /** The opened store with its operations timed, and its PostgreSQL pool counted. */
  store<T extends OpenedStore>(opened: T): T {
    if (!this.registry) return opened;
    if (opened.kind === 'postgres') poolGauges(this.registry, () => [opened.poolCounts()]);
    return { ...opened, store: timedStore(opened.store, storeTiming(this.registry)) };
  }

  /** The database's reachability, and, where background work runs, its backlog in the database. */
  watchStore(opened: OpenedStore, outage: Outage, clock: Clock, background: boolean): void {
    if (!this.registry) return;
    unreachableGauge(this.registry, () => outage.ongoing);
    if (background) backlogGauges(this.registry, opened.store, clock);
  }

  readiness(store: AsyncStore, outage: Outage, background: Background | undefined, maintenance?: () => boolean): Readiness {
    return new Readiness({
      store, outage,
      ...(background ? { background: () => background.health() } : {}),
      ...(maintenance ? { maintenance } : {}),
    });
  }

  /** The request thread's metrics: requests, refusals, the response cache and the read pool. */
  http(ctx: Pick<ServiceContext, 'responseCache' | 'reads'>, inFlight: InFlightCounts): HttpMetrics | undefined {
    return this.registry && httpMetrics(this.registry, ctx, inFlight);
  }

  /** The exposition: this thread's metrics with the sync threads' added in; undefined without metrics. */
  exposition(background: Background | undefined): (() => Promise<Exposition>) | undefined {
    const { registry } = this;
    if (!registry) return undefined;
    if (background) {
      new Gauge({
        name: METRICS.syncThreads, help: 'Sync threads running in this process (on SQLite the second starts once there is sync work).', registers: [registry],
        collect() { this.set(background.syncThreads()); },
      });
    }
    return async () => ({ contentType: registry.contentType, text: await withThreads(registry, (await background?.threadMetrics()) ?? []) });
  }
}
