// One pass of webhook deliveries: claim the due lane heads (one short transaction), attempt
// them concurrently, and record the outcomes (outcome.ts: batched, in short transactions).
// Accounts take turns for the slots, each holding at most its share, and a consumer never
// has more than `perConsumer` attempts in flight (store/delivery-turns.ts), so a receiver
// that hangs holds a few slots and the others keep flowing; its circuit breaker
// (breaker.ts) then holds it to one trial now and then. The loop in loop.ts overlaps
// passes (startPass returns once it has claimed, and takes the outcomes of earlier passes'
// attempts into its claim's transaction); tests await deliverOnce() on a fake clock.
import { isoSeconds } from '../../lib/clock.js';
import type { Sealer } from '../secrets.js';
import type { ClaimedDelivery, InFlightIds } from '../store/webhook-deliveries.js';
import { attemptDelivery, ATTEMPT_TIMEOUT_MS, type AttemptOptions, type AttemptResult } from './attempt.js';
import type { Breakers } from './breaker.js';
import { Recorder, type OutcomeDeps, type Settled } from './outcome.js';
import { deliveryHeaders } from './sign.js';

export interface DeliveryDeps extends OutcomeDeps {
  sealer: Sealer;
  /** Deliveries one pass takes at most (default 64). */
  batch?: number;
  /** Attempts in flight at once, over every pass and consumer (default 256). */
  maxInFlight?: number;
  /** Attempts in flight to one consumer at once (default 8). */
  perConsumer?: number;
  /** Attempts in flight for one account at most (default 128: half the slots), fewer when more accounts have work: store/delivery-turns.ts. */
  perAccount?: number;
  /** The consumers' circuit breakers, kept across passes (the loop's); none without. */
  breakers?: Breakers;
  attempt?: AttemptOptions;
  /** Attempts in flight, shared by overlapping passes (the loop's). */
  inFlight?: InFlight;
  /** Aborts attempts in flight: they leave no attempt in the log, and their deliveries are due again. */
  signal?: AbortSignal;
  /** Told when an attempt has finished: the next pass records it and may claim its lane's next delivery. */
  onSettled?: () => void;
  /** Where finished attempts wait to be recorded (the loop's is shared by its passes; otherwise one per pass). */
  recorder?: Recorder;
}

/** Attempts in flight, in total, per consumer and per account. */
export class InFlight {
  private readonly byConsumer = new Map<string, number>();
  private readonly byAccount = new Map<string, number>();
  total = 0;

  add(delivery: Pick<ClaimedDelivery, 'consumer_id' | 'client_id'>): void {
    count(this.byConsumer, delivery.consumer_id, 1);
    count(this.byAccount, delivery.client_id, 1);
    this.total += 1;
  }

  remove(delivery: Pick<ClaimedDelivery, 'consumer_id' | 'client_id'>): void {
    count(this.byConsumer, delivery.consumer_id, -1);
    count(this.byAccount, delivery.client_id, -1);
    this.total -= 1;
  }

  busy(): Record<string, number> {
    return Object.fromEntries(this.byConsumer);
  }

  busyAccounts(): Record<string, number> {
    return Object.fromEntries(this.byAccount);
  }

  ids(): InFlightIds {
    return { consumers: [...this.byConsumer.keys()], accounts: [...this.byAccount.keys()] };
  }
}

function count(counts: Map<string, number>, id: string, by: number): void {
  const n = (counts.get(id) ?? 0) + by;
  if (n > 0) counts.set(id, n);
  else counts.delete(id);
}

export interface DeliveryPassResult {
  claimed: number;
  delivered: number;
  retried: number;
  /** Given up, or refused with 410. */
  failed: number;
  /** Cut off by a stop: due again. */
  stopped: number;
}

export interface StartedPass {
  claimed: number;
  /** More may be due now than this pass took. */
  more: boolean;
  done: Promise<DeliveryPassResult>;
}

const DEFAULT_BATCH = 64;
export const DEFAULT_MAX_IN_FLIGHT = 256;
const DEFAULT_PER_CONSUMER = 8;
const DEFAULT_PER_ACCOUNT = 128;

/** Claims (one transaction), then delivers in the background: resolves once the claim has committed. */
export async function startPass(deps: DeliveryDeps): Promise<StartedPass> {
  const inFlight = deps.inFlight ?? new InFlight();
  const recorder = deps.recorder ?? new Recorder(deps);
  const room = deps.signal?.aborted ? 0 : Math.min(deps.batch ?? DEFAULT_BATCH, (deps.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT) - inFlight.total);
  const empty: DeliveryPassResult = { claimed: 0, delivered: 0, retried: 0, failed: 0, stopped: 0 };
  // Outcomes of attempts that finished since the last pass (the loop's), in the claim's transaction.
  const finished = recorder.take();
  // Taken with them: those attempts have left `inFlight`, and recording them frees their lanes
  // for this claim. One that ends while the claim waits stays counted (its delivery is still
  // leased until the next pass records it), so no consumer gets more than perConsumer.
  const busy = inFlight.busy();
  const accounts = { cap: deps.perAccount ?? DEFAULT_PER_ACCOUNT, slots: deps.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT, busy: inFlight.busyAccounts() };
  if (room <= 0 && finished.length === 0) return { claimed: 0, more: false, done: Promise.resolve(empty) };
  const now = deps.clock.now();
  // Most wakes (every committed event) find nothing to record or claim: a read says so
  // without the write transaction, which would wait for the sync worker's commits.
  if (finished.length === 0 && !(await deps.store.deliveriesDue(isoSeconds(now)))) return { claimed: 0, more: false, done: Promise.resolve(empty) };
  // Long enough for any attempt to finish and be recorded; a killed loop's leases are cleared
  // when the next starts, or run out where loops share the database.
  const leaseMs = (deps.attempt?.timeoutMs ?? ATTEMPT_TIMEOUT_MS) + 60_000;
  let outcome: { settled: Settled[]; claimed: ClaimedDelivery[]; more: boolean };
  try {
    outcome = await deps.store.transaction(async (tx) => {
      const settled = await recorder.record(finished);
      const claim = room <= 0 ? { claimed: [], more: false } : await tx.claimDeliveries({
        now: isoSeconds(now), leaseUntil: isoSeconds(new Date(now.getTime() + leaseMs)), limit: room,
        perConsumer: deps.perConsumer ?? DEFAULT_PER_CONSUMER, busy, accounts, ...deps.breakers?.view(now),
      });
      return { settled, ...claim };
    });
  } catch (err) {
    await recorder.fail(finished, err);
    throw err;
  }
  recorder.settle(finished, outcome.settled);
  const { claimed, more } = outcome;
  for (const delivery of claimed) inFlight.add(delivery);
  const done = Promise.all(claimed.map((delivery) => deliverOne(deps, recorder, inFlight, delivery))).then((settled) => {
    const result = { ...empty, claimed: claimed.length };
    for (const s of settled) result[s] += 1;
    return result;
  });
  return { claimed: claimed.length, more, done };
}

/** One whole pass: claim, attempt, record. */
export async function deliverOnce(deps: DeliveryDeps): Promise<DeliveryPassResult> {
  return (await startPass(deps)).done;
}

async function deliverOne(deps: DeliveryDeps, recorder: Recorder, inFlight: InFlight, delivery: ClaimedDelivery): Promise<Settled> {
  let result: AttemptResult;
  const at = deps.clock.now();
  try {
    const secret = deps.sealer.open<string>(delivery.secret, delivery.consumer_id);
    const headers = deliveryHeaders(secret, delivery.event_id, at, delivery.body);
    result = await attemptDelivery({ url: delivery.url, body: delivery.body, headers, now: at, ...(deps.signal ? { signal: deps.signal } : {}) }, deps.attempt);
    // What the receiver did (answered or not) is its breaker's business; a stop is not.
    if (result.outcome !== 'stopped') deps.breakers?.attempted(delivery.consumer_id, at, result.statusCode !== null, deps.clock.now());
  } catch (err) {
    deps.onError?.(err, 'webhook attempt');
    result = { outcome: 'retry', statusCode: null, error: 'internal error before sending', latencyMs: 0 };
  }
  // The slot is free now: the delivery stays leased until its outcome is recorded, and
  // recording it (in the next pass's transaction, before that pass claims) frees its lane.
  inFlight.remove(delivery);
  const settled = recorder.add(delivery, at, result);
  deps.onSettled?.();
  return settled;
}
