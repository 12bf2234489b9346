// Which consumers an event is delivered to: the SQLite store's rule (sqlite/events.ts); the
// PostgreSQL store has it in SQL (pg/events.ts WANTS), and the events contract holds the two
// to the same answers.
import type { EventConsumer, EventInput } from '../store/events.js';

/** Whether the consumer gets the event: a test event only its one consumer; else its type, its company, and one of its company tags (none: every company). */
export function wantsEvent(consumer: EventConsumer, event: EventInput): boolean {
  if (event.onlyConsumer) return consumer.id === event.onlyConsumer;
  if (!(JSON.parse(consumer.event_types) as string[]).includes(event.eventType)) return false;
  if (consumer.company_id !== null && consumer.company_id !== event.companyId) return false;
  if (consumer.company_tags === null) return true;
  const tags = JSON.parse(consumer.company_tags) as string[];
  return tags.length === 0 || tags.some((t) => event.companyTags.includes(t));
}
