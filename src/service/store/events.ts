// Events and webhook consumers as both stores keep them (SQL in sqlite/events.ts and
// pg/events.ts).
import { createHash } from 'node:crypto';
import { uuidText } from '../../lib/uuid-text.js';
import { openByKey, type PullRow } from './pulls.js';

export interface EventInput {
  id: string;
  clientId: string;
  companyId: string | null;
  /** The company's tags (`key:value`), for consumers that filter by them. */
  companyTags: string[];
  eventType: string;
  generated: string;
  /** The event as delivered: { id, eventType, generatedDate, payload }. */
  body: string;
  /** Only this consumer gets it (a test event); otherwise every consumer that wants it. */
  onlyConsumer?: string;
}

/** What a consumer's choice of events rests on. */
export type EventConsumer = Pick<ConsumerRow, 'id' | 'event_types' | 'company_tags' | 'company_id'>;

/**
 * A delivery's id is its event's and its consumer's (an event has one delivery per
 * consumer; a replay gets an id of its own): sha256 of `eventId/consumerId`, its first 16
 * bytes as a UUID. So the PostgreSQL store makes it in the statement that writes the event
 * (pg/events.ts DELIVERY_ID, the same function in SQL) and both stores give the same ids.
 */
export function deliveryIdOf(eventId: string, consumerId: string): string {
  return uuidText(createHash('sha256').update(`${eventId}/${consumerId}`).digest('hex'));
}

/** The event types read.completed rests on (readCompletion). */
export interface CompletionTypes {
  /** The company's event that reports its read: the previous one's time is in the next. */
  completed: string;
  /** The events of data types that ended: each names its pull (payload.pullOperationId). */
  ended: string[];
}

/** What read.completed reports once none of a company's pulls is open. */
export interface ReadCompletion {
  /** When the previous read.completed was generated; null before the first. */
  previousGenerated: string | null;
  /** The pulls whose data type events came since it, oldest first. */
  pulls: PullRow[];
}

export interface EventRow {
  /** The event's place among all events: the outbox's reference to it. */
  seq: number;
  /** Its number within its account (1, 2, 3 …): the only number a client is shown. */
  account_seq: number;
  id: string;
  client_id: string;
  company_id: string | null;
  event_type: string;
  generated: string;
  body: string;
}

export interface ConsumerRow {
  id: string;
  client_id: string;
  url: string;
  /** JSON array of event type names. */
  event_types: string;
  /** JSON array of `key:value` tags, or null for every company. */
  company_tags: string | null;
  /** The one company whose events it gets, or null for every company. */
  company_id: string | null;
  /** The legacy rule type it was made with through /rules; null for a consumer made through /webhooks. */
  rule_type: string | null;
  disabled: number;
  disabled_reason: string | null;
  secret: Buffer;
  created: string;
}

/**
 * readCompletion's one statement, where `pullId` reads an event body's payload.pullOperationId:
 * a first row that says whether a pull is open and when the previous read.completed was,
 * joined to the pulls when none is open. Parameters: company, completed, company, company, the ended types (as JSON).
 */
export function readCompletionSql(pullId: (body: string) => string, endedTypes: string): string {
  return `WITH previous AS (SELECT seq, generated FROM events WHERE company_id = ? AND event_type = ? ORDER BY seq DESC LIMIT 1),
    head AS (SELECT EXISTS (SELECT 1 FROM pull_operations WHERE company_id = ? AND ${openByKey()}) AS ferry_open,
      (SELECT generated FROM previous) AS ferry_previous)
    SELECT head.*, p.* FROM head LEFT JOIN pull_operations p ON NOT head.ferry_open AND p.id IN (
      SELECT ${pullId('body')} FROM events WHERE company_id = ? AND event_type IN (${endedTypes}) AND seq > coalesce((SELECT seq FROM previous), 0))
    ORDER BY p.seq`;
}

/** readCompletion's answer from the statement's rows. */
export function readCompletionOf(found: Array<PullRow & { ferry_open: unknown; ferry_previous: string | null }>): ReadCompletion | undefined {
  const head = found[0];
  if (!head || Boolean(head.ferry_open)) return undefined;
  const pulls = found.filter((r) => r.id !== null).map(({ ferry_open: _open, ferry_previous: _previous, ...pull }) => pull as PullRow);
  return { previousGenerated: head.ferry_previous, pulls };
}
