// Events and webhook consumers as both stores keep them (SQL in sqlite/events.ts and
// pg/events.ts).

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

/** An event and its deliveries, the consumers chosen and the delivery ids made by the caller (insertEvents). */
export interface EventWithDeliveries {
  event: EventInput;
  deliveries: Array<{ id: string; consumerId: string }>;
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
