// Requests that read, check, then write, sent at once. On SQLite their transactions take
// turns; on PostgreSQL (the postgres project) they run side by side on the pool, as they
// would on several API instances, and must still answer as if they had taken turns: no
// change lost, no event recorded twice, no limit passed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallResult } from '../helpers/service.js';
import { type TestService, startTestStack } from '../helpers/stack.js';
import { createCompany, createConnection } from './support.js';

let t: TestService;
let key: string;

beforeAll(async () => {
  t = await startTestStack('service');
  key = (await t.createClient('Racing Ltd', 'Paid')).apiKey;
});

afterAll(async () => {
  await t?.stop();
});

const call = (method: string, path: string, body?: unknown): Promise<CallResult> => t.call(method, path, { apiKey: key, ...(body === undefined ? {} : { body }) });
const statuses = (results: CallResult[]): number[] => results.map((r) => r.status).sort();
const events = async (companyId: string, eventType: string) => (await t.service.context.store.companyEventsAfter(companyId, eventType, 0)).length;

describe('concurrent changes to one company', () => {
  it('keeps every product added at once, each with its event', async () => {
    const company = await createCompany(t, key, { name: 'Products Co' });
    const products = Array.from({ length: 8 }, (_, i) => `product-${i}`);
    const added = await Promise.all(products.map((product) => call('PUT', `/companies/${company.id}/products/${product}`)));
    expect(statuses(added)).toEqual(products.map(() => 204));
    expect([...(await call('GET', `/companies/${company.id}`)).body.products].sort()).toEqual(products);
    expect(await events(company.id, 'company.product.added')).toBe(products.length);

    const removed = await Promise.all(products.slice(0, 4).map((product) => call('DELETE', `/companies/${company.id}/products/${product}`)));
    expect(statuses(removed)).toEqual([204, 204, 204, 204]);
    expect([...(await call('GET', `/companies/${company.id}`)).body.products].sort()).toEqual(products.slice(4));
  });

  it('applies both of two patches of different fields sent at once', async () => {
    const company = await createCompany(t, key, { name: 'Patched Co', description: 'before' });
    const results = await Promise.all([
      call('PATCH', `/companies/${company.id}`, { name: 'Renamed Co' }),
      call('PATCH', `/companies/${company.id}`, { description: 'after' }),
    ]);
    expect(statuses(results)).toEqual([200, 200]);
    expect((await call('GET', `/companies/${company.id}`)).body).toMatchObject({ name: 'Renamed Co', description: 'after' });
  });
});

describe('concurrent changes to one connection', () => {
  it('unlinks a connection once when asked several times at once: one connection.disconnected', async () => {
    const company = await createCompany(t, key, { name: 'Unlinked Co' });
    const connection = await createConnection(t, key, company.id, 'gbol');
    await t.service.context.store.markLinked(connection.id, null);
    const results = await Promise.all(Array.from({ length: 4 }, () => call('PATCH', `/companies/${company.id}/connections/${connection.id}`, { status: 'Unlinked' })));
    expect(statuses(results)).toEqual([200, 400, 400, 400]);
    expect(await events(company.id, 'connection.disconnected')).toBe(1);
  });

  it('deletes a connection once when asked several times at once: one connection.deleted', async () => {
    const company = await createCompany(t, key, { name: 'Deleted Co' });
    const connection = await createConnection(t, key, company.id, 'gbol');
    const results = await Promise.all(Array.from({ length: 3 }, () => call('DELETE', `/companies/${company.id}/connections/${connection.id}`)));
    expect(statuses(results)).toEqual([200, 404, 404]);
    expect(await events(company.id, 'connection.deleted')).toBe(1);
  });
});

describe('concurrent creates against a limit', () => {
  it('stops webhook consumers created at once at the account\'s 50', async () => {
    const { apiKey } = await t.createClient('Hooked Ltd', 'Paid');
    const create = (i: number) => t.call('POST', '/webhooks', { apiKey, body: { url: `https://example.com/hooks/${i}`, eventTypes: ['company.deleted'], disabled: true } });
    for (let i = 0; i < 46; i++) expect((await create(i)).status).toBe(201);
    const burst = await Promise.all(Array.from({ length: 8 }, (_, i) => create(100 + i)));
    expect(statuses(burst)).toEqual([201, 201, 201, 201, 400, 400, 400, 400]);
    expect((await t.call('GET', '/webhooks', { apiKey })).body.results).toHaveLength(50);
  });
});
