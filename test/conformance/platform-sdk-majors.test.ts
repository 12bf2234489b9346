// The earlier major of the official platform SDK (@codat/platform 4.0.0, installed as
// @codat/platform-v4) beside the current one (6.2.1), against a real `ferry serve` on
// 127.0.0.1, both with their response validation on: one test per operation the two share
// (the same method and path), each calling it through both majors. The earlier major's own
// operations are tested where their routes are: the legacy rules API in
// test/webhooks/legacy-webhooks.test.ts, groups (outside ferry's scope) in
// test/service/out-of-scope-routes.test.ts. docs/api.md lists the operations.
import { CodatPlatform as V6 } from '@codat/platform';
import { SDKError as V6SDKError } from '@codat/platform/sdk/models/errors/index.js';
import { CodatPlatform as V4 } from '@codat/platform-v4';
import { ErrorMessage as V4ErrorMessage, SDKError as V4SDKError, SDKValidationError as V4SDKValidationError } from '@codat/platform-v4/sdk/models/errors/index.js';
import type { ZodError } from 'zod';
import { describe, expect, it } from 'vitest';
import { basic } from '../helpers/service.js';
import type { ServeHandle } from '../helpers/stack.js';
import { createTenant, linkedCompany, sampleInvoice, sandboxCall, waitFor, type Linked } from '../helpers/sync.js';
import { allComplete, sdkTarget } from './sdk-target.js';

let stack: ServeHandle;
let key: string;
let v4: V4;
let v6: V6;
let linked: Linked;

sdkTarget({ client: 'Two Majors Ltd', linked: 'Two Majors Linked Ltd' }, { invoices: 4 }, async (target) => {
  ({ stack, key, linked } = target);
  v4 = new V4({ authHeader: basic(key), serverURL: stack.baseUrl, retryConfig: { strategy: 'none' } });
  v6 = new V6({ authHeader: basic(key), serverURL: stack.baseUrl, retryConfig: { strategy: 'none' } });
  // Every data type synced once: the earlier document requires each data status to have a last success.
  await v6.refreshData.all({ companyId: linked.companyId });
  await waitFor('every data type synced', async () => allComplete(await v6.refreshData.get({ companyId: linked.companyId })), 60_000);
});

const ids = () => ({ companyId: linked.companyId, connectionId: linked.connectionId });
/** A company of its own for a test that changes one. */
const freshCompany = async (name: string) => (await v6.companies.create({ name })).id;
/** What a call threw: the error, or undefined when it succeeded. */
const thrown = (call: Promise<unknown>) => call.then(() => undefined, (e: unknown) => e as { statusCode?: number });

describe('companies', () => {
  it('list: GET /companies', async () => {
    for (const page of [await v4.companies.list({ pageSize: 5000 }), await v6.companies.list({ pageSize: 5000 })]) {
      expect(page.results?.map((c) => c.id)).toContain(linked.companyId);
    }
  });

  it('create: POST /companies', async () => {
    const [old, current] = [await v4.companies.create({ name: 'Made by v4', description: 'four' }), await v6.companies.create({ name: 'Made by v6', description: 'six' })];
    expect(old).toMatchObject({ name: 'Made by v4', description: 'four', redirect: expect.stringContaining(`/link/companies/${old.id}`) });
    expect(current).toMatchObject({ name: 'Made by v6', description: 'six', redirect: expect.stringContaining(`/link/companies/${current.id}`) });
  });

  it('get: GET /companies/{companyId}', async () => {
    const [old, current] = [await v4.companies.get({ companyId: linked.companyId }), await v6.companies.get({ companyId: linked.companyId })];
    expect(old).toMatchObject({ id: linked.companyId, dataConnections: [{ id: linked.connectionId, status: 'Linked' }] });
    expect(current).toMatchObject({ id: linked.companyId, dataConnections: [{ id: linked.connectionId, status: 'Linked' }] });
  });

  it('update (v4) and replace (v6): PUT /companies/{companyId}', async () => {
    const id = await freshCompany('To Replace');
    expect(await v4.companies.update({ companyId: id, companyRequestBody: { name: 'Replaced by v4' } })).toMatchObject({ id, name: 'Replaced by v4' });
    expect(await v6.companies.replace({ companyId: id, companyRequestBody: { name: 'Replaced by v6' } })).toMatchObject({ id, name: 'Replaced by v6' });
  });

  it('delete: DELETE /companies/{companyId}', async () => {
    const [a, b] = [await freshCompany('Doomed A'), await freshCompany('Doomed B')];
    await v4.companies.delete({ companyId: a });
    await v6.companies.delete({ companyId: b });
    expect(await thrown(v4.companies.get({ companyId: a }))).toBeInstanceOf(V4ErrorMessage);
    expect((await thrown(v6.companies.get({ companyId: b })))?.statusCode).toBe(404);
  });
});

describe('connections', () => {
  it('list: GET …/connections', async () => {
    for (const page of [await v4.connections.list({ companyId: linked.companyId }), await v6.connections.list({ companyId: linked.companyId })]) {
      expect(page.results?.map((c) => c.id)).toEqual([linked.connectionId]);
    }
  });

  it('create: POST …/connections', async () => {
    const company = await freshCompany('Connecting');
    expect(await v4.connections.create({ companyId: company, requestBody: { platformKey: 'gbol' } })).toMatchObject({ status: 'PendingAuth', integrationKey: 'gbol' });
    expect(await v6.connections.create({ companyId: company, requestBody: { platformKey: 'gbol' } })).toMatchObject({ status: 'PendingAuth', integrationKey: 'gbol' });
  });

  it('get: GET …/connections/{connectionId}', async () => {
    expect(await v4.connections.get(ids())).toMatchObject({ id: linked.connectionId, status: 'Linked', connectionInfo: expect.any(Object) });
    expect(await v6.connections.get(ids())).toMatchObject({ id: linked.connectionId, status: 'Linked', connectionInfo: expect.any(Object) });
  });

  it('updateAuthorization: PUT …/authorization', async () => {
    const company = await freshCompany('Authorizing');
    for (const sdk of [v4, v6] as const) {
      const tenant = await createTenant(stack.sandboxUrl, 'gbol', 1, 61);
      const connection = await v6.connections.create({ companyId: company, requestBody: { platformKey: 'gbol' } });
      const linkedNow = await sdk.connections.updateAuthorization({ companyId: company, connectionId: connection.id, requestBody: tenant.tokens });
      expect(linkedNow).toMatchObject({ id: connection.id, status: 'Linked' });
    }
  });

  it('unlink: PATCH …/connections/{connectionId}', async () => {
    for (const sdk of [v4, v6] as const) {
      const other = await linkedCompany(stack.api, stack.sandboxUrl, 'gbol', 1, { apiKey: key, name: 'Unlinking Ltd' });
      expect(await sdk.connections.unlink({ companyId: other.companyId, connectionId: other.connectionId, updateConnectionStatus: { status: 'Unlinked' } }))
        .toMatchObject({ id: other.connectionId, status: 'Unlinked' });
    }
  });

  it('delete: DELETE …/connections/{connectionId}', async () => {
    const company = await freshCompany('Disconnecting');
    for (const sdk of [v4, v6] as const) {
      const connection = await v6.connections.create({ companyId: company, requestBody: { platformKey: 'gbol' } });
      await sdk.connections.delete({ companyId: company, connectionId: connection.id });
      expect((await thrown(v6.connections.get({ companyId: company, connectionId: connection.id })))?.statusCode).toBe(404);
    }
  });

  it('the connection management access token: GET /companies/{companyId}/connectionManagement/accessToken', async () => {
    expect((await v4.connectionManagement.getAccessToken({ companyId: linked.companyId })).accessToken).toEqual(expect.any(String));
    expect((await v6.connectionManagement.get({ companyId: linked.companyId })).accessToken).toEqual(expect.any(String));
  });
});

describe('CORS settings at their old path', () => {
  it('set: POST /connectionManagement/corsSettings', async () => {
    expect(await v4.connectionManagement.corsSettings.set({ allowedOrigins: ['https://four.example.com'] })).toEqual({ allowedOrigins: ['https://four.example.com'] });
    expect(await v6.cors.set({ allowedOrigins: ['https://six.example.com'] })).toEqual({ allowedOrigins: ['https://six.example.com'] });
  });

  it('get: GET /connectionManagement/corsSettings', async () => {
    await v6.cors.set({ allowedOrigins: ['https://both.example.com'] });
    expect(await v4.connectionManagement.corsSettings.get()).toEqual({ allowedOrigins: ['https://both.example.com'] });
    expect(await v6.cors.get()).toEqual({ allowedOrigins: ['https://both.example.com'] });
  });
});

describe('refresh data and pull operations', () => {
  it('all: POST …/data/all', async () => {
    await v4.refreshData.all({ companyId: linked.companyId });
    await v6.refreshData.all({ companyId: linked.companyId });
    await waitFor('the refreshes ended', async () => Object.values(await v6.refreshData.get({ companyId: linked.companyId })).every((s) => s?.currentStatus === 'Complete'), 60_000);
  });

  it('byDataType: POST …/data/queue/{dataType}', async () => {
    for (const sdk of [v4, v6] as const) expect(await sdk.refreshData.byDataType({ companyId: linked.companyId, dataType: 'invoices' })).toMatchObject({ dataType: 'invoices', companyId: linked.companyId });
    await waitFor('the invoices refreshed', async () => (await v6.refreshData.get({ companyId: linked.companyId })).invoices?.currentStatus === 'Complete', 30_000);
  });

  it('get: GET …/dataStatus', async () => {
    expect((await v4.refreshData.get({ companyId: linked.companyId })).invoices).toMatchObject({ currentStatus: 'Complete', lastSuccessfulSync: expect.any(String) });
    expect((await v6.refreshData.get({ companyId: linked.companyId })).invoices).toMatchObject({ currentStatus: 'Complete', lastSuccessfulSync: expect.any(String) });
  });

  // The earlier document requires a lastSuccessfulSync of every data status; the current one
  // and API.md make it optional, and ferry leaves it out until the data type has synced (a
  // date it never had would read as a success). The earlier SDK refuses such an answer whole.
  it('get: GET …/dataStatus of a data type that never synced: the earlier SDK refuses the answer', async () => {
    const tenant = await createTenant(stack.sandboxUrl, 'gbol', 1, 62);
    const company = await freshCompany('Never Synced');
    const connection = await v6.connections.create({ companyId: company, requestBody: { platformKey: 'gbol' } });
    // Tokens the service refreshes as it links them, whose grant the legacy application then revokes: the first pull ends AuthError.
    const expired = await sandboxCall(stack.sandboxUrl, 'POST', `/admin/tenants/${tenant.id}/tokens`, { state: 'expired' });
    await v6.connections.updateAuthorization({ companyId: company, connectionId: connection.id, requestBody: expired.body.tokens });
    expect((await sandboxCall(stack.sandboxUrl, 'POST', `/admin/tenants/${tenant.id}/legacy-refresh`)).body.outcome).toBe('grant-revoked');
    const pull = await v6.refreshData.byDataType({ companyId: company, dataType: 'invoices' });
    await waitFor('the pull ended', async () => (await v6.refreshData.getPullOperation({ companyId: company, datasetId: pull.id })).isCompleted);

    const current = await v6.refreshData.get({ companyId: company });
    expect(current.invoices).toEqual({ dataType: 'invoices', currentStatus: 'AuthError', latestSyncId: pull.id });
    const err = await thrown(v4.refreshData.get({ companyId: company }));
    expect(err).toBeInstanceOf(V4SDKValidationError);
    expect((err as V4SDKValidationError).message).toBe('Response validation failed');
    expect(((err as V4SDKValidationError).cause as ZodError).issues).toEqual([
      expect.objectContaining({ code: 'invalid_type', path: ['invoices', 'lastSuccessfulSync'], message: 'Invalid input: expected string, received undefined' }),
    ]);
  });

  it('listPullOperations: GET …/data/history', async () => {
    const [old, current] = [await v4.refreshData.listPullOperations({ companyId: linked.companyId }), await v6.refreshData.listPullOperations({ companyId: linked.companyId })];
    expect(current.results?.length).toBeGreaterThan(0);
    expect(old.results?.map((p) => p.id)).toEqual(current.results?.map((p) => p.id));
  });

  it('getPullOperation: GET …/data/history/{datasetId}', async () => {
    const id = (await v6.refreshData.listPullOperations({ companyId: linked.companyId })).results![0]!.id;
    expect(await v4.refreshData.getPullOperation({ companyId: linked.companyId, datasetId: id })).toMatchObject({ id, companyId: linked.companyId });
    expect(await v6.refreshData.getPullOperation({ companyId: linked.companyId, datasetId: id })).toMatchObject({ id, companyId: linked.companyId });
  });
});

describe('push operations', () => {
  it('getModelOptions: GET …/options/{dataType}', async () => {
    expect(await v4.pushData.getModelOptions({ ...ids(), dataType: 'invoices' })).toMatchObject({ type: 'Object', displayName: 'Invoices', required: true });
    expect(await v6.pushData.getModelOptions({ ...ids(), dataType: 'invoices' })).toMatchObject({ type: 'Object', displayName: 'Invoices', required: true });
  });

  let pushOperationKey: string;

  it('listOperations: GET /companies/{companyId}/push', async () => {
    const page = (await (await fetch(`${stack.baseUrl}/companies/${linked.companyId}/data/customers?pageSize=1`, { headers: { authorization: basic(key) } })).json()) as { results: Array<{ id: string }> };
    const [customer] = page.results;
    const pushed = await fetch(`${stack.baseUrl}/companies/${linked.companyId}/connections/${linked.connectionId}/push/invoices`, {
      method: 'POST', headers: { authorization: basic(key), 'content-type': 'application/json' }, body: JSON.stringify(sampleInvoice(customer!.id)),
    });
    pushOperationKey = ((await pushed.json()) as { pushOperationKey: string }).pushOperationKey;
    for (const sdk of [v4, v6] as const) expect((await sdk.pushData.listOperations({ companyId: linked.companyId })).results?.map((p) => p.pushOperationKey)).toContain(pushOperationKey);
  });

  it('getOperation: GET /companies/{companyId}/push/{pushOperationKey}', async () => {
    for (const sdk of [v4, v6] as const) expect(await sdk.pushData.getOperation({ companyId: linked.companyId, pushOperationKey })).toMatchObject({ pushOperationKey, status: 'Success' });
  });
});

describe('integrations', () => {
  it('list: GET /integrations', async () => {
    for (const page of [await v4.integrations.list({ pageSize: 5000 }), await v6.integrations.list({ pageSize: 5000 })]) expect(page.results?.map((i) => i.key)).toContain('gbol');
  });

  it('get: GET /integrations/{platformKey}', async () => {
    expect(await v4.integrations.get({ platformKey: 'gbol' })).toMatchObject({ key: 'gbol', name: 'Xero', enabled: true });
    expect(await v6.integrations.get({ platformKey: 'gbol' })).toMatchObject({ key: 'gbol', name: 'Xero', enabled: true });
  });

  it('getBranding: GET /integrations/{platformKey}/branding', async () => {
    const [old, current] = [await v4.integrations.getBranding({ platformKey: 'gbol' }), await v6.integrations.getBranding({ platformKey: 'gbol' })];
    expect(old.logo?.full?.image?.src).toMatch(/\/branding\/gbol\//);
    expect(old.logo?.full?.image?.src).toBe(current.logo?.full?.image?.src);
  });
});

describe('settings', () => {
  it('getProfile: GET /profile', async () => {
    expect(await v4.settings.getProfile()).toMatchObject({ name: expect.any(String), redirectUrl: expect.any(String) });
    expect(await v6.settings.getProfile()).toMatchObject({ name: expect.any(String), redirectUrl: expect.any(String) });
  });

  it('updateProfile: PUT /profile', async () => {
    expect(await v4.settings.updateProfile({ name: 'Two Majors Ltd', redirectUrl: 'https://four.example.com/{companyId}' })).toMatchObject({ redirectUrl: 'https://four.example.com/{companyId}' });
    expect(await v6.settings.updateProfile({ name: 'Two Majors Ltd', redirectUrl: 'https://six.example.com/{companyId}' })).toMatchObject({ redirectUrl: 'https://six.example.com/{companyId}' });
  });

  it('getSyncSettings: GET /profile/syncSettings', async () => {
    for (const settings of [await v4.settings.getSyncSettings(), await v6.settings.getSyncSettings()]) expect(settings.settings?.map((s) => s.dataType)).toContain('invoices');
  });

  it('updateSyncSettings: POST /profile/syncSettings', async () => {
    const setting = (hours: number) => [{ dataType: 'bills', syncSchedule: hours, fetchOnFirstLink: false, syncOrder: 0 }];
    await v4.settings.updateSyncSettings({ clientId: '00000000-0000-4000-8000-000000000000', settings: setting(36) as never, overridesDefaults: true });
    expect((await v6.settings.getSyncSettings()).settings?.find((s) => s.dataType === 'bills')?.syncSchedule).toBe(36);
    await v6.settings.updateSyncSettings({ clientId: '00000000-0000-4000-8000-000000000000', settings: setting(48) as never, overridesDefaults: true });
    expect((await v4.settings.getSyncSettings()).settings?.find((s) => s.dataType === 'bills')?.syncSchedule).toBe(48);
  });

  it('createApiKey: POST /apiKeys', async () => {
    expect(await v4.settings.createApiKey({ name: 'from v4' })).toMatchObject({ name: 'from v4', apiKey: expect.stringMatching(/^fy_/) });
    expect(await v6.settings.createApiKey({ name: 'from v6' })).toMatchObject({ name: 'from v6', apiKey: expect.stringMatching(/^fy_/) });
  });

  it('listApiKeys: GET /apiKeys (never a key)', async () => {
    for (const listed of [await v4.settings.listApiKeys(), await v6.settings.listApiKeys()]) {
      expect(listed.results?.map((k) => k?.name)).toEqual(expect.arrayContaining(['from v4', 'from v6']));
      expect(listed.results?.every((k) => k?.apiKey === undefined)).toBe(true);
    }
  });

  // Both majors' documents point this 204 at a JSON error body, which a 204 cannot carry
  // (HTTP; fetch gives a 204 no body whatever is sent), and list no other success: the key is
  // deleted and each SDK then reports its generic error. The earlier common SDK's document
  // had the 204 without a body, and that SDK takes it (docs/api.md).
  it('deleteApiKey: DELETE /apiKeys/{apiKeyId} deletes the key; both SDKs then report the 204 their documents mistype', async () => {
    const messages = [
      [v4, V4SDKError, 'Unexpected API response status or content-type: Status 204 Content-Type  Body '],
      [v6, V6SDKError, 'Unexpected Status or Content-Type: Status 204 Content-Type "". Body: ""'],
    ] as const;
    for (const [sdk, SdkError, message] of messages) {
      const made = await v6.settings.createApiKey({ name: 'doomed' });
      const err = await thrown(sdk.settings.deleteApiKey({ apiKeyId: made.id! }));
      expect(err).toBeInstanceOf(SdkError);
      expect(err?.statusCode).toBe(204);
      expect((err as Error).message).toBe(message);
      expect((await v6.settings.listApiKeys()).results?.map((k) => k?.id)).not.toContain(made.id);
    }
  });
});

describe('supplemental data and custom data types', () => {
  it('configure: PUT …/dataTypes/{dataType}/supplementalDataConfig', async () => {
    const config = (name: string) => ({ supplementalDataConfig: { [name]: { dataSource: '/invoices', pullData: { ref: '$[*].invoiceNumber' } } } });
    await v4.supplementalData.configure({ platformKey: 'gbol', dataType: 'invoices', supplementalDataConfiguration: config('four') });
    expect(await v6.supplementalData.getConfiguration({ platformKey: 'gbol', dataType: 'invoices' })).toEqual(config('four'));
    await v6.supplementalData.configure({ platformKey: 'gbol', dataType: 'invoices', supplementalDataConfiguration: config('six') });
    expect(await v4.supplementalData.getConfiguration({ platformKey: 'gbol', dataType: 'invoices' })).toEqual(config('six'));
  });

  it('getConfiguration: GET …/supplementalDataConfig', async () => {
    const [old, current] = [await v4.supplementalData.getConfiguration({ platformKey: 'gbol', dataType: 'customers' }), await v6.supplementalData.getConfiguration({ platformKey: 'gbol', dataType: 'customers' })];
    expect(old).toEqual({ supplementalDataConfig: {} });
    expect(current).toEqual({ supplementalDataConfig: {} });
  });

  const custom = { dataSource: '/customers', requiredData: { name: '$[*].customerName' }, keyBy: ['$[*].id'] };

  it('configure a custom data type: PUT …/dataTypes/custom/{customDataIdentifier}', async () => {
    expect(await v4.customDataType.configure({ platformKey: 'gbol', customDataIdentifier: 'names-four', customDataTypeConfiguration: custom })).toEqual(custom);
    expect(await v6.customDataType.configure({ platformKey: 'gbol', customDataIdentifier: 'names-six', customDataTypeConfiguration: custom })).toEqual(custom);
  });

  // Both documents type this answer as a page of records, so both SDKs read the configuration back as empty; the wire carries it.
  it('getConfiguration of a custom data type: GET …/dataTypes/custom/{customDataIdentifier}', async () => {
    await v6.customDataType.configure({ platformKey: 'gbol', customDataIdentifier: 'names', customDataTypeConfiguration: custom });
    await v4.customDataType.getConfiguration({ platformKey: 'gbol', customDataIdentifier: 'names' });
    await v6.customDataType.getConfiguration({ platformKey: 'gbol', customDataIdentifier: 'names' });
  });

  it('refresh a custom data type: POST …/data/queue/custom/{customDataIdentifier}', async () => {
    await v6.customDataType.configure({ platformKey: 'gbol', customDataIdentifier: 'names', customDataTypeConfiguration: custom });
    for (const sdk of [v4, v6] as const) {
      const pull = await sdk.customDataType.refresh({ ...ids(), customDataIdentifier: 'names' });
      expect(pull).toMatchObject({ dataType: 'custom/names' });
      await waitFor('the custom data synced', async () => (await v6.refreshData.getPullOperation({ companyId: linked.companyId, datasetId: pull.id })).status === 'Complete');
    }
  });

  it('list a custom data type\'s records: GET …/data/custom/{customDataIdentifier}', async () => {
    for (const sdk of [v4, v6] as const) expect((await sdk.customDataType.list({ ...ids(), customDataIdentifier: 'names' })).totalResults).toBeGreaterThan(0);
  });
});

describe('webhook consumers', () => {
  it('createConsumer: POST /webhooks', async () => {
    expect(await v4.webhooks.createConsumer({ url: 'https://four.example.com/hooks', eventTypes: ['company.created'] })).toMatchObject({ url: 'https://four.example.com/hooks', disabled: false });
    expect(await v6.webhooks.createConsumer({ url: 'https://six.example.com/hooks', eventTypes: ['company.created'] })).toMatchObject({ url: 'https://six.example.com/hooks', disabled: false });
  });

  it('listConsumers: GET /webhooks', async () => {
    for (const listed of [await v4.webhooks.listConsumers(), await v6.webhooks.listConsumers()]) {
      expect(listed.results?.map((c) => c.url)).toEqual(expect.arrayContaining(['https://four.example.com/hooks', 'https://six.example.com/hooks']));
    }
  });

  it('deleteConsumer: DELETE /webhooks/{webhookId}', async () => {
    for (const sdk of [v4, v6] as const) {
      const made = await v6.webhooks.createConsumer({ url: 'https://doomed.example.com/hooks', eventTypes: ['company.deleted'] });
      await sdk.webhooks.deleteConsumer({ webhookId: made.id! });
      expect((await v6.webhooks.listConsumers()).results?.map((c) => c.id)).not.toContain(made.id);
    }
  });
});
