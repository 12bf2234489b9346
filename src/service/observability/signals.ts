// What the service's work tells the operator's tools as it happens: each call is one thing
// an operator counts or acts on. `signalsOf` turns them into metrics (work-metrics.ts) and
// log lines (an EventLog: the process's logger, or the host's across a thread); the
// quiet signals drop them, where nobody watches (tests, the CLI's embedded service).
import { isErrored, type PullStatus } from '../store/pull-status.js';
import { dataTypeLabel } from './labels.js';
import type { WorkMetrics } from './work-metrics.js';

/** One line for the log: what happened (`event`, a fixed name), in words, with the ids to look it up. Never a secret. */
export interface LogEntry {
  level: 'debug' | 'info' | 'warn' | 'error';
  event: string;
  message: string;
  fields?: Record<string, string | number | null>;
}

export type EventLog = (entry: LogEntry) => void;

/** How a pull's run in this process ended: a final status, back in the queue ('Fetching'), or taken over by another worker. */
export interface PullRun {
  pullId: string;
  companyId: string;
  dataType: string;
  outcome: PullStatus | 'LeaseLost';
  /** Seconds since the pull was requested. */
  sinceRequested: number;
}

/** A webhook attempt whose outcome was recorded. */
export interface DeliveryRecorded {
  consumerId: string;
  deliveryId: string;
  eventId: string;
  outcome: 'delivered' | 'retried' | 'failed';
  statusCode: number | null;
  /** Why the attempt failed, in the delivery log's words (never the receiver's). */
  error: string | null;
  latencyMs: number;
  /** Why the consumer was disabled by this attempt, when it was. */
  disabled?: string;
}

export interface Signals {
  pullRan(run: PullRun): void;
  /** A page of a pull committed `count` records. */
  recordsWritten(dataType: string, count: number): void;
  /** A push operation was recorded with, or settled to, this status. */
  pushRecorded(status: string): void;
  deliveryRecorded(delivery: DeliveryRecorded): void;
}

export const quietSignals: Signals = {
  pullRan: () => undefined,
  recordsWritten: () => undefined,
  pushRecorded: () => undefined,
  deliveryRecorded: () => undefined,
};

export function signalsOf(metrics: WorkMetrics | undefined, log: EventLog | undefined): Signals {
  if (!metrics && !log) return quietSignals;
  return {
    pullRan(run) {
      if (metrics) countPull(metrics, run);
      if (log && (isFinalError(run.outcome) || run.outcome === 'LeaseLost')) log(pullLine(run));
    },
    recordsWritten(dataType, count) {
      metrics?.recordsIngested.inc({ data_type: dataTypeLabel(dataType) }, count);
    },
    pushRecorded(status) {
      metrics?.pushOperations.inc({ status });
    },
    deliveryRecorded(delivery) {
      if (metrics) {
        metrics.deliveries.inc({ outcome: delivery.outcome });
        metrics.deliveryAttemptDuration.observe(delivery.latencyMs / 1000);
        if (delivery.disabled) metrics.consumersDisabled.inc();
      }
      if (log) for (const line of deliveryLines(delivery)) log(line);
    },
  };
}

const isFinalError = (outcome: PullRun['outcome']): outcome is PullStatus => outcome !== 'LeaseLost' && isErrored(outcome);

function countPull(metrics: WorkMetrics, run: PullRun): void {
  const dataType = dataTypeLabel(run.dataType);
  if (run.outcome === 'LeaseLost') metrics.pullLeasesLost.inc();
  else if (run.outcome === 'Complete') metrics.pullsCompleted.inc({ data_type: dataType });
  else if (isErrored(run.outcome)) metrics.pullsFailed.inc({ data_type: dataType, status: run.outcome });
  if (run.outcome === 'Complete' || isFinalError(run.outcome)) metrics.pullDuration.observe({ data_type: dataType }, run.sinceRequested);
}

function pullLine(run: PullRun): LogEntry {
  const fields = { pullId: run.pullId, companyId: run.companyId, dataType: run.dataType };
  if (run.outcome === 'LeaseLost') {
    return { level: 'warn', event: 'pull.lease_lost', fields, message: `pull ${run.pullId} was taken over by another worker: this one held it past its lease (overloaded, or the database slow to answer)` };
  }
  return {
    level: 'warn', event: 'pull.failed', fields: { ...fields, status: run.outcome },
    message: `pull ${run.pullId} (${run.dataType}) ended ${run.outcome}; its error: GET /companies/${run.companyId}/data/history/${run.pullId}`,
  };
}

function deliveryLines(delivery: DeliveryRecorded): LogEntry[] {
  const fields = { consumerId: delivery.consumerId, deliveryId: delivery.deliveryId, eventId: delivery.eventId, statusCode: delivery.statusCode, error: delivery.error };
  const why = delivery.error ?? `HTTP ${delivery.statusCode}`;
  const lines: LogEntry[] = [];
  if (delivery.outcome === 'retried') {
    lines.push({ level: 'debug', event: 'webhook.attempt_failed', fields, message: `webhook attempt to consumer ${delivery.consumerId} failed (${why}); retrying later` });
  }
  if (delivery.outcome === 'failed') {
    lines.push({ level: 'warn', event: 'webhook.delivery_failed', fields, message: `webhook delivery ${delivery.deliveryId} (event ${delivery.eventId}) to consumer ${delivery.consumerId} failed for good (${why})` });
  }
  if (delivery.disabled) {
    lines.push({
      level: 'warn', event: 'webhook.consumer_disabled', fields: { consumerId: delivery.consumerId, reason: delivery.disabled },
      message: `webhook consumer ${delivery.consumerId} was disabled: ${delivery.disabled}`,
    });
  }
  return lines;
}
