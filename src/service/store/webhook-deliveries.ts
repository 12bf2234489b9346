// Webhook deliveries as both stores keep them: the log's rows, what a claim hands out and
// answers, an attempt's outcome, and the log's query fields (SQL in sqlite/webhook-deliveries.ts,
// pg/deliveries.ts and pg/delivery-claims.ts; the claim's plan in delivery-turns.ts).
import type { FieldResolver } from '../query/types.js';

export type DeliveryStatus = 'Pending' | 'Delivered' | 'Failed';

/** A delivery as the log shows it, with its event and its latest attempt. */
export interface DeliveryRow {
  seq: number;
  id: string;
  consumer_id: string;
  status: DeliveryStatus;
  attempts: number;
  /** When the next attempt is planned; null once settled or while it waits for the delivery before it. */
  next_attempt: string | null;
  created: string;
  completed: string | null;
  event_id: string;
  event_type: string;
  last_at: string | null;
  last_status_code: number | null;
  last_error: string | null;
  last_latency_ms: number | null;
}

export interface AttemptRow {
  attempt: number;
  at: string;
  status_code: number | null;
  error: string | null;
  latency_ms: number;
}

/** A delivery taken for an attempt: everything needed to send it. */
export interface ClaimedDelivery {
  seq: number;
  id: string;
  consumer_id: string;
  client_id: string;
  company_id: string | null;
  attempts: number;
  first_failure: string | null;
  event_id: string;
  event_type: string;
  body: string;
  url: string;
  secret: Buffer;
}

/** Consumers and accounts (client ids) with attempts in flight. */
export interface InFlightIds {
  consumers: string[];
  accounts: string[];
}

export interface ClaimResult {
  claimed: ClaimedDelivery[];
  /** More may be due: the scan or the limit was reached. */
  more: boolean;
}

/** How an attempt left the delivery. */
export type AttemptOutcome =
  | { status: 'Delivered'; completed: string }
  | { status: 'Failed'; completed: string }
  | { status: 'Pending'; nextAttempt: string; firstFailure: string };

/**
 * The delivery log's query fields, for either store: `date` turns a date column into what
 * the store's dialect compares (SQLite: the ISO text as it is; PostgreSQL: its instant).
 */
export function deliveryFieldsFor(date: (column: string) => string): FieldResolver {
  return (path) => {
    switch (path) {
      case 'id': return { sql: 'd.id', type: 'string' };
      case 'eventId': return { sql: 'e.id', type: 'string' };
      case 'eventType': return { sql: 'e.event_type', type: 'string' };
      case 'status': return { sql: 'd.status', type: 'string' };
      case 'attempts': return { sql: 'd.attempts', type: 'number' };
      case 'created': return { sql: date('d.created'), type: 'date' };
      case 'completed': return { sql: date('d.completed'), type: 'date' };
      default: return undefined;
    }
  };
}
