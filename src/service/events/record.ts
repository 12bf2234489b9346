// Recording an event: call inside the transaction of the change it reports, so the event
// and its webhook deliveries commit with the change or not at all.
import { randomUUID } from 'node:crypto';
import { isoSeconds, type Clock } from '../../lib/clock.js';
import type { CompanyRow, NewCompanyRow } from '../store/companies.js';
import type { ServiceContext } from '../context.js';
import type { AsyncStore } from '../store/async-store.js';
import type { EventInput } from '../store/events.js';

export interface EventContext {
  store: AsyncStore;
  clock: Clock;
  /** Told once the event is written; it reads the newest event only after the caller's transaction commits (bus.ts). */
  changed?: () => void;
}

export interface NewEvent {
  clientId: string;
  company?: Pick<CompanyRow, 'id' | 'tags'> | null;
  eventType: string;
  payload: Record<string, unknown>;
  onlyConsumer?: string;
}

/** `key:value` for each tag: what consumers' companyTags filters name. */
export const tagsOf = (company: Pick<CompanyRow, 'tags'> | null | undefined): string[] =>
  company ? Object.entries(JSON.parse(company.tags) as Record<string, string>).map(([k, v]) => `${k}:${v}`) : [];

/** The event context of a route: the stream and the deliveries wake as soon as the change commits. */
export const eventsOf = (ctx: ServiceContext): EventContext => ({ store: ctx.store, clock: ctx.clock, changed: ctx.events.changed });

/** The event as stored: its id, time and body made now. */
function eventInput(ctx: EventContext, event: NewEvent): EventInput {
  const id = randomUUID();
  const generated = isoSeconds(ctx.clock.now());
  const body = JSON.stringify({ id, eventType: event.eventType, generatedDate: generated, payload: event.payload });
  return {
    id, clientId: event.clientId, companyId: event.company?.id ?? null, companyTags: tagsOf(event.company),
    eventType: event.eventType, generated, body, ...(event.onlyConsumer ? { onlyConsumer: event.onlyConsumer } : {}),
  };
}

export async function recordEvent(ctx: EventContext, event: NewEvent): Promise<{ id: string; seq: number }> {
  const input = eventInput(ctx, event);
  const seq = await ctx.store.insertEvent(input);
  if (ctx.changed) setImmediate(ctx.changed);
  return { id: input.id, seq };
}

/** Events of one transaction in one write, in order, each delivered to the consumers that want it; call inside the change's transaction. */
export async function recordEvents(ctx: EventContext, events: NewEvent[]): Promise<void> {
  if (events.length === 0) return;
  await ctx.store.insertEvents(events.map((event) => eventInput(ctx, event)));
  if (ctx.changed) setImmediate(ctx.changed);
}

/**
 * A new company and its event (company.created) written together, out of a transaction as
 * well as in one: on PostgreSQL one statement, so a company made alone costs no BEGIN and
 * COMMIT. Returns the company as stored.
 */
export async function recordNewCompany(ctx: EventContext, company: NewCompanyRow, event: Omit<NewEvent, 'clientId' | 'company'>): Promise<CompanyRow> {
  const row = await ctx.store.insertCompanyWithEvent(company, eventInput(ctx, { ...event, clientId: company.client_id, company }));
  if (ctx.changed) setImmediate(ctx.changed);
  return row;
}
