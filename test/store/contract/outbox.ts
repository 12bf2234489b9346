// What the events and deliveries contract scenarios share: the two groups' methods with the
// few others they need (an account to own consumers, runPage for the delivery log), and
// the rows they write. A client's id is random in both stores, so answers name it as
// CLIENT (normalised).
import { randomUUID } from 'node:crypto';
import type { AsyncStore } from '../../../src/service/store/async-store.js';
import type { ClientRow } from '../../../src/service/store/clients.js';
import { deliveryIdOf, type ConsumerRow, type EventInput } from '../../../src/service/store/events.js';
import { deliveryMethods } from '../../../src/service/store/pg/deliveries.js';
import { eventMethods } from '../../../src/service/store/pg/events.js';
import { runPgPagePlan } from '../../../src/service/store/pg/paging.js';
import { row, type Queryable } from '../../../src/service/store/pg/query.js';
import type { EventStore, WebhookDeliveryStore } from '../../../src/service/store/store.js';

export type OutboxKey = keyof EventStore | keyof WebhookDeliveryStore | 'insertClient' | 'runPage';
export type OutboxStore = Pick<AsyncStore, OutboxKey>;

/** The events and deliveries methods, with an account's insert (as clients.ts makes it) and pages run on PostgreSQL. */
export function outboxMethods(db: Queryable): OutboxStore {
  return {
    ...eventMethods(db),
    ...deliveryMethods(db),
    insertClient: async (client) => (await row<ClientRow>(db, 'INSERT INTO clients (id, name, plan, created, is_admin) VALUES (?, ?, ?, ?, ?) RETURNING *',
      [randomUUID(), client.name, client.plan, client.created, client.isAdmin ? 1 : 0]))!,
    runPage: (plan) => runPgPagePlan(db, plan),
  };
}

export async function newClient(store: OutboxStore, name = 'Acme'): Promise<string> {
  return (await store.insertClient({ name, plan: 'Paid', created: '2026-01-01T00:00:00Z' })).id;
}

export function consumer(id: string, clientId: string, fields: Partial<ConsumerRow> = {}): ConsumerRow {
  return {
    id, client_id: clientId, url: `https://hooks.example.com/${id}`, event_types: '["company.created"]', company_tags: null,
    company_id: null, rule_type: null, disabled: 0, disabled_reason: null, secret: Buffer.from(`sealed ${id}`), created: '2026-01-01T00:00:00Z', ...fields,
  };
}

/** An event of `companyId` (null: of the account) of type company.created unless told. */
export function event(id: string, clientId: string, companyId: string | null, fields: Partial<EventInput> = {}): EventInput {
  const eventType = fields.eventType ?? 'company.created';
  const generated = fields.generated ?? '2026-02-01T00:00:00Z';
  return {
    id, clientId, companyId, companyTags: [], eventType, generated,
    // Spacing and key order as given: the body is kept exactly.
    body: `{"id":"${id}", "eventType" : "${eventType}","generatedDate":"${generated}","payload":{"b":1,"a":"\\u00e9 é"}}`,
    ...fields,
  };
}

/**
 * Names for the deliveries of events, each to the consumers given (in the consumers'
 * order): d1, d2, … in the order they are written (prefix `d`), each the id the stores
 * make (deliveryIdOf). For named(), and for the calls that take a delivery's id.
 */
export function deliveryNames(events: Array<[eventId: string, consumerIds: string[]]>, prefix = 'd'): Record<string, string> {
  const names: Record<string, string> = {};
  let n = 0;
  for (const [eventId, consumerIds] of events) for (const consumerId of consumerIds) names[`${prefix}${++n}`] = deliveryIdOf(eventId, consumerId);
  return names;
}

/** `value` with every string equal to one of `ids` replaced by its name. */
export function named<T>(value: T, ids: Record<string, string>): T {
  const names = new Map(Object.entries(ids).map(([name, id]) => [id, name]));
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return names.get(v) ?? v;
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object' && !Buffer.isBuffer(v) && !(v instanceof Map)) {
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    }
    return v;
  };
  return walk(value) as T;
}

/** Whether the call was refused (a constraint), and nothing else about it. */
export async function refused(call: () => Promise<unknown>): Promise<boolean> {
  try {
    await call();
    return false;
  } catch {
    return true;
  }
}
