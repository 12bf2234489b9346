// The webhook outbox on PostgreSQL, as ../sqlite/webhook-deliveries.ts keeps it in SQLite: the
// delivery log, replays and the loop's reads here; claims, attempts and parking, the
// writes that move lanes along, in delivery-claims.ts.
import { postgresDate } from '../../query/json-fields.js';
import type { AsyncStore } from '../async-store.js';
import { planPage } from '../paging.js';
import type { WebhookDeliveryStore } from '../store.js';
import { WAITING } from '../delivery-turns.js';
import { deliveryFieldsFor, type AttemptRow, type DeliveryRow } from '../webhook-deliveries.js';
import { claimMethods } from './delivery-claims.js';
import { row, rows, type Queryable } from './query.js';

type DeliveryMethods = Pick<AsyncStore, keyof WebhookDeliveryStore>;

// next_attempt only while one is planned: not once settled, nor while parked.
const logColumns = (d: string) => `${d}.seq, ${d}.id, ${d}.consumer_id, ${d}.status, ${d}.attempts,
  CASE WHEN ${d}.status = 'Pending' AND ${d}.next_attempt < '${WAITING}' THEN ${d}.next_attempt END AS next_attempt, ${d}.created, ${d}.completed,
  e.id AS event_id, e.event_type, a.at AS last_at, a.status_code AS last_status_code, a.error AS last_error, a.latency_ms AS last_latency_ms`;
/** The log's joins, onto deliveries `d` (a table or a CTE's rows). */
const logJoins = (d: string) => `JOIN events e ON e.seq = ${d}.event_seq
  LEFT JOIN webhook_attempts a ON a.delivery_seq = ${d}.seq AND a.attempt = ${d}.attempts`;
const LOG_COLUMNS = logColumns('d');
const LOG_FROM = `webhook_deliveries d ${logJoins('d')}`;

const deliveryFields = deliveryFieldsFor(postgresDate);

// One statement: the replay is written whole or not at all, and read back as the log shows it.
const REPLAY = `WITH o AS (
    SELECT event_seq, company_id FROM webhook_deliveries WHERE id = ? AND consumer_id = ?
  ), r AS (
    INSERT INTO webhook_deliveries (id, consumer_id, event_seq, company_id, status, next_attempt, created)
    SELECT ?::text, ?::text, o.event_seq, o.company_id, 'Pending', ?::text, ?::text FROM o
    RETURNING seq, id, consumer_id, status, attempts, next_attempt, created, completed, event_seq
  )
  SELECT ${logColumns('r')} FROM r ${logJoins('r')}`;

export function deliveryMethods(db: Queryable): DeliveryMethods {
  return {
    ...claimMethods(db),
    /** A consumer's deliveries, newest first; `query` filters on id, eventId, eventType, status, attempts, created, completed. */
    webhookDeliveriesPage: (consumerId, request) => planPage({
      columns: LOG_COLUMNS, from: LOG_FROM, scope: 'd.consumer_id = ?', scopeParams: [consumerId], resolve: deliveryFields, defaultOrder: 'd.seq DESC',
      dialect: 'postgres',
    }, request),
    getDelivery: (consumerId, id) => row<DeliveryRow>(db, `SELECT ${LOG_COLUMNS} FROM ${LOG_FROM} WHERE d.id = ? AND d.consumer_id = ?`, [id, consumerId]),
    deliveryAttempts: (seq) => rows<AttemptRow>(db, 'SELECT attempt, at, status_code, error, latency_ms FROM webhook_attempts WHERE delivery_seq = ? ORDER BY attempt', [seq]),
    /** Whether a delivery is due and free: what claimDeliveries looks for first (a read: no lock). */
    deliveriesDue: async (now) => (await row<{ due: boolean }>(db, `SELECT EXISTS (SELECT 1 FROM webhook_deliveries
      WHERE status = 'Pending' AND next_attempt <= ? AND (lease_until IS NULL OR lease_until <= ?)) AS due`, [now, now]))!.due,
    /** The earliest retry after `now` (not counting parked deliveries), for the loop's timer. */
    nextDeliveryDue: async (now) => (await row<{ next: string | null }>(db,
      "SELECT min(next_attempt) AS next FROM webhook_deliveries WHERE status = 'Pending' AND next_attempt > ? AND next_attempt < ?", [now, WAITING]))!.next ?? undefined,
    /** Queues a delivery's event again for the same consumer: a new Pending delivery at the back of its lane. */
    replayDelivery: (consumerId, deliveryId, newId, now) => row<DeliveryRow>(db, REPLAY, [deliveryId, consumerId, newId, consumerId, now, now]),
    /** The newest delivery of an event to a consumer (the one a test event made). */
    deliveryOfEvent: (consumerId, eventSeq) => row<DeliveryRow>(db,
      `SELECT ${LOG_COLUMNS} FROM ${LOG_FROM} WHERE d.consumer_id = ? AND d.event_seq = ? ORDER BY d.seq DESC LIMIT 1`, [consumerId, eventSeq]),
  };
}
