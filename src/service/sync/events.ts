// Events of background work (the sync and push workers), recorded in the transaction of
// the change they report: a pull that ended, a company whose queued syncs all ended, a
// connection deauthorized by a failed refresh, a push that settled.
import { isErrored } from '../store/pull-status.js';
import { connectionPayload, dataTypeReadPayload, readCompletedPayload, writePayload } from '../events/payloads.js';
import { recordEvent, recordEvents, type EventContext, type NewEvent } from '../events/record.js';
import { FERRY_EVENTS } from '../events/catalogue.js';
import type { CompanyRow } from '../store/companies.js';
import type { ConnectionError } from '../store/connections.js';
import type { PullRow } from '../store/pulls.js';
import type { PushRow } from '../store/pushes.js';
import type { SyncDeps } from './deps.js';

export interface BackgroundEvents extends EventContext {
  /** The base of links in payloads (the service's public URL, when known). */
  publicUrl?: string;
}

/** The event context of a worker's pass. */
export const backgroundEvents = (deps: SyncDeps): BackgroundEvents => ({
  store: deps.store, clock: deps.clock, ...(deps.publicUrl ? { publicUrl: deps.publicUrl } : {}), ...(deps.changed ? { changed: deps.changed } : {}),
});

/** A pull as its ending transaction wrote it, and what that transaction has read already. */
export interface EndedPull {
  /** The pull's final row, as its final write answered it. */
  pull: PullRow;
  /** Its company, read earlier in this transaction (which locks it on PostgreSQL). */
  company: CompanyRow;
  /** Complete: the records of its generation, the visible one now; otherwise null. */
  records: number | null;
}

/** The events read.completed rests on: its own, and those of data types that ended. */
const COMPLETION = { completed: 'read.completed', ended: [FERRY_EVENTS.dataTypeReadCompleted, FERRY_EVENTS.dataTypeReadFailed] };

/**
 * After the final states of pulls of one company are written, in their transaction: each
 * pull's own event, and read.completed once none of the company's pulls is open (looked at
 * once for them all, in one read with what it reports). Reading the company locks it (on
 * PostgreSQL; on SQLite the transaction is alone anyway), so transactions ending pulls of
 * one company take turns here and the last one sees the others ended. The job's writer
 * hands over what its transaction holds already, so nothing is read again, and says when
 * other pulls of its job still run (`othersOpen`: no read.completed yet, nothing to read);
 * the events are one write.
 */
export async function pullsEnded(ctx: BackgroundEvents, ended: EndedPull[], othersOpen = false): Promise<void> {
  const { store } = ctx;
  const events = ended.map(({ pull, company, records }): NewEvent => ({
    clientId: company.client_id, company, eventType: isErrored(pull.status) ? FERRY_EVENTS.dataTypeReadFailed : FERRY_EVENTS.dataTypeReadCompleted,
    payload: dataTypeReadPayload(company, pull, records),
  }));
  const company = ended.at(-1)?.company;
  const completion = company && !othersOpen && await store.readCompletion(company.id, COMPLETION);
  if (company && completion) {
    // The pulls of the events read, and those of the events recorded here: oldest first, a later pull of a data type replaces an earlier one.
    const named = new Map([...completion.pulls, ...ended.map(({ pull }) => pull)].map((pull) => [pull.id, pull]));
    const latest = new Map<string, PullRow>();
    for (const pull of [...named.values()].sort((a, b) => a.seq - b.seq)) latest.set(pull.data_type, pull);
    const pulls = [...latest.values()].sort((a, b) => a.data_type.localeCompare(b.data_type));
    const payload = readCompletedPayload(company, pulls, completion.previousGenerated);
    const completed = (eventType: string): NewEvent => ({ clientId: company.client_id, company, eventType, payload });
    events.push(...(completion.previousGenerated === null ? [completed('read.completed.initial'), completed('read.completed')] : [completed('read.completed')]));
  }
  await recordEvents(ctx, events);
}

/** A failed refresh revoked the grant: the connection is Deauthorized, and consumers hear it. */
export async function deauthorized(ctx: BackgroundEvents, connectionId: string, error: ConnectionError): Promise<void> {
  const { store } = ctx;
  await store.transaction(async (tx) => {
    // The company is read (and so locked) before the connection is written: the order of every transaction that writes both.
    const found = await tx.getConnectionById(connectionId);
    const company = found && await tx.getCompany(found.company_id);
    await tx.deauthorize(connectionId, error);
    const connection = await tx.getConnectionById(connectionId);
    if (!connection || !company) return;
    await recordEvent(ctx, {
      clientId: company.client_id, company, eventType: 'connection.disconnected', payload: connectionPayload(company, connection, ctx.publicUrl ?? ''),
    });
  });
}

/** A push operation that reached Success, Failed or TimedOut. */
export async function pushEnded(ctx: BackgroundEvents, push: PushRow): Promise<void> {
  if (push.status === 'Pending') return;
  const company = await ctx.store.getCompany(push.company_id);
  if (!company) return;
  const outcome = push.status === 'Success' ? 'successful' : 'unsuccessful';
  await recordEvent(ctx, { clientId: company.client_id, company, eventType: `${push.data_type}.write.${outcome}`, payload: writePayload(company, push) });
}
