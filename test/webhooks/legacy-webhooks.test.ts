// Webhooks as older clients make them: a consumer for one company (`companyId`, the body the
// public API documented until late 2024, as the earlier platform SDK sends it), and the
// legacy rules API (/rules) that SDK and the earlier "common" SDK still use for webhooks,
// served as a view over the same consumers and delivered the same way. Real receivers on
// 127.0.0.1, a live delivery loop.
import { CodatCommon } from '@codat/common';
import { CodatPlatform as CodatPlatformV4 } from '@codat/platform-v4';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basic } from '../helpers/service.js';
import { startTestStack, type TestService } from '../helpers/stack.js';
import { waitFor } from '../helpers/sync.js';
import { startReceiver, type Receiver } from './support.js';

let t: TestService;
let key: string;
let otherKey: string;
let v4: CodatPlatformV4;
let receiver: Receiver;

const call = (method: string, path: string, body?: unknown, apiKey = key) => t.call(method, path, { apiKey, ...(body === undefined ? {} : { body }) });
const company = async (name: string, apiKey = key): Promise<string> => (await call('POST', '/companies', { name }, apiKey)).body.id;

beforeAll(async () => {
  // The receivers listen on 127.0.0.1: the operator's opt-in.
  t = await startTestStack('service', { webhookTargets: { allowPrivate: true } });
  key = (await t.createClient('Legacy Hooks Ltd', 'Paid')).apiKey;
  otherKey = (await t.createClient('Other Hooks Ltd', 'Paid')).apiKey;
  v4 = new CodatPlatformV4({ authHeader: basic(key), serverURL: t.baseUrl, retryConfig: { strategy: 'none' } });
  receiver = await startReceiver();
});

afterAll(async () => {
  await t?.stop();
  await receiver?.close();
});

/** The ids of the companies whose events reached `path` on the receiver. */
const companiesAt = (path: string) => receiver.received.filter((r) => r.path === path).map((r) => r.event.payload.id ?? r.event.payload.referenceCompany?.id);

describe('a consumer for one company (companyId)', () => {
  it('through the earlier platform SDK: shown on the consumer, and only that company\'s events are delivered', async () => {
    const mine = await company('Watched Ltd');
    const created = await v4.webhooks.createConsumer({ url: `${receiver.url}/one`, eventTypes: ['company.deleted'], companyId: mine });
    expect(created).toMatchObject({ companyId: mine, eventTypes: ['company.deleted'] });
    expect((await call('GET', `/webhooks/${created.id}`)).body).toMatchObject({ companyId: mine });
    const other = await company('Unwatched Ltd');
    await call('DELETE', `/companies/${other}`);
    await call('DELETE', `/companies/${mine}`);
    await waitFor('the watched company\'s deletion delivered', async () => companiesAt('/hooks/one').length > 0);
    // Both deletions were recorded before the one delivered: the other's was never queued for it.
    expect(companiesAt('/hooks/one')).toEqual([mine]);
    expect((await call('GET', `/webhooks/${created.id}/deliveries`)).body.totalResults).toBe(1);
  });

  it('a company that is not the account\'s is a 400 naming companyId, and a field the route does not take is a 400 naming it', async () => {
    const theirs = await company('Theirs Ltd', otherKey);
    for (const companyId of [theirs, '00000000-0000-4000-8000-000000000000']) {
      const refused = await call('POST', '/webhooks', { url: receiver.url, eventTypes: ['company.created'], companyId });
      expect(refused.status, refused.text).toBe(400);
      expect(refused.body.validation.errors.map((e: { itemId: string }) => e.itemId)).toEqual(['companyId']);
    }
    const unknown = await call('POST', '/webhooks', { url: receiver.url, eventTypes: ['company.created'], companies: ['x'] });
    expect(unknown.status).toBe(400);
    expect(unknown.body.validation.errors.map((e: { itemId: string }) => e.itemId)).toEqual(['companies']);
    expect((await call('GET', '/webhooks')).body.results.map((c: { url: string }) => c.url)).not.toContain(receiver.url);
  });
});

describe('the legacy rules API (/rules)', () => {
  it('create, list and get through the earlier platform SDK; the rule is a consumer, and its notifications are deliveries', async () => {
    const watched = await company('Ruled Ltd');
    const rule = await v4.webhooks.create({ type: 'DataConnectionStatusChanged', companyId: watched, notifiers: { webhook: `${receiver.url}/rule`, emails: [] } });
    expect(rule).toEqual({ id: expect.any(String), type: 'DataConnectionStatusChanged', companyId: watched, notifiers: { webhook: `${receiver.url}/rule`, emails: [] } });
    expect(await v4.webhooks.get({ ruleId: rule.id! })).toEqual(rule);
    const listed = await v4.webhooks.list({});
    expect(listed.results).toContainEqual(rule);
    expect(listed).toMatchObject({ pageNumber: 1, pageSize: 100, totalResults: listed.results!.length });
    // The same consumer, with the events the rule type was replaced by.
    expect((await call('GET', `/webhooks/${rule.id}`)).body).toMatchObject({
      companyId: watched, eventTypes: ['connection.created', 'connection.connected', 'connection.disconnected', 'connection.reconnected', 'connection.deleted'],
    });

    const elsewhere = await company('Unruled Ltd');
    await call('POST', `/companies/${elsewhere}/connections`, { platformKey: 'gbol' });
    const connection = (await call('POST', `/companies/${watched}/connections`, { platformKey: 'gbol' })).body;
    await call('DELETE', `/companies/${watched}/connections/${connection.id}`);
    await waitFor('both of the watched company\'s connection events', async () => receiver.received.filter((r) => r.path === '/hooks/rule').length >= 2);
    const got = receiver.received.filter((r) => r.path === '/hooks/rule');
    expect(got.map((r) => [r.event.eventType, r.event.payload.connection.id])).toEqual([['connection.created', connection.id], ['connection.deleted', connection.id]]);
    // Signed as every delivery is (webhook-id, webhook-timestamp, webhook-signature).
    expect(got[0]!.signature).toMatch(/^v1,/);

    await call('DELETE', `/webhooks/${rule.id}`);
    const gone = await v4.webhooks.get({ ruleId: rule.id! }).then(() => undefined, (e: unknown) => e as { statusCode?: number; body?: string });
    expect(gone?.statusCode).toBe(404);
  });

  it('through the earlier common SDK: every spelling of a type the document and the migration guide use', async () => {
    const sdk = new CodatCommon({ security: { authHeader: basic(key) }, serverURL: t.baseUrl });
    for (const [type, shown] of [['Push Operation Status Changed()', 'Push Operation Status Changed'], ['NewCompanySynchronized', 'New company synchronised'],
      ['data sync completed', 'Data sync completed'], ['Rate Limit Reached', 'Rate Limit Reached'], ['read.completed', 'read.completed']]) {
      const made = await sdk.webhooks.create({ type: type!, notifiers: { webhook: `${receiver.url}/common` } });
      expect(made.statusCode, `${type}: ${JSON.stringify(made.rawResponse?.data)}`).toBe(200);
      expect(made.webhook).toMatchObject({ type: shown, notifiers: { webhook: `${receiver.url}/common` } });
      expect((await sdk.webhooks.get({ ruleId: made.webhook!.id! })).webhook?.type).toBe(shown);
    }
    const listed = await sdk.webhooks.list({});
    expect(listed.statusCode).toBe(200);
    expect(listed.webhooks?.results?.length).toBeGreaterThanOrEqual(5);
  });

  it('a consumer made through /webhooks shows as a rule of its event types', async () => {
    const made = (await call('POST', '/webhooks', { url: receiver.url, eventTypes: ['read.completed', 'company.created'] })).body;
    expect((await call('GET', `/rules/${made.id}`)).body).toEqual({ id: made.id, type: 'read.completed, company.created', notifiers: { emails: [], webhook: receiver.url } });
  });

  it.each([
    { case: 'no notifiers', body: { type: 'DataConnectionStatusChanged' }, items: ['notifiers'] },
    { case: 'emails (this service sends none)', body: { type: 'DataConnectionStatusChanged', notifiers: { emails: ['ops@example.com'], webhook: 'https://example.com/h' } }, items: ['notifiers.emails'] },
    { case: 'an unknown type', body: { type: 'Something Happened', notifiers: { webhook: 'https://example.com/h' } }, items: ['type'] },
    { case: 'a type of the expenses product', body: { type: 'Sync Completed', notifiers: { webhook: 'https://example.com/h' } }, items: ['type'] },
    { case: 'a rate-limit rule for a company', body: { type: 'Rate Limit Reached', companyId: '00000000-0000-4000-8000-000000000000', notifiers: { webhook: 'https://example.com/h' } }, items: ['companyId'] },
    { case: 'a webhook that is not http(s)', body: { type: 'DataConnectionStatusChanged', notifiers: { webhook: 'ftp://example.com/h' } }, items: ['notifiers.webhook'] },
    { case: 'a field the route does not take', body: { type: 'DataConnectionStatusChanged', notifiers: { webhook: 'https://example.com/h' }, ruleId: 'x' }, items: ['ruleId'] },
  ])('refuses $case: 400 naming $items', async ({ body, items }) => {
    const refused = await call('POST', '/rules', body);
    expect(refused.status, refused.text).toBe(400);
    expect(refused.body.validation.errors.map((e: { itemId: string }) => e.itemId)).toEqual(items);
  });

  it('another account\'s rule is as unknown as one that never was; the list takes no filter', async () => {
    const theirs = (await call('POST', '/rules', { type: 'DataConnectionStatusChanged', notifiers: { webhook: 'https://example.com/theirs' } }, otherKey)).body;
    expect((await call('GET', `/rules/${theirs.id}`)).status).toBe(404);
    expect((await call('GET', '/rules')).body.results.map((r: { id: string }) => r.id)).not.toContain(theirs.id);
    expect((await call('GET', '/rules?query=type%3DDataConnectionStatusChanged')).status).toBe(400);
  });
});
