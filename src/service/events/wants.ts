// Which consumers an event is delivered to: the same rule wherever an event is recorded,
// by a store one at a time (insertEvent) or by the caller for a group (record.ts recordEvents).
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
