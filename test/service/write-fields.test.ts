// Every write route with a JSON body refuses a field it does not take with a 400 naming it
// and changes nothing: a dropped field could make a request do more than its sender meant.
// Fields of older documents are honoured, or ignored where docs/api.md says so.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestService } from '../helpers/stack.js';
import { itemIds } from './support.js';

let t: TestService;
let key: string;
let companyId: string;
let connectionId: string;

const call = (method: string, path: string, body?: unknown, apiKey = key) => t.call(method, path, { apiKey, ...(body === undefined ? {} : { body }) });

beforeAll(async () => {
  t = await startTestStack('service');
  key = (await t.createClient('Fields Ltd', 'Paid')).apiKey;
  companyId = (await call('POST', '/companies', { name: 'Fields Co' })).body.id;
  connectionId = (await call('POST', `/companies/${companyId}/connections`, { platformKey: 'gbol' })).body.id;
});
afterAll(async () => t?.stop());

/** Every write route with a JSON body, a body it takes, and where a field it does not take may hide. */
const WRITES: Array<{ route: string; method: string; path: () => string; body: () => Record<string, unknown>; admin?: boolean; nested?: { at: string; into: (b: any) => Record<string, unknown> } }> = [
  { route: 'create a company', method: 'POST', path: () => '/companies', body: () => ({ name: 'New Co' }) },
  { route: 'update a company', method: 'PATCH', path: () => `/companies/${companyId}`, body: () => ({ name: 'Renamed Co' }) },
  { route: 'replace a company', method: 'PUT', path: () => `/companies/${companyId}`, body: () => ({ name: 'Replaced Co' }) },
  { route: 'create a connection', method: 'POST', path: () => `/companies/${companyId}/connections`, body: () => ({ platformKey: 'gbol' }) },
  { route: 'unlink a connection', method: 'PATCH', path: () => `/companies/${companyId}/connections/${connectionId}`, body: () => ({ status: 'Unlinked' }) },
  {
    route: 'authorize a connection', method: 'PUT', path: () => `/companies/${companyId}/connections/${connectionId}/authorization`,
    body: () => ({ accessToken: 'at_1', refreshToken: 'rt_1', tenantId: 't', expiresAt: '2030-01-01T00:00:00Z' }),
  },
  { route: 'update the profile', method: 'PUT', path: () => '/profile', body: () => ({ name: 'Fields Ltd', redirectUrl: 'https://app.example.com' }) },
  { route: 'set CORS settings', method: 'POST', path: () => '/corsSettings', body: () => ({ allowedOrigins: ['https://app.example.com'] }) },
  { route: 'set CORS settings (old path)', method: 'POST', path: () => '/connectionManagement/corsSettings', body: () => ({ allowedOrigins: [] }) },
  { route: 'create an API key', method: 'POST', path: () => '/apiKeys', body: () => ({ name: 'ci' }) },
  {
    route: 'set the account\'s sync settings', method: 'POST', path: () => '/profile/syncSettings', body: () => ({ settings: [{ dataType: 'bills', syncSchedule: 24 }] }),
    nested: { at: 'settings[0].', into: (b) => b.settings[0] },
  },
  {
    route: 'set a company\'s sync settings', method: 'POST', path: () => `/companies/${companyId}/syncSettings`, body: () => ({ settings: [{ dataType: 'bills', syncSchedule: 24 }] }),
    nested: { at: 'settings[0].', into: (b) => b.settings[0] },
  },
  {
    route: 'configure supplemental data', method: 'PUT', path: () => '/integrations/gbol/dataTypes/invoices/supplementalDataConfig',
    body: () => ({ supplementalDataConfig: { extras: { pullData: { ref: '$[*].reference' } } } }),
    nested: { at: 'supplementalDataConfig.extras.', into: (b) => b.supplementalDataConfig.extras },
  },
  {
    route: 'configure a custom data type', method: 'PUT', path: () => '/integrations/gbol/dataTypes/custom/names',
    body: () => ({ dataSource: '/customers', requiredData: { name: '$[*].customerName' }, keyBy: ['$[*].id'] }),
  },
  { route: 'create a webhook consumer', method: 'POST', path: () => '/webhooks', body: () => ({ url: 'https://example.com/hooks', eventTypes: ['company.created'] }) },
  {
    route: 'create a legacy webhook rule', method: 'POST', path: () => '/rules', body: () => ({ type: 'DataConnectionStatusChanged', notifiers: { webhook: 'https://example.com/rules' } }),
    nested: { at: 'notifiers.', into: (b) => b.notifiers },
  },
  { route: 'create a client (admin)', method: 'POST', path: () => '/admin/clients', body: () => ({ name: 'Client Co', plan: 'Paid' }), admin: true },
];

describe('a field a write route does not take', () => {
  it.each(WRITES)('$route: 400 naming it, and nothing changed', async ({ method, path, body, admin, nested }) => {
    const apiKey = admin ? t.adminKey : key;
    const before = await state();
    const refused = await call(method, path(), { ...body(), surprise: true }, apiKey);
    expect(refused.status, refused.text).toBe(400);
    expect(itemIds(refused)).toContain('surprise');
    if (nested) {
      const inner = body();
      nested.into(inner).surprise = true;
      const deep = await call(method, path(), inner, apiKey);
      expect(deep.status, deep.text).toBe(400);
      expect(itemIds(deep)).toContain(`${nested.at}surprise`);
    }
    expect(await state()).toEqual(before);
  });
});

/** Every write route that takes no body: fields sent anyway are refused, not dropped unread. */
const BODYLESS: Array<{ route: string; method: string; path: () => string; admin?: boolean }> = [
  { route: 'queue every data type', method: 'POST', path: () => `/companies/${companyId}/data/all` },
  { route: 'queue one data type', method: 'POST', path: () => `/companies/${companyId}/data/queue/invoices` },
  { route: 'refresh company info', method: 'POST', path: () => `/companies/${companyId}/data/info` },
  { route: 'add a product', method: 'PUT', path: () => `/companies/${companyId}/products/lending` },
  { route: 'remove a product', method: 'DELETE', path: () => `/companies/${companyId}/products/lending` },
  { route: 'refresh a product', method: 'POST', path: () => `/companies/${companyId}/products/lending/refresh` },
  { route: 'delete a connection', method: 'DELETE', path: () => `/companies/${companyId}/connections/${connectionId}` },
  { route: 'delete a company', method: 'DELETE', path: () => `/companies/${companyId}` },
  { route: 'revoke an API key', method: 'DELETE', path: () => `/apiKeys/${spareKeyId}` },
  { route: 'send a test event', method: 'POST', path: () => `/webhooks/${webhookId}/test` },
  { route: 'delete a webhook consumer', method: 'DELETE', path: () => `/webhooks/${webhookId}` },
  { route: 'make a client\'s key (admin)', method: 'POST', path: () => `/admin/clients/${clientId}/apiKeys`, admin: true },
  { route: 'revoke a client\'s key (admin)', method: 'DELETE', path: () => `/admin/clients/${clientId}/apiKeys/${spareKeyId}`, admin: true },
];

let spareKeyId: string;
let webhookId: string;
let clientId: string;

describe('a write route that takes no body', () => {
  beforeAll(async () => {
    clientId = (await call('GET', '/profile')).body.clientId ?? (await call('GET', '/admin/clients?pageSize=5000', undefined, t.adminKey)).body.results.find((c: { name: string }) => c.name === 'Fields Ltd').id;
    spareKeyId = (await call('POST', '/apiKeys', { name: 'spare' })).body.id;
    webhookId = (await call('POST', '/webhooks', { url: 'https://example.com/hooks', eventTypes: ['company.created'] })).body.id;
  });

  it.each(BODYLESS)('$route: a field sent anyway is a 400 naming it, and nothing changed', async ({ method, path, admin }) => {
    const apiKey = admin ? t.adminKey : key;
    const before = [await state(), await history()];
    const refused = await call(method, path(), { surprise: true, companyId: 'x' }, apiKey);
    expect(refused.status, refused.text).toBe(400);
    expect(itemIds(refused)).toEqual(['surprise', 'companyId']);
    expect(refused.body.validation.errors[0].message).toContain('it takes no body');
    expect([await state(), await history()]).toEqual(before);
  });

  it('an empty body is no body: {} revokes as none does', async () => {
    const revoked = await call('DELETE', `/apiKeys/${spareKeyId}`, {});
    expect(revoked.status, revoked.text).toBe(204);
    expect((await call('GET', '/apiKeys')).body.results.find((k: { id: string }) => k.id === spareKeyId)).toBeUndefined();
  });
});

/** The pulls queued for the company (the sync routes above would add one). */
async function history(): Promise<unknown> {
  return (await call('GET', `/companies/${companyId}/data/history?pageSize=5000`)).body.totalResults;
}

/** What the writes above could change. */
async function state(): Promise<unknown> {
  const read = async (path: string, apiKey = key) => (await call('GET', path, undefined, apiKey)).body;
  return {
    companies: await read('/companies'),
    connection: await read(`/companies/${companyId}/connections/${connectionId}`),
    profile: await read('/profile'),
    cors: await read('/corsSettings'),
    keys: await read('/apiKeys'),
    settings: [await read('/profile/syncSettings'), await read(`/companies/${companyId}/syncSettings`)],
    configs: [await read('/integrations/gbol/dataTypes/invoices/supplementalDataConfig'), (await call('GET', '/integrations/gbol/dataTypes/custom/names')).status],
    webhooks: await read('/webhooks'),
    clients: (await read('/admin/clients?pageSize=5000', t.adminKey)).totalResults,
  };
}

describe('fields of older documents', () => {
  it('a company\'s groups: none is taken; a group to join is refused (groups are outside this service\'s scope)', async () => {
    expect((await call('POST', '/companies', { name: 'Grouped Co', groups: [] })).status).toBe(200);
    const refused = await call('PATCH', `/companies/${companyId}`, { groups: [{ id: '00000000-0000-4000-8000-000000000000' }] });
    expect(refused.status).toBe(400);
    expect(itemIds(refused)).toEqual(['groups']);
  });

  it('the profile\'s apiKey is ignored (it never set a key); alertAuthHeader is refused: deliveries are signed instead', async () => {
    const taken = await call('PUT', '/profile', { name: 'Fields Ltd', redirectUrl: 'https://app.example.com', apiKey: 'anything' });
    expect(taken.status, taken.text).toBe(200);
    expect(taken.body).not.toHaveProperty('apiKey');
    const refused = await call('PUT', '/profile', { name: 'Fields Ltd', redirectUrl: 'https://app.example.com', alertAuthHeader: 'Bearer secret-value' });
    expect(refused.status).toBe(400);
    expect(itemIds(refused)).toEqual(['alertAuthHeader']);
    expect(refused.text).not.toContain('secret-value');
  });

  it('sync settings name their owner and overridesDefaults in the body: the key and the path decide whose they are', async () => {
    const other = (await call('POST', '/companies', { name: 'Elsewhere Co' })).body.id;
    const set = await call('POST', `/companies/${companyId}/syncSettings`, { companyId: other, overridesDefaults: false, settings: [{ dataType: 'invoices', syncSchedule: 36 }] });
    expect(set.status, set.text).toBe(204);
    const mine = (await call('GET', `/companies/${companyId}/syncSettings`)).body.settings.find((s: { dataType: string }) => s.dataType === 'invoices');
    const theirs = (await call('GET', `/companies/${other}/syncSettings`)).body.settings.find((s: { dataType: string }) => s.dataType === 'invoices');
    expect([mine.syncSchedule, theirs.syncSchedule]).toEqual([36, 24]);
    const account = await call('POST', '/profile/syncSettings', { clientId: '00000000-0000-4000-8000-000000000000', overridesDefaults: true, settings: [{ dataType: 'bills', syncSchedule: 48 }] });
    expect(account.status, account.text).toBe(204);
    expect((await call('GET', '/profile/syncSettings')).body.settings.find((s: { dataType: string }) => s.dataType === 'bills').syncSchedule).toBe(48);
  });
});
