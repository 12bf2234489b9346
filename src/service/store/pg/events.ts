// Events and webhook consumers on PostgreSQL, as ../sqlite/events.ts keeps them in SQLite. An
// event and its deliveries (one per consumer that wants it) are one INSERT statement, so
// they are written together or not at all, in or out of a transaction. Its number in the
// account is given when the transaction commits, by a trigger (migrations/011).
import type { AsyncStore } from '../async-store.js';
import { wantsEvent } from '../../events/wants.js';
import { readCompletionOf, readCompletionSql, type ConsumerRow, type EventConsumer, type EventRow } from '../events.js';
import type { EventStore } from '../store.js';
import { row, rows, run, type Queryable } from './query.js';

type EventMethods = Pick<AsyncStore, keyof EventStore>;

/** The row as SQLite's `SELECT *` gives it: without seq, SQLite's rowid, named here. */
const CONSUMER_COLUMNS = 'id, client_id, url, event_types, company_tags, company_id, rule_type, disabled, disabled_reason, secret, created';

const READ_COMPLETION = readCompletionSql((body) => `${body}::json->'payload'->>'pullOperationId'`, 'SELECT unnest(?::text[])');

// The deliveries are written in the order of the ids given (seq follows it).
const INSERT_EVENT = `WITH e AS (
    INSERT INTO events (id, client_id, company_id, event_type, generated, body) VALUES (?, ?, ?, ?, ?, ?) RETURNING seq
  ), d AS (
    INSERT INTO webhook_deliveries (id, consumer_id, event_seq, company_id, status, next_attempt, created)
    SELECT x.id, x.consumer_id, e.seq, ?::text, 'Pending', ?::text, ?::text
    FROM e, unnest(?::text[], ?::text[]) WITH ORDINALITY AS x (id, consumer_id, n) ORDER BY x.n
  )
  SELECT seq FROM e`;

// Many events and their deliveries in one statement: events numbered in the order given, each delivery joined to its event by id.
const INSERT_EVENTS = `WITH e AS (
    INSERT INTO events (id, client_id, company_id, event_type, generated, body)
    SELECT x.id, x.client_id, x.company_id, x.event_type, x.generated, x.body
    FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[]) WITH ORDINALITY AS x (id, client_id, company_id, event_type, generated, body, n) ORDER BY x.n
    RETURNING id, seq, company_id, generated
  ), d AS (
    INSERT INTO webhook_deliveries (id, consumer_id, event_seq, company_id, status, next_attempt, created)
    SELECT y.id, y.consumer_id, e.seq, e.company_id, 'Pending', e.generated, e.generated
    FROM unnest(?::text[], ?::text[], ?::text[]) WITH ORDINALITY AS y (id, consumer_id, event_id, n) JOIN e ON e.id = y.event_id ORDER BY y.n
  )
  SELECT id, seq FROM e`;

const CONSUMERS = 'SELECT id, event_types, company_tags, company_id FROM webhook_consumers WHERE client_id = ? AND disabled = 0 ORDER BY seq FOR KEY SHARE';

export function eventMethods(db: Queryable): EventMethods {
  return {
    /**
     * Call inside the change's transaction: the consumers read are held (FOR KEY SHARE)
     * until it ends, so none is deleted under the deliveries that name it.
     */
    insertEvent: async (event, deliveryId) => {
      const chosen = (await rows<EventConsumer>(db, CONSUMERS, [event.clientId])).filter((consumer) => wantsEvent(consumer, event));
      const ids = chosen.map(() => deliveryId());
      const inserted = await row<{ seq: number }>(db, INSERT_EVENT, [event.id, event.clientId, event.companyId, event.eventType, event.generated, event.body,
        event.companyId, event.generated, event.generated, ids, chosen.map((consumer) => consumer.id)]);
      return inserted!.seq;
    },
    eventConsumers: (clientId) => rows<EventConsumer>(db, CONSUMERS, [clientId]),
    insertEvents: async (events) => {
      if (events.length === 0) return [];
      const deliveries = events.flatMap(({ event, deliveries: its }) => its.map((delivery) => ({ ...delivery, eventId: event.id })));
      const inserted = await rows<{ id: string; seq: number }>(db, INSERT_EVENTS, [
        ...(['id', 'clientId', 'companyId', 'eventType', 'generated', 'body'] as const).map((key) => events.map(({ event }) => event[key])),
        deliveries.map((d) => d.id), deliveries.map((d) => d.consumerId), deliveries.map((d) => d.eventId)]);
      const seqs = new Map(inserted.map((r) => [r.id, Number(r.seq)]));
      return events.map(({ event }) => seqs.get(event.id)!);
    },
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
