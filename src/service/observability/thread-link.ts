// A sync thread's side of the operator's tools, and the request thread's side of the
// link to it. The thread keeps a registry of its own (its pulls, its store) and answers
// the host's questions: its metrics, for a scrape to add to the host's (prom-client's
// aggregate), and a ping, which tells readiness the thread's loop still turns. Its log
// lines cross to the host, which writes them with its own.
import type { MessagePort } from 'node:worker_threads';
import { AggregatorRegistry, Registry, type MetricObjectWithValues, type MetricValue } from 'prom-client';
import type { AsyncStore } from '../store/async-store.js';
import type { PoolCounts } from '../store/monitoring.js';
import { signalsOf, type EventLog, type LogEntry, type Signals } from './signals.js';
import { poolGauges, storeTiming, timedStore } from './store-metrics.js';
import { workMetrics } from './work-metrics.js';

export type ThreadMetrics = Array<MetricObjectWithValues<MetricValue<string>>>;

/** What the thread watches for: set when the process was started with metrics or a log. */
export interface ThreadWatch {
  metrics: boolean;
  log: boolean;
}

export type ThreadQuestion = { type: 'ask'; id: number; about: 'metrics' | 'ping' };
export type ThreadReport = { type: 'answer'; id: number; metrics?: ThreadMetrics } | { type: 'log'; entry: LogEntry };

export interface ThreadObserver {
  signals: Signals;
  /** The store with its operations timed, when metrics are on. */
  timed(store: AsyncStore): AsyncStore;
  /** The thread's own PostgreSQL pool, counted in the metrics. */
  countPool(counts: () => PoolCounts): void;
  /** Answers the host's question; false when `message` is none. */
  answer(message: { type: string }): boolean;
}

/** In the thread. */
export function threadObserver(port: MessagePort, watch: ThreadWatch | undefined): ThreadObserver {
  const registry = watch?.metrics ? new Registry() : undefined;
  const timing = registry && storeTiming(registry);
  const log: EventLog | undefined = watch?.log ? (entry) => port.postMessage({ type: 'log', entry } satisfies ThreadReport) : undefined;
  return {
    signals: signalsOf(registry && workMetrics(registry), log),
    timed: (store) => (timing ? timedStore(store, timing) : store),
    countPool: (counts) => {
      if (registry) poolGauges(registry, () => [counts()]);
    },
    answer(message) {
      if (message.type !== 'ask') return false;
      const { id, about } = message as ThreadQuestion;
      if (about === 'ping' || !registry) port.postMessage({ type: 'answer', id } satisfies ThreadReport);
      else void registry.getMetricsAsJSON().then((metrics) => port.postMessage({ type: 'answer', id, metrics } satisfies ThreadReport));
      return true;
    },
  };
}

/** In the host: asks the thread, and takes its reports. */
export class ThreadLink {
  private asked = 0;
  private readonly waiting = new Map<number, (report: Extract<ThreadReport, { type: 'answer' }> | undefined) => void>();

  constructor(private readonly send: (question: ThreadQuestion) => boolean, private readonly log: EventLog | undefined) {}

  /** Handles the thread's report; false when `message` is something else. */
  take(message: { type: string }): boolean {
    const report = message as ThreadReport;
    if (report.type === 'log') this.log?.(report.entry);
    else if (report.type === 'answer') this.waiting.get(report.id)?.(report);
    else return false;
    return true;
  }

  /** The thread's answer, or undefined when it gave none within `deadlineMs` (busy, or ended). */
  ask(about: ThreadQuestion['about'], deadlineMs: number): Promise<Extract<ThreadReport, { type: 'answer' }> | undefined> {
    const id = ++this.asked;
    return new Promise((resolve) => {
      const done = (report: Extract<ThreadReport, { type: 'answer' }> | undefined) => {
        clearTimeout(timer);
        this.waiting.delete(id);
        resolve(report);
      };
      const timer = setTimeout(() => done(undefined), deadlineMs);
      this.waiting.set(id, done);
      if (!this.send({ type: 'ask', id, about })) done(undefined);
    });
  }

  /** The thread ended: nothing asked will be answered. */
  ended(): void {
    for (const done of [...this.waiting.values()]) done(undefined);
  }
}

/** The host's metrics and its threads' as one exposition: counters, gauges and histograms added up. */
export async function withThreads(registry: Registry, threads: ThreadMetrics[]): Promise<string> {
  if (threads.length === 0) return registry.metrics();
  return AggregatorRegistry.aggregate([await registry.getMetricsAsJSON(), ...threads]).metrics();
}
