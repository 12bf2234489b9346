// The metrics of the background work, in whichever thread does it: pulls (the sync thread,
// or the tests' in-process passes), pushes (the request thread records them, the sync
// thread settles pending ones) and webhook deliveries (the request thread). Each thread
// keeps its own registry; a scrape adds them up (thread-link.ts).
import { Counter, Histogram, type Registry } from 'prom-client';
import { METRICS } from './metric-names.js';

export interface WorkMetrics {
  pullsCompleted: Counter<'data_type'>;
  pullsFailed: Counter<'data_type' | 'status'>;
  pullDuration: Histogram<'data_type'>;
  pullLeasesLost: Counter;
  recordsIngested: Counter<'data_type'>;
  pushOperations: Counter<'status'>;
  deliveries: Counter<'outcome'>;
  deliveryAttemptDuration: Histogram;
  consumersDisabled: Counter;
}

export function workMetrics(registry: Registry): WorkMetrics {
  const registers = [registry];
  return {
    pullsCompleted: new Counter({ name: METRICS.pullsCompleted, help: 'Pulls that ended Complete in this process, by data type.', labelNames: ['data_type'], registers }),
    pullsFailed: new Counter({
      name: METRICS.pullsFailed, help: 'Pulls that ended in an error status in this process (FetchError, AuthError, RateLimitError, ...), by data type and status.',
      labelNames: ['data_type', 'status'], registers,
    }),
    pullDuration: new Histogram({
      name: METRICS.pullDuration, help: 'Seconds from a pull being requested to its end (Complete or an error), queue time included.',
      labelNames: ['data_type'], buckets: [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200], registers,
    }),
    pullLeasesLost: new Counter({ name: METRICS.pullLeasesLost, help: 'Pulls this process was running that another worker took over, its lease having run out.', registers }),
    recordsIngested: new Counter({ name: METRICS.recordsIngested, help: 'Records written by pulls (committed pages), by data type.', labelNames: ['data_type'], registers }),
    pushOperations: new Counter({
      name: METRICS.pushOperations, help: 'Push operations recorded (Success, Failed, Pending) or settled later (Success, Failed, TimedOut), by status.',
      labelNames: ['status'], registers,
    }),
    deliveries: new Counter({
      name: METRICS.deliveries, help: 'Webhook delivery attempts recorded, by what became of the delivery: delivered, retried (a retry is planned) or failed (given up).',
      labelNames: ['outcome'], registers,
    }),
    deliveryAttemptDuration: new Histogram({
      name: METRICS.deliveryAttemptDuration, help: 'Seconds a webhook attempt took, from sending to the receiver\'s answer or the failure.',
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10], registers,
    }),
    consumersDisabled: new Counter({ name: METRICS.consumersDisabled, help: 'Webhook consumers disabled by their deliveries (a 410, or failures past the give-up time).', registers }),
  };
}
