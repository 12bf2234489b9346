// The webhook outbox's other half: claiming due deliveries, recording attempts, and the
// delivery log. insertEvent (events.ts) writes the deliveries; nothing here sends anything.
//
// Order per lane: a consumer's deliveries of one company (company_id NULL is a lane of its
// own) go one at a time, oldest first: only a lane's oldest Pending delivery (its head) is
// claimed. Scans of the due index must not visit the same waiting rows pass after pass (a
// consumer's backlog would make every pass slower), so a row found waiting is parked, its
// next_attempt set to a marker that sorts after every time (delivery-turns.ts):
// - behind its lane's head: WAITING, until the head is settled (then the new head is due);
// - its consumer already has all the attempts in flight it may: BUSY:<consumer id>, and its
//   account all of its share: FULL:<client id>, until one of those attempts settles (then
//   up to two such rows are due again: one to take the slot, one in case the limit grew);
// - its consumer's circuit breaker is open: the time it lets a trial through.
// Each row is parked and unparked at most once per wait: a pass costs what it claims.
import type { Db } from './db.js';
import { BUSY_FROM, busyMark, FULL_FROM, fullMark, markEnd, planClaim, UNPARKED_PER_SETTLE, WAITING, type ClaimRequest, type DueDelivery } from '../delivery-turns.js';
import { planPage, type PagePlan, type PageRequest } from '../paging.js';
import { prepared } from './statements.js';
import { type DeliveryStatus, type DeliveryRow, type AttemptRow, type ClaimedDelivery, type InFlightIds, type ClaimResult, type AttemptOutcome, deliveryFieldsFor } from '../webhook-deliveries.js';

// next_attempt only while one is planned: not once settled, nor while waiting in the lane.
const LOG_COLUMNS = `d.seq, d.id, d.consumer_id, d.status, d.attempts,
  CASE WHEN d.status = 'Pending' AND d.next_attempt < '${WAITING}' THEN d.next_attempt END AS next_attempt, d.created, d.completed,
  e.id AS event_id, e.event_type, a.at AS last_at, a.status_code AS last_status_code, a.error AS last_error, a.latency_ms AS last_latency_ms`;
const LOG_FROM = `webhook_deliveries d JOIN events e ON e.seq = d.event_seq
  LEFT JOIN webhook_attempts a ON a.delivery_seq = d.seq AND a.attempt = d.attempts`;

const deliveryFields = deliveryFieldsFor((column) => column);

/** A consumer's deliveries, newest first; `query` filters on id, eventId, eventType, status, attempts, created, completed. */
export function webhookDeliveriesPage(consumerId: string, request: PageRequest): PagePlan {
  return planPage({
    columns: LOG_COLUMNS, from: LOG_FROM, scope: 'd.consumer_id = ?', scopeParams: [consumerId], resolve: deliveryFields, defaultOrder: 'd.seq DESC',
  }, request);
}

export function getDelivery(db: Db, consumerId: string, id: string): DeliveryRow | undefined {
  return prepared(db, `SELECT ${LOG_COLUMNS} FROM ${LOG_FROM} WHERE d.id = ? AND d.consumer_id = ?`).get(id, consumerId) as DeliveryRow | undefined;
}

export function deliveryAttempts(db: Db, seq: number): AttemptRow[] {
  return prepared(db, 'SELECT attempt, at, status_code, error, latency_ms FROM webhook_attempts WHERE delivery_seq = ? ORDER BY attempt').all(seq) as AttemptRow[];
}

/** Whether a delivery is due and free: what claimDeliveries looks for first. */
export function deliveriesDue(db: Db, now: string): boolean {
  return prepared(db, `SELECT EXISTS (SELECT 1 FROM webhook_deliveries
    WHERE status = 'Pending' AND next_attempt <= ? AND (lease_until IS NULL OR lease_until <= ?))`).pluck().get(now, now) === 1;
}

/**
 * Takes up to `limit` lane heads that are due, accounts and consumers in turn
 * (delivery-turns.ts), leasing them until `leaseUntil`; parks the deliveries found queued
 * behind their heads, those of disabled consumers, and those that must wait for a slot or
 * a breaker. Call inside a transaction.
 */
export function claimDeliveries(db: Db, request: ClaimRequest): ClaimResult {
  const scanLimit = request.scanLimit ?? 500;
  const due = prepared(db, `SELECT d.seq, d.consumer_id, c.client_id, c.disabled,
      EXISTS (SELECT 1 FROM webhook_deliveries o WHERE o.consumer_id = d.consumer_id AND o.company_id IS d.company_id
              AND o.status = 'Pending' AND o.seq < d.seq) AS blocked
    FROM webhook_deliveries d JOIN webhook_consumers c ON c.id = d.consumer_id
    WHERE d.status = 'Pending' AND d.next_attempt <= ? AND (d.lease_until IS NULL OR d.lease_until <= ?)
    ORDER BY d.next_attempt, d.seq LIMIT ?`).all(request.now, request.now, scanLimit) as DueDelivery[];
  const plan = planClaim(due, request);
  const park = prepared(db, 'UPDATE webhook_deliveries SET next_attempt = ? WHERE seq = ?');
  for (const { seq, at } of plan.park) park.run(at, seq);
  const lease = prepared(db, 'UPDATE webhook_deliveries SET lease_until = ? WHERE seq = ?');
  const details = prepared(db, `SELECT d.seq, d.id, d.consumer_id, c.client_id, d.company_id, d.attempts, d.first_failure,
      e.id AS event_id, e.event_type, e.body, c.url, c.secret
    FROM webhook_deliveries d JOIN events e ON e.seq = d.event_seq JOIN webhook_consumers c ON c.id = d.consumer_id WHERE d.seq = ?`);
  const claimed = plan.lease.map((seq) => {
    lease.run(request.leaseUntil, seq);
    return details.get(seq) as ClaimedDelivery;
  });
  return { claimed, more: due.length === scanLimit || claimed.length >= request.limit };
}

/** A slot of the consumer and of its account is free: heads parked for want of one are due again, oldest first. */
function unparkSlots(db: Db, consumerId: string, clientId: string): void {
  const unpark = prepared(db, `UPDATE webhook_deliveries SET next_attempt = created
    WHERE seq IN (SELECT seq FROM webhook_deliveries WHERE status = 'Pending' AND next_attempt = ? ORDER BY seq LIMIT ${UNPARKED_PER_SETTLE})`);
  unpark.run(busyMark(consumerId));
  unpark.run(fullMark(clientId));
}

/** Makes a lane's new head due, if it was parked behind the one just settled. */
function unparkLane(db: Db, consumerId: string, companyId: string | null): void {
  prepared(db, `UPDATE webhook_deliveries SET next_attempt = created
    WHERE seq = (SELECT min(seq) FROM webhook_deliveries WHERE consumer_id = ? AND company_id IS ? AND status = 'Pending')
      AND next_attempt = ? AND EXISTS (SELECT 1 FROM webhook_consumers WHERE id = ? AND disabled = 0)`).run(consumerId, companyId, WAITING, consumerId);
}

/**
 * Records one attempt and what it made of the delivery, and frees its lease. False when
 * the delivery is gone (its consumer was deleted meanwhile). Call inside a transaction.
 */
export function recordDeliveryAttempt(db: Db, seq: number, attempt: Omit<AttemptRow, 'attempt'>, outcome: AttemptOutcome): boolean {
  const row = prepared(db, `SELECT d.consumer_id, c.client_id, d.company_id, d.attempts, d.status
    FROM webhook_deliveries d JOIN webhook_consumers c ON c.id = d.consumer_id WHERE d.seq = ?`).get(seq) as
    { consumer_id: string; client_id: string; company_id: string | null; attempts: number; status: DeliveryStatus } | undefined;
  if (!row) return false;
  const number = row.attempts + 1;
  prepared(db, 'INSERT INTO webhook_attempts (delivery_seq, attempt, at, status_code, error, latency_ms) VALUES (?, ?, ?, ?, ?, ?)')
    .run(seq, number, attempt.at, attempt.status_code, attempt.error, attempt.latency_ms);
  if (outcome.status === 'Pending') {
    prepared(db, `UPDATE webhook_deliveries SET attempts = ?, lease_until = NULL, next_attempt = ?, first_failure = coalesce(first_failure, ?)
      WHERE seq = ?`).run(number, outcome.nextAttempt, outcome.firstFailure, seq);
  } else {
    prepared(db, 'UPDATE webhook_deliveries SET attempts = ?, lease_until = NULL, status = ?, completed = ? WHERE seq = ?')
      .run(number, outcome.status, outcome.completed, seq);
    unparkLane(db, row.consumer_id, row.company_id);
  }
  unparkSlots(db, row.consumer_id, row.client_id);
  return true;
}

/** Frees a lease without an attempt (the attempt was cut off by a stop): the delivery is due again. */
export function releaseDeliveryLease(db: Db, seq: number): void {
  const row = prepared(db, `UPDATE webhook_deliveries SET lease_until = NULL WHERE seq = ?
    RETURNING consumer_id, (SELECT client_id FROM webhook_consumers c WHERE c.id = webhook_deliveries.consumer_id) AS client_id`).get(seq) as { consumer_id: string; client_id: string } | undefined;
  if (row) unparkSlots(db, row.consumer_id, row.client_id);
}

/** Every lease and every head parked for want of a slot: when the only delivery loop of this data dir starts (a killed one left them) or stops. */
export function releaseDeliveryLeases(db: Db): void {
  prepared(db, "UPDATE webhook_deliveries SET lease_until = NULL WHERE status = 'Pending' AND lease_until IS NOT NULL").run();
  unparkIdle(db, { consumers: [], accounts: [] });
}

/**
 * Heads parked for want of a slot, of consumers and accounts with nothing in flight (whose
 * settling would have freed them): a safety net the loop runs when idle.
 */
export function unparkIdle(db: Db, inFlight: InFlightIds): void {
  const unpark = prepared(db, `UPDATE webhook_deliveries SET next_attempt = created WHERE status = 'Pending' AND next_attempt > ? AND next_attempt < ?
    AND substr(next_attempt, ${BUSY_FROM.length + 1}) NOT IN (SELECT value FROM json_each(?))`);
  unpark.run(BUSY_FROM, markEnd(BUSY_FROM), JSON.stringify(inFlight.consumers));
  unpark.run(FULL_FROM, markEnd(FULL_FROM), JSON.stringify(inFlight.accounts));
}

/** Disables a consumer and parks its pending deliveries: nothing more is sent to it. Call inside a transaction. */
export function disableConsumerDeliveries(db: Db, consumerId: string, reason: string): boolean {
  const changed = prepared(db, 'UPDATE webhook_consumers SET disabled = 1, disabled_reason = ? WHERE id = ? AND disabled = 0').run(reason, consumerId).changes > 0;
  prepared(db, "UPDATE webhook_deliveries SET next_attempt = ? WHERE consumer_id = ? AND status = 'Pending'").run(WAITING, consumerId);
  return changed;
}

/** The earliest retry after `now` (not counting parked deliveries), for the loop's timer. */
export function nextDeliveryDue(db: Db, now: string): string | undefined {
  const row = prepared(db, "SELECT min(next_attempt) AS next FROM webhook_deliveries WHERE status = 'Pending' AND next_attempt > ? AND next_attempt < ?")
    .get(now, WAITING) as { next: string | null };
  return row.next ?? undefined;
}

/** Queues a delivery's event again for the same consumer: a new Pending delivery at the back of its lane. */
export function replayDelivery(db: Db, consumerId: string, deliveryId: string, newId: string, now: string): DeliveryRow | undefined {
  const original = prepared(db, 'SELECT event_seq, company_id FROM webhook_deliveries WHERE id = ? AND consumer_id = ?').get(deliveryId, consumerId) as
    { event_seq: number; company_id: string | null } | undefined;
  if (!original) return undefined;
  prepared(db, `INSERT INTO webhook_deliveries (id, consumer_id, event_seq, company_id, status, next_attempt, created)
    VALUES (?, ?, ?, ?, 'Pending', ?, ?)`).run(newId, consumerId, original.event_seq, original.company_id, now, now);
  return getDelivery(db, consumerId, newId);
}

/** The newest delivery of an event to a consumer (the one a test event made). */
export function deliveryOfEvent(db: Db, consumerId: string, eventSeq: number): DeliveryRow | undefined {
  return prepared(db, `SELECT ${LOG_COLUMNS} FROM ${LOG_FROM} WHERE d.consumer_id = ? AND d.event_seq = ? ORDER BY d.seq DESC LIMIT 1`)
    .get(consumerId, eventSeq) as DeliveryRow | undefined;
}
