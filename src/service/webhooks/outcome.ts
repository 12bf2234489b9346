// What an attempt makes of its delivery (Delivered, a retry time, or given up) and of its
// consumer (disabled on a 410 or after a day of failures, with a ferry.webhook.disabled
// event in the same transaction). Outcomes are written in batches: every attempt that
// finished in one turn of the event loop is recorded in one short transaction.
import { isoSeconds, type Clock } from '../../lib/clock.js';
import { FERRY_EVENTS } from '../events/catalogue.js';
import { recordEvent } from '../events/record.js';
import type { ClaimedDelivery } from '../store/webhook-deliveries.js';
import type { AttemptResult } from './attempt.js';
import type { AsyncStore } from '../store/async-store.js';
import type { Signals } from '../observability/signals.js';
import { DEFAULT_BACKOFF, nextStep, type BackoffPolicy } from './backoff.js';

export type Settled = 'delivered' | 'retried' | 'failed' | 'stopped';

/** What recording needs; a pass's DeliveryDeps (deliver-once.ts) has all of it. */
export interface OutcomeDeps {
  store: AsyncStore;
  clock: Clock;
  /** Told after an event this pass recorded (ferry.webhook.disabled) has committed. */
  changed?: () => void;
  backoff?: BackoffPolicy;
  /** For the backoff's jitter (tests pin it). */
  random?: () => number;
  onError?: (err: unknown, context: string) => void;
  /** Attempts recorded, consumers disabled: for the metrics and the log. */
  signals?: Signals;
}

export interface Finished {
  delivery: ClaimedDelivery;
  at: Date;
  result: AttemptResult;
  resolve: (settled: Settled) => void;
  /** Why recording this attempt disabled its consumer, if it did. */
  disabled?: string;
}

/**
 * Finished attempts waiting to be recorded. On its own it records them at the end of the
 * event loop's turn; the delivery loop instead takes them into the transaction of its next
 * claim (`inClaims`), one commit for both.
 */
export class Recorder {
  private queue: Finished[] = [];
  private scheduled = false;

  constructor(private readonly deps: OutcomeDeps, private inClaims = false) {}

  /** Resolves once the outcome is committed; 'stopped' when it could not be (the delivery is due again). */
  add(delivery: ClaimedDelivery, at: Date, result: AttemptResult): Promise<Settled> {
    return new Promise((resolve) => {
      this.queue.push({ delivery, at, result, resolve });
      this.schedule();
    });
  }

  /** From now on, records on its own (the loop is stopping and claims no more). */
  standAlone(): void {
    this.inClaims = false;
    this.schedule();
  }

  /** Takes the finished attempts: record() them inside a transaction, then settle() or fail(). */
  take(): Finished[] {
    return this.queue.splice(0);
  }

  /** One outcome after another, in the order the attempts finished. */
  async record(batch: Finished[]): Promise<Settled[]> {
    const settled: Settled[] = [];
    for (const f of batch) settled.push(await record(this.deps, f.delivery, f.at, f.result, (reason) => (f.disabled = reason)));
    return settled;
  }

  /** The batch's outcomes have committed. */
  settle(batch: Finished[], settled: Settled[]): void {
    batch.forEach((f, i) => {
      const outcome = settled[i]!;
      if (outcome !== 'stopped') {
        const { delivery, result, disabled } = f;
        this.deps.signals?.deliveryRecorded({
          consumerId: delivery.consumer_id, deliveryId: delivery.id, eventId: delivery.event_id, outcome,
          statusCode: result.statusCode, error: result.error, latencyMs: result.latencyMs, ...(disabled ? { disabled } : {}),
        });
      }
      f.resolve(outcome);
    });
  }

  /** The transaction did not commit: the deliveries are due again. */
  async fail(batch: Finished[], err: unknown): Promise<void> {
    this.deps.onError?.(err, 'webhook delivery record');
    for (const f of batch) {
      try {
        await this.deps.store.releaseDeliveryLease(f.delivery.seq);
      } catch {
        // The store is closing; leases are cleared when the next loop starts.
      }
      f.resolve('stopped');
    }
  }

  private schedule(): void {
    if (this.inClaims || this.scheduled || this.queue.length === 0) return;
    this.scheduled = true;
    setImmediate(this.flush);
  }

  private readonly flush = (): void => {
    this.scheduled = false;
    const batch = this.take();
    if (batch.length === 0) return;
    void this.deps.store.transaction(() => this.record(batch)).then(
      (settled) => this.settle(batch, settled),
      (err: unknown) => this.fail(batch, err),
    );
  };
}

/** One attempt's outcome; inside the batch's transaction. `disabled` is told when it disables the consumer. */
async function record(deps: OutcomeDeps, delivery: ClaimedDelivery, at: Date, result: AttemptResult, disabled: (reason: string) => void): Promise<Settled> {
  const { store } = deps;
  if (result.outcome === 'stopped') {
    await store.releaseDeliveryLease(delivery.seq);
    return 'stopped';
  }
  const now = deps.clock.now();
  const attempt = { at: isoSeconds(at), status_code: result.statusCode, error: result.error, latency_ms: result.latencyMs };
  if (result.outcome === 'delivered') {
    await store.recordDeliveryAttempt(delivery.seq, attempt, { status: 'Delivered', completed: isoSeconds(now) });
    return 'delivered';
  }
  if (result.outcome === 'gone') {
    if (await store.recordDeliveryAttempt(delivery.seq, attempt, { status: 'Failed', completed: isoSeconds(now) })) {
      await disable(deps, delivery, 'The receiver answered 410 Gone.', disabled);
    }
    return 'failed';
  }
  const policy = deps.backoff ?? DEFAULT_BACKOFF;
  const firstFailure = delivery.first_failure ? new Date(delivery.first_failure) : at;
  const step = nextStep(policy, {
    failures: delivery.attempts + 1, firstFailure, now, random: deps.random ?? Math.random,
    ...(result.retryAfterMs !== undefined ? { retryAfterMs: result.retryAfterMs } : {}),
  });
  if (step.giveUp) {
    if (await store.recordDeliveryAttempt(delivery.seq, attempt, { status: 'Failed', completed: isoSeconds(now) })) {
      const last = result.error ?? `HTTP ${result.statusCode}`;
      await disable(deps, delivery, `Deliveries failed for ${formatSpan(policy.giveUpMs)}; the last attempt: ${last}.`, disabled);
    }
    return 'failed';
  }
  await store.recordDeliveryAttempt(delivery.seq, attempt, { status: 'Pending', nextAttempt: isoSeconds(step.at), firstFailure: isoSeconds(firstFailure) });
  return 'retried';
}

/** Disables the consumer and says so with a ferry.webhook.disabled event (to the account's other consumers, and the stream). */
async function disable(deps: OutcomeDeps, delivery: ClaimedDelivery, reason: string, disabled: (reason: string) => void): Promise<void> {
  if (!(await deps.store.disableConsumerDeliveries(delivery.consumer_id, reason))) return;
  disabled(reason);
  await recordEvent({ store: deps.store, clock: deps.clock, ...(deps.changed ? { changed: deps.changed } : {}) }, {
    clientId: delivery.client_id, eventType: FERRY_EVENTS.webhookDisabled, payload: { id: delivery.consumer_id, url: delivery.url, reason },
  });
}

function formatSpan(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} hour${ms === 3_600_000 ? '' : 's'}`;
  return `${Math.round(ms / 1000)} s`;
}
