// Events and webhook consumers on PostgreSQL, as ../sqlite/events.ts keeps them in SQLite. An
// event, the read of its account's consumers and its deliveries (one per consumer that
// wants it) are one statement, so they are written together or not at all, in or out of a
// transaction, in one round trip. Its number in the account is given when the transaction
// commits, by a trigger (migrations/011).
import type { AsyncStore } from '../async-store.js';
import { readCompletionOf, readCompletionSql, type ConsumerRow, type EventInput, type EventRow } from '../events.js';
import type { EventStore } from '../store.js';
import { row, rows, run, type Queryable } from './query.js';

type EventMethods = Pick<AsyncStore, keyof EventStore>;

/** The row as SQLite's `SELECT *` gives it: without seq, SQLite's rowid, named here. */
const CONSUMER_COLUMNS = 'id, client_id, url, event_types, company_tags, company_id, rule_type, disabled, disabled_reason, secret, created';

const READ_COMPLETION = readCompletionSql((body) => `${body}::json->'payload'->>'pullOperationId'`, 'SELECT unnest(?::text[])');

/** deliveryIdOf (../events.ts) in SQL: sha256 of `eventId/consumerId`, its first 16 bytes as a UUID. */
const DELIVERY_ID = (eventId: string, consumerId: string) => `substr(encode(sha256(convert_to(${eventId} || '/' || ${consumerId}, 'UTF8')), 'hex'), 1, 32)::uuid::text`;

/** Whether consumer c wants event x: events/wants.ts in SQL (the events contract holds the two to the same answers). */
const WANTS = `CASE WHEN x.only_consumer IS NOT NULL THEN c.id = x.only_consumer ELSE
    c.event_types::jsonb @> to_jsonb(x.event_type)
    AND (c.company_id IS NULL OR c.company_id = x.company_id)
    AND (c.company_tags IS NULL OR json_array_length(c.company_tags) = 0
      OR EXISTS (SELECT 1 FROM json_array_elements_text(c.company_tags) t (tag) WHERE t.tag IN (SELECT json_array_elements_text(x.tags::json))))
  END`;

// Events and their deliveries in one statement, with the read of the consumers they go to:
// events numbered in the order given, each event's deliveries in its consumers' order. The
// consumers are held (FOR KEY SHARE) until the transaction ends, so none is deleted under
// the deliveries that name it.
/** The events' part of a statement, after its WITH: x (the events given), e (inserted: id, seq), c (consumers), d (deliveries). */
export const EVENT_CTES = `x AS (
    SELECT * FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[]) WITH ORDINALITY
      AS x (id, client_id, company_id, event_type, generated, body, tags, only_consumer, n)
  ), e AS (
    INSERT INTO events (id, client_id, company_id, event_type, generated, body)
    SELECT id, client_id, company_id, event_type, generated, body FROM x ORDER BY n
    RETURNING id, seq
  ), c AS (
    SELECT id, client_id, event_types, company_tags, company_id, seq FROM webhook_consumers
    WHERE client_id IN (SELECT client_id FROM x) AND disabled = 0 FOR KEY SHARE
  ), d AS (
    INSERT INTO webhook_deliveries (id, consumer_id, event_seq, company_id, status, next_attempt, created)
    SELECT ${DELIVERY_ID('x.id', 'c.id')}, c.id, e.seq, x.company_id, 'Pending', x.generated, x.generated
    FROM x JOIN e ON e.id = x.id JOIN c ON c.client_id = x.client_id
    WHERE ${WANTS}
    ORDER BY x.n, c.seq
  )`;

const INSERT_EVENTS = `WITH ${EVENT_CTES} SELECT id, seq FROM e`;

/** EVENT_CTES' parameters: eight arrays, an element per event. */
export function eventParams(events: EventInput[]): unknown[] {
  return [
    ...(['id', 'clientId', 'companyId', 'eventType', 'generated', 'body'] as const).map((key) => events.map((event) => event[key])),
    events.map((event) => JSON.stringify(event.companyTags)), events.map((event) => event.onlyConsumer ?? null)];
}

async function insertEvents(db: Queryable, events: EventInput[]): Promise<number[]> {
  if (events.length === 0) return [];
  const inserted = await rows<{ id: string; seq: number }>(db, INSERT_EVENTS, eventParams(events));
  const seqs = new Map(inserted.map((r) => [r.id, Number(r.seq)]));
  return events.map((event) => seqs.get(event.id)!);
}

export function eventMethods(db: Queryable): EventMethods {
  return {
    insertEvent: async (event) => (await insertEvents(db, [event]))[0]!,
    insertEvents: (events) => insertEvents(db, events),
    // Numbered at commit (migrations/011): an event still unnumbered is one this reader cannot see yet.
    eventsAfter: (clientId, afterAccountSeq, limit) => rows<EventRow>(db,
      'SELECT * FROM events WHERE client_id = ? AND account_seq > ? ORDER BY account_seq LIMIT ?', [clientId, afterAccountSeq, limit]),
    latestEventSeq: async () => (await row<{ seq: number }>(db, 'SELECT coalesce(max(seq), 0) AS seq FROM events'))!.seq,
    latestAccountEventSeq: async (clientId) => (await row<{ last_seq: number }>(db, 'SELECT last_seq FROM event_counters WHERE client_id = ?', [clientId]))?.last_seq ?? 0,
    readCompletion: async (companyId, types) => readCompletionOf(await rows(db, READ_COMPLETION, [companyId, types.completed, companyId, companyId, types.ended])),
    companyEventsAfter: (companyId, eventType, afterSeq) => rows<EventRow>(db, 'SELECT * FROM events WHERE company_id = ? AND event_type = ? AND seq > ? ORDER BY seq',
      [companyId, eventType, afterSeq]),
    insertConsumer: async (consumer) => {
      await run(db, `INSERT INTO webhook_consumers (id, client_id, url, event_types, company_tags, company_id, rule_type, disabled, disabled_reason, secret, created)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, [consumer.id, consumer.client_id, consumer.url, consumer.event_types, consumer.company_tags, consumer.company_id,
        consumer.rule_type, consumer.disabled, consumer.disabled_reason, consumer.secret, consumer.created]);
    },
    getConsumer: (id) => row<ConsumerRow>(db, `SELECT ${CONSUMER_COLUMNS} FROM webhook_consumers WHERE id = ?`, [id]),
    listConsumers: (clientId) => rows<ConsumerRow>(db, `SELECT ${CONSUMER_COLUMNS} FROM webhook_consumers WHERE client_id = ? ORDER BY created, seq`, [clientId]),
    deleteConsumer: async (id) => {
      await run(db, 'DELETE FROM webhook_consumers WHERE id = ?', [id]);
    },
    // Its pending deliveries are left as they are, for the log.
    disableConsumer: async (id, reason) => {
      await run(db, 'UPDATE webhook_consumers SET disabled = 1, disabled_reason = ? WHERE id = ?', [reason, id]);
    },
  };
}
