// Events recorded with the changes that cause them, in-process on a fake clock: names and
// payload fields of the public catalogue, ferry's own per data type, one rate-limit pair
// per episode, nothing recorded for a change that did not happen, and no other account's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, createTenant, linkedCompany, sampleInvoice, sandboxCall, type Api, type Linked } from '../helpers/sync.js';
import { startTestStack, type Harness } from '../helpers/stack.js';
import { assertEventShapes } from '../helpers/event-shapes.js';

describe('events recorded with their changes', () => {
  let h: Harness;
  let api: Api;
  let clientId: string;
  let seen = 0;

  /** The account's events since the last look. */
  async function newEvents(): Promise<Array<{ eventType: string; payload: any; id: string; generatedDate: string }>> {
    const rows = await h.service.store.eventsAfter(clientId, seen, 10_000);
    if (rows.length > 0) seen = rows.at(-1)!.seq;
    const events = rows.map((r) => JSON.parse(r.body));
    assertEventShapes(events);
    return events;
  }
  const types = (events: Array<{ eventType: string }>) => events.map((e) => e.eventType);

  beforeAll(async () => {
    h = await startTestStack('fake-clocks');
    const key = await createClient(h.api, h.adminKey, 'Events Ltd', 'Paid');
    api = { ...h.api, call: (method, path, options = {}) => h.api.call(method, path, { apiKey: key, ...options }) };
    clientId = (await h.service.store.listClients({ page: 1, pageSize: 100 })).rows.find((c) => c.name === 'Events Ltd')!.id;
    await newEvents();
  });
  afterAll(async () => {
    await h?.stop();
  });

  let linked: Linked;

  it('company and connection events, with the public payload fields', async () => {
    linked = await linkedCompany(api, h.sandboxUrl, 'gbol', 4, { seed: 3, name: 'Evented Ltd' });
    const events = await newEvents();
    expect(types(events)).toEqual(['company.created', 'connection.created', 'connection.connected']);
    const [created, connection, connected] = events;
    // The company as GET /companies/{id} answered it then, redirect included.
    const company = (await api.call('GET', `/companies/${linked.companyId}`)).body;
    expect(created).toMatchObject({ id: expect.any(String), generatedDate: expect.stringMatching(/Z$/) });
    expect(created!.payload).toEqual({ ...company, lastSync: undefined, dataConnections: [] });
    expect(company.redirect).toMatch(new RegExp(`/link/companies/${linked.companyId}$`));
    expect(connection!.payload).toMatchObject({ referenceCompany: { id: linked.companyId, name: 'Evented Ltd' }, connection: { id: linked.connectionId, status: 'PendingAuth' } });
    expect(connected!.payload.connection).toMatchObject({ id: linked.connectionId, status: 'Linked', integrationKey: 'gbol' });
    // Tokens never travel in events.
    expect(JSON.stringify(events)).not.toContain(linked.tenant.tokens.accessToken);
  });

  it('products added and removed', async () => {
    await api.call('PUT', `/companies/${linked.companyId}/products/lending`);
    await api.call('PUT', `/companies/${linked.companyId}/products/lending`); // already on: no change, no event
    await api.call('DELETE', `/companies/${linked.companyId}/products/lending`);
    const events = await newEvents();
    expect(types(events)).toEqual(['company.product.added', 'company.product.removed']);
    expect(events[0]!.payload).toMatchObject({ id: linked.companyId, productId: 'lending', products: ['lending'] });
    expect(events[1]!.payload.products).toEqual([]);
  });

  it('a sync: one event per data type, then read.completed.initial and read.completed once every pull ended', async () => {
    expect((await api.call('POST', `/companies/${linked.companyId}/data/queue/invoices`)).status).toBe(200);
    expect((await api.call('POST', `/companies/${linked.companyId}/data/queue/customers`)).status).toBe(200);
    await h.drain();
    const events = await newEvents();
    expect(types(events)).toEqual(['ferry.read.dataType.completed', 'ferry.read.dataType.completed', 'read.completed.initial', 'read.completed']);
    // The two pulls run at once, so either may end first.
    const invoices = events.slice(0, 2).find((e) => e.payload.dataType === 'invoices');
    expect(invoices?.payload).toMatchObject({ dataType: 'invoices', status: 'Complete', records: 4, connectionId: linked.connectionId, pullOperationId: expect.any(String) });
    const completed = events[3]!.payload;
    expect(completed.referenceCompany).toMatchObject({ id: linked.companyId });
    expect(completed.dataTypes.map((d: { dataType: string }) => d.dataType)).toEqual(['customers', 'invoices']);
    expect(completed.dataTypes[0]).toMatchObject({ connectionId: linked.connectionId, status: 'Complete', recordsModified: true, issues: [] });

    // The next round is read.completed alone, naming only what synced since.
    await api.call('POST', `/companies/${linked.companyId}/data/queue/invoices`);
    await h.drain();
    const next = await newEvents();
    expect(types(next)).toEqual(['ferry.read.dataType.completed', 'read.completed']);
    expect(next[1]!.payload.dataTypes.map((d: { dataType: string }) => d.dataType)).toEqual(['invoices']);
  });

  it('pushes: {dataType}.write.successful and .unsuccessful with the push operation', async () => {
    const customers = (await api.call('GET', `/companies/${linked.companyId}/data/customers`)).body.results;
    const path = `/companies/${linked.companyId}/connections/${linked.connectionId}/push/invoices`;
    const ok = await api.call('POST', path, { body: sampleInvoice(customers[0].id) });
    const refused = await api.call('POST', path, { body: sampleInvoice('nobody') });
    expect([ok.body.status, refused.body.status]).toEqual(['Success', 'Failed']);
    const events = await newEvents();
    expect(types(events)).toEqual(['invoices.write.successful', 'invoices.write.unsuccessful']);
    expect(events[0]!.payload).toMatchObject({ id: ok.body.pushOperationKey, type: 'Create', status: 'Success', connectionId: linked.connectionId, record: { id: ok.body.data.id } });
    expect(events[1]!.payload).toMatchObject({ id: refused.body.pushOperationKey, status: 'Failed' });
  });

  it('a refresh that fails deauthorizes: connection.disconnected, the pull\'s failure, and read.completed', async () => {
    const tenant = await createTenant(h.sandboxUrl, 'gbol', 3, 9);
    const other = await linkedCompany(api, h.sandboxUrl, 'gbol', 3, { seed: 9, name: 'Revoked Ltd' });
    await newEvents();
    // The legacy application refreshes after the service did: the grant is revoked.
    expect((await sandboxCall(h.sandboxUrl, 'POST', `/admin/tenants/${other.tenant.id}/legacy-refresh`)).status).toBe(200);
    h.clock.advance(2 * 3600);
    await api.call('POST', `/companies/${other.companyId}/data/queue/invoices`);
    await h.drain();
    const events = await newEvents();
    expect(types(events)).toContain('connection.disconnected');
    const disconnected = events.find((e) => e.eventType === 'connection.disconnected')!;
    expect(disconnected.payload.connection).toMatchObject({ id: other.connectionId, status: 'Deauthorized' });
    expect(events.find((e) => e.eventType === 'ferry.read.dataType.failed')!.payload).toMatchObject({ status: 'AuthError', dataType: 'invoices' });
    expect(tenant.id).toBeDefined();
  });

  it('unlink and delete', async () => {
    await api.call('PATCH', `/companies/${linked.companyId}/connections/${linked.connectionId}`, { body: { status: 'Unlinked' } });
    await api.call('DELETE', `/companies/${linked.companyId}/connections/${linked.connectionId}`);
    await api.call('DELETE', `/companies/${linked.companyId}`);
    const events = await newEvents();
    expect(types(events)).toEqual(['connection.disconnected', 'connection.deleted', 'company.deleted']);
    expect(events[0]!.payload.connection.status).toBe('Unlinked');
    expect(events[2]!.payload).toMatchObject({ id: linked.companyId, name: 'Evented Ltd', redirect: expect.stringMatching(new RegExp(`/link/companies/${linked.companyId}$`)) });
  });

  it('a change that does not happen records nothing: a refused company, tokens the platform rejects record connection.failed only', async () => {
    const company = await api.call('POST', '/companies', { body: { name: '' } });
    expect(company.status).toBe(400);
    expect(await newEvents()).toEqual([]);
    const made = await api.call('POST', '/companies', { body: { name: 'Bad Tokens Ltd' } });
    const connection = await api.call('POST', `/companies/${made.body.id}/connections`, { body: { platformKey: 'gbol' } });
    await newEvents();
    const tenant = await createTenant(h.sandboxUrl, 'gbol', 1, 12);
    const rejected = await api.call('PUT', `/companies/${made.body.id}/connections/${connection.body.id}/authorization`, { body: { ...tenant.tokens, accessToken: 'at_wrong', refreshToken: 'rt_wrong' } });
    expect(rejected.status).toBe(400);
    expect(types(await newEvents())).toEqual(['connection.failed']);
  });
});

describe('client rate-limit events', () => {
  it('one reached and one reset per episode, whatever the number of refused requests', async () => {
    const h = await startTestStack('fake-clocks', { service: { rateLimit: 2 } });
    try {
      const key = await createClient(h.api, h.adminKey, 'Busy Ltd', 'Paid');
      const clientId = (await h.service.store.listClients({ page: 1, pageSize: 100 })).rows.find((c) => c.name === 'Busy Ltd')!.id;
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await h.api.call('GET', '/companies', { apiKey: key })).status);
      expect(statuses).toEqual([200, 200, 429, 429, 429]);
      h.clock.advance(2);
      expect((await h.api.call('GET', '/companies', { apiKey: key })).status).toBe(200);
      const events = (await h.service.store.eventsAfter(clientId, 0, 100)).map((r) => JSON.parse(r.body));
      expect(events.map((e: { eventType: string }) => e.eventType)).toEqual(['client.rateLimit.reached', 'client.rateLimit.reset']);
      expect(events[0].payload).toMatchObject({ dailyQuota: 2, quotaRemaining: 0, expiryDate: expect.stringMatching(/Z$/) });
    } finally {
      await h.stop();
    }
  });
});
