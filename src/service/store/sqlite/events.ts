// Events and the webhook outbox. An event is written in the caller's transaction (the one
// that makes the change it reports), and so is one delivery per consumer that wants it:
// nothing is sent from here, and nothing committed is ever lost.
import type { Db } from './db.js';
import { prepared } from './statements.js';
import { wantsEvent } from '../../events/wants.js';
import {
  deliveryIdOf, readCompletionOf, readCompletionSql, type CompletionTypes, type EventConsumer, type EventInput, type EventRow, type ConsumerRow, type ReadCompletion,
} from '../events.js';

/**
 * Records each event and a delivery per enabled consumer that wants it; returns their
 * sequence numbers. Each event's number in its account is taken here: SQLite runs one
 * writing transaction at a time, so the account's numbers commit in order (the PostgreSQL
 * store numbers at commit instead).
 */
export function insertEvents(db: Db, events: EventInput[]): number[] {
  const consumersOf = new Map<string, EventConsumer[]>();
  const consumers = prepared(db, 'SELECT id, event_types, company_tags, company_id FROM webhook_consumers WHERE client_id = ? AND disabled = 0 ORDER BY rowid');
  const counter = prepared(db, `INSERT INTO event_counters (client_id, last_seq) VALUES (?, 1)
    ON CONFLICT (client_id) DO UPDATE SET last_seq = last_seq + 1 RETURNING last_seq`).pluck();
  const insertEvent = prepared(db, `INSERT INTO events (id, client_id, company_id, event_type, generated, body, account_seq) VALUES (?, ?, ?, ?, ?, ?, ?)`);
  const insertDelivery = prepared(db, `INSERT INTO webhook_deliveries (id, consumer_id, event_seq, company_id, status, next_attempt, created)
    VALUES (?, ?, ?, ?, 'Pending', ?, ?)`);
  return events.map((event) => {
    let ofAccount = consumersOf.get(event.clientId);
    if (!ofAccount) consumersOf.set(event.clientId, ofAccount = consumers.all(event.clientId) as EventConsumer[]);
    const accountSeq = counter.get(event.clientId) as number;
    const seq = Number(insertEvent.run(event.id, event.clientId, event.companyId, event.eventType, event.generated, event.body, accountSeq).lastInsertRowid);
    for (const consumer of ofAccount) {
      if (wantsEvent(consumer, event)) insertDelivery.run(deliveryIdOf(event.id, consumer.id), consumer.id, seq, event.companyId, event.generated, event.generated);
    }
    return seq;
  });
}

export function insertEvent(db: Db, event: EventInput): number {
  return insertEvents(db, [event])[0]!;
}

/** The account's events after its number `afterAccountSeq`, oldest first. */
export function eventsAfter(db: Db, clientId: string, afterAccountSeq: number, limit: number): EventRow[] {
  return prepared(db, 'SELECT * FROM events WHERE client_id = ? AND account_seq > ? ORDER BY account_seq LIMIT ?').all(clientId, afterAccountSeq, limit) as EventRow[];
}

/** The newest event's sequence number (0 when there is none): a cheap "anything new?" for tailers. */
export function latestEventSeq(db: Db): number {
  return (prepared(db, 'SELECT coalesce(max(seq), 0) AS seq FROM events').get() as { seq: number }).seq;
}

/** The last number the account gave an event (0 before its first): where its events stand now. */
export function latestAccountEventSeq(db: Db, clientId: string): number {
  return (prepared(db, 'SELECT last_seq FROM event_counters WHERE client_id = ?').pluck().get(clientId) as number | undefined) ?? 0;
}

/** The company's latest event of a type (read.completed marks where the next one starts). */
export function readCompletion(db: Db, companyId: string, types: CompletionTypes): ReadCompletion | undefined {
  const sql = readCompletionSql((body) => `json_extract(${body}, '$.payload.pullOperationId')`, 'SELECT value FROM json_each(?)');
  return readCompletionOf(prepared(db, sql).all(companyId, types.completed, companyId, companyId, JSON.stringify(types.ended)) as Parameters<typeof readCompletionOf>[0]);
}

export function companyEventsAfter(db: Db, companyId: string, eventType: string, afterSeq: number): EventRow[] {
  return prepared(db, 'SELECT * FROM events WHERE company_id = ? AND event_type = ? AND seq > ? ORDER BY seq').all(companyId, eventType, afterSeq) as EventRow[];
}

export function insertConsumer(db: Db, row: ConsumerRow): void {
  prepared(db, `INSERT INTO webhook_consumers (id, client_id, url, event_types, company_tags, company_id, rule_type, disabled, disabled_reason, secret, created)
    VALUES (@id, @client_id, @url, @event_types, @company_tags, @company_id, @rule_type, @disabled, @disabled_reason, @secret, @created)`).run(row);
}

export function getConsumer(db: Db, id: string): ConsumerRow | undefined {
  return prepared(db, 'SELECT * FROM webhook_consumers WHERE id = ?').get(id) as ConsumerRow | undefined;
}

export function listConsumers(db: Db, clientId: string): ConsumerRow[] {
  return prepared(db, 'SELECT * FROM webhook_consumers WHERE client_id = ? ORDER BY created, rowid').all(clientId) as ConsumerRow[];
}

export function deleteConsumer(db: Db, id: string): void {
  prepared(db, 'DELETE FROM webhook_consumers WHERE id = ?').run(id);
}

/** Stops deliveries to a consumer; its pending ones are left as they are, for the log. */
export function disableConsumer(db: Db, id: string, reason: string): void {
  prepared(db, 'UPDATE webhook_consumers SET disabled = 1, disabled_reason = ? WHERE id = ?').run(reason, id);
}
