// Tokens given in `connectionInfo` when a connection is created (the public API's earlier
// self-service migration, as its guide once told clients to do for QuickBooks Online,
// BigCommerce, Zettle and TrueLayer) authorize the connection as PUT …/authorization does:
// the same checks, errors, events and sync rules, for every integration with token fields.
// Tokens that fail leave no connection behind. In-process on fake clocks, against the
// sandbox platforms that verify the tokens.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INTEGRATIONS } from '../../src/platforms/registry.js';
import { readTokens } from '../../src/service/tokens.js';
import { assertEventShapes } from '../helpers/event-shapes.js';
import { startTestStack, type Harness } from '../helpers/stack.js';
import { createClient, createTenant, type Api } from '../helpers/sync.js';

let h: Harness;
let api: Api;
let clientId: string;
let seen = 0;

beforeAll(async () => {
  h = await startTestStack('fake-clocks');
  const key = await createClient(h.api, h.adminKey, 'Migrating Ltd', 'Paid');
  api = { ...h.api, call: (method, path, options = {}) => h.api.call(method, path, { apiKey: key, ...options }) };
  clientId = (await h.service.store.listClients({ page: 1, pageSize: 100 })).rows.find((c) => c.name === 'Migrating Ltd')!.id;
});
afterAll(async () => h?.stop());

/** The account's events since the last look: their types. */
async function newEvents(): Promise<string[]> {
  const rows = await h.service.store.eventsAfter(clientId, seen, 10_000);
  if (rows.length > 0) seen = rows.at(-1)!.seq;
  const events = rows.map((r) => JSON.parse(r.body));
  assertEventShapes(events);
  return events.map((e) => e.eventType);
}

/** A managed-only integration's tokens are migrated by the support team: the admin key, acting for the client. */
const asSupport = (managed: boolean) => (managed ? { apiKey: h.adminKey, headers: { 'x-client-id': clientId } } : {});

// The migration guide's four first (Zettle is no integration of this service: its key is refused as any unknown key), then every other.
const FIRST = ['qhyg', 'vqzp', 'upvr'];
const ORDERED = [...FIRST.map((key) => INTEGRATIONS.find((i) => i.key === key)!), ...INTEGRATIONS.filter((i) => !FIRST.includes(i.key))];

describe('tokens in connectionInfo at creation', () => {
  it.each(ORDERED.map((i) => [i.name, i] as const))('%s: Linked at once, as PUT …/authorization links it', async (_name, integration) => {
    const managed = integration.migrationRoute === 'managed';
    const tenant = await createTenant(h.sandboxUrl, integration.key, 2, 31);
    const company = (await api.call('POST', '/companies', { body: { name: `${integration.name} Co` } })).body.id;
    await newEvents();
    const created = await api.call('POST', `/companies/${company}/connections`, { ...asSupport(managed), body: { platformKey: integration.key, connectionInfo: tenant.tokens } });
    expect(created.status, created.text).toBe(200);
    expect(created.body).toMatchObject({ integrationKey: integration.key, status: 'Linked' });
    expect(await newEvents()).toEqual(['connection.created', 'connection.connected']);
    expect((await api.call('GET', `/companies/${company}/connections/${created.body.id}`)).body).toEqual(created.body);
    // The tokens stored, sealed, as the platform verified them; never in the answer.
    expect(await readTokens(h.service.context.store, h.service.context.sealer, created.body.id)).toBeDefined();
    for (const [field, value] of Object.entries(tenant.tokens)) if (/token|secret|password/i.test(field)) expect(created.text).not.toContain(value);

    // Another tenant's tokens (a refresh may have spent these) through PUT …/authorization:
    // the same record, but for its ids, dates and the organisation it names.
    const second = await createTenant(h.sandboxUrl, integration.key, 2, 37);
    const other = await api.call('POST', `/companies/${company}/connections`, { body: { platformKey: integration.key } });
    const put = await api.call('PUT', `/companies/${company}/connections/${other.body.id}/authorization`, { ...asSupport(managed), body: second.tokens });
    expect(put.status, put.text).toBe(200);
    const shape = (record: Record<string, any>) => ({
      ...record, id: undefined, sourceId: undefined, linkUrl: undefined, created: undefined, connectionInfo: Object.keys(record.connectionInfo ?? {}),
    });
    expect(shape(created.body)).toEqual(shape(put.body));
  });

  it('the sync rules of PUT …/authorization: nothing is fetched on linking; a sync started then completes', async () => {
    const tenant = await createTenant(h.sandboxUrl, 'gbol', 3, 32);
    const company = (await api.call('POST', '/companies', { body: { name: 'Synced Co' } })).body.id;
    expect((await api.call('POST', `/companies/${company}/connections`, { body: { platformKey: 'gbol', connectionInfo: tenant.tokens } })).status).toBe(200);
    await h.drain();
    expect((await api.call('GET', `/companies/${company}/data/history`)).body.totalResults).toBe(0);
    const pull = await api.call('POST', `/companies/${company}/data/queue/invoices`);
    await h.drain();
    expect((await api.call('GET', `/companies/${company}/data/history/${pull.body.id}`)).body.status).toBe('Complete');
    expect((await api.call('GET', `/companies/${company}/data/invoices`)).body.totalResults).toBe(3);
  });
});

describe('tokens that fail leave no connection', () => {
  let company: string;
  beforeAll(async () => {
    company = (await api.call('POST', '/companies', { body: { name: 'Refused Co' } })).body.id;
  });

  /** Asserts the company still has no connection, and that nothing was recorded. */
  async function nothingMade(): Promise<void> {
    expect((await api.call('GET', `/companies/${company}/connections`)).body.totalResults).toBe(0);
    expect(await newEvents()).toEqual([]);
  }

  it('tokens outside the token fields: the same 400, each field named under connectionInfo', async () => {
    await newEvents();
    const tenant = await createTenant(h.sandboxUrl, 'gbol', 1, 33);
    const { tenantId: _dropped, ...tokens } = tenant.tokens;
    const refused = await api.call('POST', `/companies/${company}/connections`, { body: { platformKey: 'gbol', connectionInfo: { ...tokens, extra: 'x' } } });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('The tokens do not match the Xero token schema.');
    expect(refused.body.validation.errors.map((e: { itemId: string }) => e.itemId)).toEqual(['connectionInfo.tenantId', 'connectionInfo.extra']);
    await nothingMade();
  });

  it('tokens the platform rejects: the same 400, and no connection (so no connection.failed either)', async () => {
    const tenant = await createTenant(h.sandboxUrl, 'gbol', 1, 34);
    const refused = await api.call('POST', `/companies/${company}/connections`, {
      body: { platformKey: 'gbol', connectionInfo: { ...tenant.tokens, accessToken: 'at_wrong', refreshToken: 'rt_wrong' } },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('Xero rejected the tokens.');
    await nothingMade();
  });

  it('a managed-only integration with a client\'s key: the same 403, before the tokens are looked at', async () => {
    const refused = await api.call('POST', `/companies/${company}/connections`, { body: { platformKey: 'qhyg', connectionInfo: { anything: 'at all' } } });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatch(/^Tokens for QuickBooks Online are migrated by the support team/);
    await nothingMade();
  });

  it('connectionInfo that is not an object, and a platform this service has no integration for (Zettle), are 400s', async () => {
    const notObject = await api.call('POST', `/companies/${company}/connections`, { body: { platformKey: 'gbol', connectionInfo: 'at_123' } });
    expect(notObject.status).toBe(400);
    expect(notObject.body.validation.errors.map((e: { itemId: string }) => e.itemId)).toEqual(['connectionInfo']);
    const zettle = await api.call('POST', `/companies/${company}/connections`, { body: { platformKey: 'zettle', connectionInfo: { accessToken: 'x' } } });
    expect(zettle.status).toBe(400);
    expect(zettle.body.validation.errors.map((e: { itemId: string }) => e.itemId)).toEqual(['platformKey']);
    await nothingMade();
  });

  it('null connectionInfo is none: a PendingAuth connection, as without it', async () => {
    const made = await api.call('POST', `/companies/${company}/connections`, { body: { platformKey: 'gbol', connectionInfo: null } });
    expect(made.body).toMatchObject({ status: 'PendingAuth' });
    expect(await newEvents()).toEqual(['connection.created']);
  });
});
