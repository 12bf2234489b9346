// The earlier "common" SDK (@codat/common 0.37.0), which integrators with older code still
// run, against a real `ferry serve` on 127.0.0.1: every operation it has (34, grouped by
// resource), each succeeding as that SDK counts success (the status its document gives the
// operation, and the body decoded where it has one). The SDK validates nothing itself, so
// the answers are also checked for the fields asked of them and for nulls. Its webhook
// (rules) operations are tested with their deliveries in test/webhooks/legacy-webhooks.test.ts.
import { CodatCommon } from '@codat/common';
import { describe, expect, it } from 'vitest';
import { basic } from '../helpers/service.js';
import type { ServeHandle } from '../helpers/stack.js';
import { createTenant, sampleInvoice, waitFor, type Linked } from '../helpers/sync.js';
import { allComplete, sdkTarget } from './sdk-target.js';

type Answer = { statusCode: number; rawResponse?: { data?: ArrayBuffer } } & Record<string, unknown>;

let stack: ServeHandle;
let key: string;
let sdk: CodatCommon;
let linked: Linked;

sdkTarget({ client: 'Common SDK Ltd', linked: 'Common Linked Ltd' }, { invoices: 3 }, async (target) => {
  ({ stack, key, linked } = target);
  sdk = new CodatCommon({ security: { authHeader: basic(key) }, serverURL: stack.baseUrl, retryConfig: { strategy: 'none' } as never });
  expect(ok(await sdk.refreshData.all({ companyId: linked.companyId }), 204)).toBeUndefined();
  await waitFor('every data type synced', async () => allComplete(ok(await sdk.refreshData.get({ companyId: linked.companyId }), 200, 'dataStatuses') as object), 60_000);
});

const ids = () => ({ companyId: linked.companyId, connectionId: linked.connectionId });

/** A success as the SDK counts one: the status its document gives, and the body it decoded into `field`. */
function ok(answer: object, status: number, field?: string): any {
  const res = answer as Answer;
  const text = res.rawResponse?.data ? new TextDecoder().decode(res.rawResponse.data) : '';
  expect(res.statusCode, text).toBe(status);
  if (field === undefined) return undefined;
  expect(res[field], `${field}: ${text}`).toBeDefined();
  expect(text, 'no field is sent as null').not.toMatch(/:null\b/);
  return res[field];
}

const freshCompany = async (name: string): Promise<string> => ok(await sdk.companies.create({ name }), 200, 'company').id;

describe('companies', () => {
  it('create, get, list and update', async () => {
    const made = ok(await sdk.companies.create({ name: 'Common Made', description: 'old' }), 200, 'company');
    expect(made).toMatchObject({ name: 'Common Made', description: 'old', redirect: expect.stringContaining(`/link/companies/${made.id}`) });
    expect(ok(await sdk.companies.get({ companyId: linked.companyId }), 200, 'company')).toMatchObject({ id: linked.companyId, dataConnections: [{ id: linked.connectionId, status: 'Linked' }] });
    expect(ok(await sdk.companies.list({ pageSize: 5000 }), 200, 'companies').results.map((c: { id: string }) => c.id)).toContain(made.id);
    expect(ok(await sdk.companies.update({ companyId: made.id, companyRequestBody: { name: 'Common Renamed' } }), 200, 'company')).toMatchObject({ id: made.id, name: 'Common Renamed' });
  });

  it('delete', async () => {
    const doomed = await freshCompany('Common Doomed');
    ok(await sdk.companies.delete({ companyId: doomed }), 204);
    expect((await sdk.companies.get({ companyId: doomed })).statusCode).toBe(404);
  });
});

describe('connections', () => {
  it('create, get and list', async () => {
    const company = await freshCompany('Common Connecting');
    const made = ok(await sdk.connections.create({ companyId: company, requestBody: { platformKey: 'gbol' } }), 200, 'connection');
    expect(made).toMatchObject({ status: 'PendingAuth', integrationKey: 'gbol' });
    expect(ok(await sdk.connections.get(ids()), 200, 'connection')).toMatchObject({ id: linked.connectionId, status: 'Linked' });
    expect(ok(await sdk.connections.list({ companyId: linked.companyId }), 200, 'connections').results.map((c: { id: string }) => c.id)).toEqual([linked.connectionId]);
  });

  it('updateAuthorization, unlink and delete', async () => {
    const company = await freshCompany('Common Authorizing');
    const connection = ok(await sdk.connections.create({ companyId: company, requestBody: { platformKey: 'gbol' } }), 200, 'connection');
    const tenant = await createTenant(stack.sandboxUrl, 'gbol', 1, 63);
    const scope = { companyId: company, connectionId: connection.id };
    expect(ok(await sdk.connections.updateAuthorization({ ...scope, requestBody: tenant.tokens }), 200, 'connection')).toMatchObject({ status: 'Linked' });
    expect(ok(await sdk.connections.unlink({ ...scope, updateConnectionStatus: { status: 'Unlinked' as never } }), 200, 'connection')).toMatchObject({ status: 'Unlinked' });
    ok(await sdk.connections.delete(scope), 200);
    expect((await sdk.connections.get(scope)).statusCode).toBe(404);
  });
});

describe('integrations', () => {
  it('list, get and getBranding', async () => {
    expect(ok(await sdk.integrations.list({ pageSize: 5000 }), 200, 'integrations').results.map((i: { key: string }) => i.key)).toContain('gbol');
    expect(ok(await sdk.integrations.get({ platformKey: 'gbol' }), 200, 'integration')).toMatchObject({ key: 'gbol', name: 'Xero' });
    expect(ok(await sdk.integrations.getBranding({ platformKey: 'gbol' }), 200, 'branding').logo.full.image.src).toMatch(/\/branding\/gbol\//);
  });
});

describe('refresh data and pull operations', () => {
  it('byDataType, get, listPullOperations and getPullOperation', async () => {
    const pull = ok(await sdk.refreshData.byDataType({ companyId: linked.companyId, dataType: 'invoices' as never }), 200, 'pullOperation');
    expect(pull).toMatchObject({ companyId: linked.companyId, dataType: 'invoices' });
    await waitFor('the invoices refreshed', async () => ok(await sdk.refreshData.getPullOperation({ companyId: linked.companyId, datasetId: pull.id }), 200, 'pullOperation').status === 'Complete');
    expect(ok(await sdk.refreshData.get({ companyId: linked.companyId }), 200, 'dataStatuses').invoices).toMatchObject({ currentStatus: 'Complete', latestSyncId: pull.id });
    expect(ok(await sdk.refreshData.listPullOperations({ companyId: linked.companyId }), 200, 'pullOperations').results.map((p: { id: string }) => p.id)).toContain(pull.id);
  });
});

describe('push operations', () => {
  it('getModelOptions, listOperations and getOperation', async () => {
    expect(ok(await sdk.pushData.getModelOptions({ ...ids(), dataType: 'invoices' as never }), 200, 'pushOption')).toMatchObject({ type: 'Object', required: true });
    const customers = await stack.api.call('GET', `/companies/${linked.companyId}/data/customers?pageSize=1`, { apiKey: key });
    const pushed = await stack.api.call('POST', `/companies/${linked.companyId}/connections/${linked.connectionId}/push/invoices`, { apiKey: key, body: sampleInvoice(customers.body.results[0].id) });
    const pushOperationKey = pushed.body.pushOperationKey as string;
    expect(ok(await sdk.pushData.listOperations({ companyId: linked.companyId }), 200, 'pushOperations').results.map((p: { pushOperationKey: string }) => p.pushOperationKey)).toContain(pushOperationKey);
    expect(ok(await sdk.pushData.getOperation({ companyId: linked.companyId, pushOperationKey }), 200, 'pushOperation')).toMatchObject({ pushOperationKey, status: 'Success' });
  });
});

describe('settings', () => {
  it('getProfile and updateProfile', async () => {
    expect(ok(await sdk.settings.getProfile(), 200, 'profile')).toMatchObject({ name: expect.any(String) });
    expect(ok(await sdk.settings.updateProfile({ name: 'Common SDK Ltd', redirectUrl: 'https://common.example.com/{companyId}' }), 200, 'profile')).toMatchObject({ redirectUrl: 'https://common.example.com/{companyId}' });
  });

  it('getSyncSettings and updateSyncSettings', async () => {
    const settings = [{ dataType: 'bills', syncSchedule: 36, fetchOnFirstLink: false, syncOrder: 0, isLocked: false }];
    ok(await sdk.settings.updateSyncSettings({ clientId: '00000000-0000-4000-8000-000000000000', settings: settings as never, overridesDefaults: true }), 204);
    expect(ok(await sdk.settings.getSyncSettings(), 200, 'syncSettings').settings.find((s: { dataType: string }) => s.dataType === 'bills')).toMatchObject({ syncSchedule: 36 });
  });

  // The document this SDK was made from has the 204 without a body, as ferry answers it.
  it('createApiKey, listApiKeys and deleteApiKey', async () => {
    const made = ok(await sdk.settings.createApiKey({ name: 'common key' }), 201, 'apiKeyDetails');
    expect(made).toMatchObject({ name: 'common key', apiKey: expect.stringMatching(/^fy_/) });
    expect(ok(await sdk.settings.listApiKeys(), 200, 'apiKeys').results.map((k: { id: string }) => k.id)).toContain(made.id);
    ok(await sdk.settings.deleteApiKey({ apiKeyId: made.id }), 204);
    expect(ok(await sdk.settings.listApiKeys(), 200, 'apiKeys').results.map((k: { id: string }) => k.id)).not.toContain(made.id);
  });
});

describe('supplemental data, at the path spelled datatypes', () => {
  it('configure and getConfiguration', async () => {
    const config = { supplementalDataConfig: { common: { dataSource: '/invoices', pullData: { ref: '$[*].invoiceNumber' } } } };
    ok(await sdk.supplementalData.configure({ platformKey: 'gbol', dataType: 'invoices' as never, supplementalDataConfiguration: config as never }), 200);
    expect(ok(await sdk.supplementalData.getConfiguration({ platformKey: 'gbol', dataType: 'invoices' as never }), 200, 'supplementalDataConfiguration')).toEqual(config);
  });
});

describe('webhooks (the rules API)', () => {
  it('create, get and list', async () => {
    const rule = ok(await sdk.webhooks.create({ type: 'DataConnectionStatusChanged', companyId: linked.companyId, notifiers: { emails: [], webhook: 'https://common.example.com/hooks' } }), 200, 'webhook');
    expect(rule).toMatchObject({ type: 'DataConnectionStatusChanged', companyId: linked.companyId });
    expect(ok(await sdk.webhooks.get({ ruleId: rule.id }), 200, 'webhook')).toMatchObject({ id: rule.id });
    expect(ok(await sdk.webhooks.list({}), 200, 'webhooks').results.map((r: { id: string }) => r.id)).toContain(rule.id);
  });
});
