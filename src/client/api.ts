// Every endpoint of the service that ferry's commands and engines call, one typed function
// each: the paths are spelled here and nowhere else on the client side. Each takes the
// ApiClient first, so an engine that is handed a client needs nothing more.
import type { ApiClient, Page, QueryValue } from './client.js';
import { UnexpectedAnswerError } from './errors.js';
import type {
  ApiKeyRecord, ClientRecord, CompanyRecord, ConnectionRecord, CreatedClient, DataStatus, IntegrationRecord, ProfileRecord, PullOperation, PushOperation,
} from './wire.js';
import type { CreatedWebhookConsumer, WebhookConsumerRecord, WebhookDeliveryDetail, WebhookDeliveryRecord } from './wire.js';
import type { EventList } from './wire.js';

/** The largest page the service serves; a list that wants everything asks for it. */
export const MAX_PAGE_SIZE = 5000;

type Query = Record<string, QueryValue>;
const at = (signal?: AbortSignal) => (signal ? { signal } : {});
const id = (value: string) => encodeURIComponent(value);

const companyPath = (companyId: string) => `/companies/${id(companyId)}`;
const connectionPath = (companyId: string, connectionId: string) => `${companyPath(companyId)}/connections/${id(connectionId)}`;

// ---- the account

export const profile = (client: ApiClient, signal?: AbortSignal) => client.get<ProfileRecord>('/profile', at(signal));
/** GET /profile with its status, headers and timing (ferry doctor; the service's clock by its Date header). */
export const profileExchange = (client: ApiClient, signal?: AbortSignal) => client.exchange<ProfileRecord>('GET', '/profile', at(signal));

// ---- companies

/** One page of companies (query: page, pageSize, query, orderBy, tags). */
export const companiesPage = <T = CompanyRecord>(client: ApiClient, query: Query, signal?: AbortSignal) =>
  client.get<Page<T>>('/companies', { query, ...at(signal) });
/** Every page of companies, following the service's links. */
export const companyPages = <T = CompanyRecord>(client: ApiClient, query: Query, signal?: AbortSignal) =>
  client.pages<T>('/companies', { query, ...at(signal) });
export const companyRecords = <T = CompanyRecord>(client: ApiClient, query: Query, signal?: AbortSignal) =>
  client.records<T>('/companies', { query, ...at(signal) });
export const company = <T = CompanyRecord>(client: ApiClient, companyId: string, signal?: AbortSignal) =>
  client.get<T>(companyPath(companyId), at(signal));
export const createCompany = (client: ApiClient, body: Record<string, unknown>, signal?: AbortSignal) =>
  client.post<CompanyRecord>('/companies', body, at(signal));
export const deleteCompany = (client: ApiClient, companyId: string, signal?: AbortSignal) =>
  client.delete<void>(companyPath(companyId), at(signal));

// ---- connections

export const connectionRecords = (client: ApiClient, companyId: string, signal?: AbortSignal) =>
  client.records<ConnectionRecord>(`${companyPath(companyId)}/connections`, { query: { pageSize: MAX_PAGE_SIZE }, ...at(signal) });
export const connection = <T = ConnectionRecord>(client: ApiClient, companyId: string, connectionId: string, signal?: AbortSignal) =>
  client.get<T>(connectionPath(companyId, connectionId), at(signal));
export const createConnection = (client: ApiClient, companyId: string, platformKey: string, signal?: AbortSignal) =>
  client.post<ConnectionRecord>(`${companyPath(companyId)}/connections`, { platformKey }, at(signal));
export const unlinkConnection = (client: ApiClient, companyId: string, connectionId: string, signal?: AbortSignal) =>
  client.patch<ConnectionRecord>(connectionPath(companyId, connectionId), { status: 'Unlinked' }, at(signal));
export const deleteConnection = (client: ApiClient, companyId: string, connectionId: string, signal?: AbortSignal) =>
  client.delete<void>(connectionPath(companyId, connectionId), at(signal));
/** PUT …/authorization: hands the connection the tokens a client already holds. */
export const authorizeConnection = (client: ApiClient, companyId: string, connectionId: string, tokens: Record<string, unknown>, signal?: AbortSignal) =>
  client.put<ConnectionRecord>(`${connectionPath(companyId, connectionId)}/authorization`, tokens, at(signal));

// ---- integrations

export const integrationRecords = <T = IntegrationRecord>(client: ApiClient, query: Query = { pageSize: MAX_PAGE_SIZE }, signal?: AbortSignal) =>
  client.records<T>('/integrations', { query, ...at(signal) });
/** Every integration in one page (the registry is far smaller than a page). */
export async function integrations<T = IntegrationRecord>(client: ApiClient, signal?: AbortSignal): Promise<T[]> {
  const page = await client.get<{ results?: T[] } | undefined>('/integrations', { query: { pageSize: MAX_PAGE_SIZE }, ...at(signal) });
  if (!Array.isArray(page?.results)) throw new UnexpectedAnswerError('GET', '/integrations', client.baseUrl, 'JSON without a list of results');
  return page.results;
}
export const integration = <T = IntegrationRecord>(client: ApiClient, key: string, signal?: AbortSignal) =>
  client.get<T>(`/integrations/${id(key)}`, at(signal));

/** GET /integrations/KEY, asked once per key across many companies (a failed lookup is asked again). */
export function integrationCache<T = IntegrationRecord>(client: ApiClient, signal?: AbortSignal): (key: string) => Promise<T> {
  const cache = new Map<string, Promise<T>>();
  return (key) => {
    let found = cache.get(key);
    if (!found) {
      found = integration<T>(client, key, signal);
      found.catch(() => cache.delete(key));
      cache.set(key, found);
    }
    return found;
  };
}

// ---- syncs and data sets

/**
 * A sync asked for one company, which someone waits on (`check`, `sync ID`): the service
 * claims it ahead of queued backlogs (its interactive lane, docs/api.md).
 */
const INTERACTIVE = { headers: { 'Ferry-Sync-Priority': 'interactive' } };
const lane = (interactive: boolean | undefined) => (interactive ? INTERACTIVE : {});

/** Queues a pull of every data type; safe to repeat (an open pull answers instead of a new one). */
export const syncAll = (client: ApiClient, companyId: string, signal?: AbortSignal, interactive?: boolean) =>
  client.post<unknown>(`${companyPath(companyId)}/data/all`, undefined, { idempotent: true, ...at(signal), ...lane(interactive) });
export const syncDataType = (client: ApiClient, companyId: string, dataType: string, signal?: AbortSignal, interactive?: boolean) =>
  client.post<PullOperation>(`${companyPath(companyId)}/data/queue/${id(dataType)}`, undefined, { idempotent: true, ...at(signal), ...lane(interactive) });
export const dataStatus = (client: ApiClient, companyId: string, signal?: AbortSignal) =>
  client.get<DataStatus>(`${companyPath(companyId)}/dataStatus`, at(signal));
export const pull = (client: ApiClient, companyId: string, pullId: string, signal?: AbortSignal) =>
  client.get<PullOperation>(`${companyPath(companyId)}/data/history/${id(pullId)}`, at(signal));
/**
 * Company info is one record, answered as itself at /data/info (as the public API does);
 * the engines read every data set page by page, so it comes back as a page of one.
 */
const COMPANY_INFO = 'info';

function infoPage<T>(record: T, companyId: string, query: Query): Page<T> {
  const pageNumber = Number(query.page ?? 1);
  const pageSize = Number(query.pageSize ?? 100);
  const href = `${companyPath(companyId)}/data/${COMPANY_INFO}?page=${pageNumber}&pageSize=${pageSize}`;
  return { results: pageNumber === 1 ? [record] : [], pageNumber, pageSize, totalResults: 1, _links: { self: { href }, current: { href } } };
}

/** One page of a data set by its path (`invoices`, `accounts`). */
export const dataPage = async <T = unknown>(client: ApiClient, companyId: string, dataPath: string, query: Query, signal?: AbortSignal): Promise<Page<T>> => {
  if (dataPath === COMPANY_INFO) return infoPage(await client.get<T>(`${companyPath(companyId)}/data/${COMPANY_INFO}`, at(signal)), companyId, query);
  return client.get<Page<T>>(`${companyPath(companyId)}/data/${id(dataPath)}`, { query, ...at(signal) });
};
/** The same page as the bytes arrived, for engines that stream records through (export). */
export const rawDataPage = async (client: ApiClient, companyId: string, dataPath: string, query: Query, signal?: AbortSignal): Promise<Buffer[]> => {
  if (dataPath === COMPANY_INFO) {
    const record: unknown = JSON.parse(Buffer.concat(await client.get<Buffer[]>(`${companyPath(companyId)}/data/${COMPANY_INFO}`, { raw: true, ...at(signal) })).toString('utf8'));
    return [Buffer.from(JSON.stringify(infoPage(record, companyId, query)))];
  }
  return client.get<Buffer[]>(`${companyPath(companyId)}/data/${id(dataPath)}`, { query, raw: true, ...at(signal) });
};
/** A page the service linked to (`_links.next`), as bytes. */
export const rawLinkedPage = (client: ApiClient, href: string, signal?: AbortSignal) =>
  client.get<Buffer[]>(href, { raw: true, ...at(signal) });

// ---- pushes

export const push = (client: ApiClient, companyId: string, connectionId: string, dataType: string, record: unknown, signal?: AbortSignal) =>
  client.post<PushOperation>(`${connectionPath(companyId, connectionId)}/push/${id(dataType)}`, record, at(signal));
export const pushOperation = (client: ApiClient, companyId: string, pushOperationKey: string, signal?: AbortSignal) =>
  client.get<PushOperation>(`${companyPath(companyId)}/push/${id(pushOperationKey)}`, at(signal));
/** Where a person reads a company's push operations (for hints). */
export const pushOperationsPath = (companyId: string) => `${companyPath(companyId)}/push`;

// ---- ferry's own admin routes (ferry's service only)

export const clientRecords = (client: ApiClient, query: Query, signal?: AbortSignal) =>
  client.records<ClientRecord>('/admin/clients', { query: { pageSize: MAX_PAGE_SIZE, ...query }, ...at(signal) });
export const clientAccount = (client: ApiClient, clientId: string, signal?: AbortSignal) =>
  client.get<ClientRecord>(`/admin/clients/${id(clientId)}`, at(signal));
export const createClientAccount = (client: ApiClient, body: { name: string; plan?: string; created?: string }, signal?: AbortSignal) =>
  client.post<CreatedClient>('/admin/clients', body, at(signal));
export const apiKeyRecords = (client: ApiClient, clientId: string, signal?: AbortSignal) =>
  client.records<ApiKeyRecord>(`/admin/clients/${id(clientId)}/apiKeys`, at(signal));
export const createApiKey = (client: ApiClient, clientId: string, signal?: AbortSignal) =>
  client.post<{ id: string; apiKey: string }>(`/admin/clients/${id(clientId)}/apiKeys`, undefined, at(signal));
export const revokeApiKey = (client: ApiClient, clientId: string, keyId: string, signal?: AbortSignal) =>
  client.delete<void>(`/admin/clients/${id(clientId)}/apiKeys/${id(keyId)}`, at(signal));
/** Where the service's sandbox platforms listen. */
export const sandboxLocation = (client: ApiClient, signal?: AbortSignal) => client.get<{ url: string }>('/admin/sandbox', at(signal));

// ---- webhooks (ferry's service; docs/events.md)

const webhookPath = (consumerId: string) => `/webhooks/${id(consumerId)}`;
const deliveryPath = (consumerId: string, deliveryId: string) => `${webhookPath(consumerId)}/deliveries/${id(deliveryId)}`;

export interface WebhookConsumerInput {
  url: string;
  eventTypes: string[];
  companyTags?: string[];
  disabled?: boolean;
}

/** POST /webhooks: the consumer with its signing secret, which is never shown again. */
export const createWebhook = (client: ApiClient, body: WebhookConsumerInput, signal?: AbortSignal) =>
  client.post<CreatedWebhookConsumer>('/webhooks', body, at(signal));
export async function webhooks(client: ApiClient, signal?: AbortSignal): Promise<WebhookConsumerRecord[]> {
  const list = await client.get<{ results?: WebhookConsumerRecord[] } | undefined>('/webhooks', at(signal));
  if (!Array.isArray(list?.results)) throw new UnexpectedAnswerError('GET', '/webhooks', client.baseUrl, 'JSON without a list of results');
  return list.results;
}
export const webhook = (client: ApiClient, consumerId: string, signal?: AbortSignal) =>
  client.get<WebhookConsumerRecord>(webhookPath(consumerId), at(signal));
export const deleteWebhook = (client: ApiClient, consumerId: string, signal?: AbortSignal) =>
  client.delete<void>(webhookPath(consumerId), at(signal));
/** One page of a consumer's delivery log (query: page, pageSize, status). */
export const webhookDeliveriesPage = (client: ApiClient, consumerId: string, query: Query, signal?: AbortSignal) =>
  client.get<Page<WebhookDeliveryRecord>>(`${webhookPath(consumerId)}/deliveries`, { query, ...at(signal) });
export const webhookDeliveryPages = (client: ApiClient, consumerId: string, query: Query, signal?: AbortSignal) =>
  client.pages<WebhookDeliveryRecord>(`${webhookPath(consumerId)}/deliveries`, { query, ...at(signal) });
export const webhookDelivery = (client: ApiClient, consumerId: string, deliveryId: string, signal?: AbortSignal) =>
  client.get<WebhookDeliveryDetail>(deliveryPath(consumerId, deliveryId), at(signal));
/** Queues the delivery's event again (202), under the same webhook-id. */
export const replayWebhookDelivery = (client: ApiClient, consumerId: string, deliveryId: string, signal?: AbortSignal) =>
  client.post<WebhookDeliveryRecord | undefined>(`${deliveryPath(consumerId, deliveryId)}/replay`, undefined, at(signal));
/** Sends this consumer alone a `ferry.webhook.test` event. */
export const testWebhook = (client: ApiClient, consumerId: string, signal?: AbortSignal) =>
  client.post<WebhookDeliveryRecord>(`${webhookPath(consumerId)}/test`, undefined, at(signal));

// ---- events (ferry's service; the public API has no /events routes)

/** GET /events/types: every event type the service records. */
export async function eventTypes(client: ApiClient, signal?: AbortSignal): Promise<string[]> {
  const list = await client.get<{ results?: string[] } | undefined>('/events/types', at(signal));
  if (!Array.isArray(list?.results)) throw new UnexpectedAnswerError('GET', '/events/types', client.baseUrl, 'JSON without a list of results');
  return list.results;
}
/**
 * GET /events: the account's events after its number `after` (an account numbers its own
 * events), oldest first, at most `limit` (0 to 500). `lastSequence` is where to continue;
 * with `limit` 0 it is where the stream is now (a reader that must miss nothing from here
 * on passes it to streamEvents).
 */
export const listEvents = (client: ApiClient, after: number, limit: number, signal?: AbortSignal) =>
  client.get<EventList>('/events', { query: { after, limit }, ...at(signal) });
/** Where the account's events stand now: pass it as streamEvents' `after` to miss nothing committed from here on. */
export const latestEventSequence = async (client: ApiClient, signal?: AbortSignal): Promise<number> =>
  (await listEvents(client, 0, 0, signal)).lastSequence;
export const EVENT_STREAM_PATH = '/events/stream';
/** GET /events/stream, open: read it with streamEvents (client/event-stream.ts), which parses and reconnects. */
export const openEventStream = (client: ApiClient, query: { types?: string; companyId?: string }, lastEventId: string | undefined, idleMs: number, signal: AbortSignal) =>
  client.stream(EVENT_STREAM_PATH, { query, ...(lastEventId !== undefined ? { headers: { 'last-event-id': lastEventId } } : {}), idleMs, signal });
