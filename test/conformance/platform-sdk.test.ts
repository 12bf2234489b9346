// The official platform SDK (@codat/platform, from the npm registry) against a real
// `ferry serve` on 127.0.0.1, with the SDK's response validation on: every operation ferry
// serves succeeds through it, or fails with the typed error the public API documents.
// docs/api.md lists each public operation and its state here.
import { CodatPlatform } from '@codat/platform';
import { ErrorMessage, SDKError } from '@codat/platform/sdk/models/errors/index.js';
import { describe, expect, it } from 'vitest';
import { basic } from '../helpers/service.js';
import type { ServeHandle } from '../helpers/stack.js';
import { createTenant, linkedCompany, sampleInvoice, waitFor, type Linked } from '../helpers/sync.js';
import { sdkTarget } from './sdk-target.js';

let stack: ServeHandle;
let sdk: CodatPlatform;
let linked: Linked;
let key: string;

sdkTarget({ client: 'SDK Conformance Ltd', linked: 'SDK Linked Ltd' }, { invoices: 5 }, async (target) => {
  ({ stack, key, linked } = target);
  sdk = new CodatPlatform({ authHeader: basic(key), serverURL: stack.baseUrl, retryConfig: { strategy: 'none' } });
});

const auth = () => ({ authorization: basic(key) });

/** The error the SDK raises for a status the public API documents for the operation (typed ErrorMessage). */
async function documentedError(call: Promise<unknown>): Promise<ErrorMessage> {
  const err = await call.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(ErrorMessage);
  return err as ErrorMessage;
}

/** A 400 where the public API documents none for the operation: the SDK's generic error, with the status. */
async function undocumented400(call: Promise<unknown>): Promise<void> {
  const err = await call.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(SDKError);
  expect((err as SDKError).statusCode).toBe(400);
}

describe('companies', () => {
  it('create, list, get, update, replace, delete', async () => {
    const created = await sdk.companies.create({ name: 'SDK Company', description: 'made by the SDK', tags: { region: 'uk' } });
    expect(created).toMatchObject({ name: 'SDK Company', description: 'made by the SDK', tags: { region: 'uk' } });
    const list = await sdk.companies.list({ tags: 'region=uk' });
    expect(list.results?.map((c) => c.id)).toContain(created.id);
    expect(await sdk.companies.get({ companyId: created.id })).toMatchObject({ id: created.id });
    expect(await sdk.companies.update({ companyId: created.id, companyUpdateRequest: { name: 'SDK Updated' } })).toMatchObject({ name: 'SDK Updated', tags: { region: 'uk' } });
    expect(await sdk.companies.replace({ companyId: created.id, companyRequestBody: { name: 'SDK Replaced' } })).toMatchObject({ name: 'SDK Replaced' });
    await sdk.companies.delete({ companyId: created.id });
    expect((await documentedError(sdk.companies.get({ companyId: created.id }))).statusCode).toBe(404);
  });

  it('products: add, refresh, remove; a product not enabled cannot be refreshed', async () => {
    const company = await sdk.companies.create({ name: 'SDK Products' });
    await sdk.companies.addProduct({ companyId: company.id, productIdentifier: 'bank-feeds' });
    expect((await sdk.companies.get({ companyId: company.id })).products).toEqual(['bank-feeds']);
    await sdk.companies.refreshProductData({ companyId: company.id, productIdentifier: 'bank-feeds' });
    await sdk.companies.removeProduct({ companyId: company.id, productIdentifier: 'bank-feeds' });
    expect((await sdk.companies.get({ companyId: company.id })).products).toEqual([]);
    expect((await documentedError(sdk.companies.refreshProductData({ companyId: company.id, productIdentifier: 'bank-feeds' }))).statusCode).toBe(400);
  });

  it('the company access token, and its old path', async () => {
    const token = await sdk.companies.getAccessToken({ companyId: linked.companyId });
    expect(token).toMatchObject({ expiresIn: 86_400, tokenType: 'Bearer' });
    expect(token.accessToken.length).toBeGreaterThan(40);
    const old = await sdk.connectionManagement.get({ companyId: linked.companyId });
    expect(old.accessToken).toEqual(expect.any(String));
  });

  it('sync settings: set answers 204 with no body, and reads back', async () => {
    await sdk.companies.setCompanySyncSettings({ companyId: linked.companyId, requestBody: { companyId: linked.companyId, settings: [{ dataType: 'invoices', syncSchedule: 24, fetchOnFirstLink: true, syncOrder: 0, isLocked: false }] } });
    const settings = await sdk.companies.getCompanySyncSettings({ companyId: linked.companyId });
    expect(settings.settings?.find((s) => s.dataType === 'invoices')).toMatchObject({ syncSchedule: 24, fetchOnFirstLink: true });
  });
});

describe('connections', () => {
  it('list, get, create, unlink, delete', async () => {
    expect((await sdk.connections.list({ companyId: linked.companyId })).results?.map((c) => c.id)).toEqual([linked.connectionId]);
    expect(await sdk.connections.get({ companyId: linked.companyId, connectionId: linked.connectionId })).toMatchObject({ status: 'Linked', integrationKey: 'gbol' });
    const company = await sdk.companies.create({ name: 'SDK Connections' });
    const connection = await sdk.connections.create({ companyId: company.id, requestBody: { platformKey: 'gbol' } });
    expect(connection).toMatchObject({ status: 'PendingAuth', integrationKey: 'gbol' });
    const other = await linkedCompany(stack.api, stack.sandboxUrl, 'gbol', 1, { apiKey: key, name: 'SDK Unlink Ltd' });
    expect(await sdk.connections.unlink({ companyId: other.companyId, connectionId: other.connectionId, updateConnectionStatus: { status: 'Unlinked' } })).toMatchObject({ status: 'Unlinked' });
    await sdk.connections.delete({ companyId: company.id, connectionId: connection.id });
    expect((await documentedError(sdk.connections.get({ companyId: company.id, connectionId: connection.id }))).statusCode).toBe(404);
  });
});

describe('integrations', () => {
  it('list and get carry the required logoUrl and enabled; branding names its images, which are served', async () => {
    const list = await sdk.integrations.list({ pageSize: 5000 });
    expect(list.results?.length).toBeGreaterThan(5);
    const xero = await sdk.integrations.get({ platformKey: 'gbol' });
    expect(xero).toMatchObject({ key: 'gbol', name: 'Xero', enabled: true, sourceType: 'Accounting' });
    const branding = await sdk.integrations.getBranding({ platformKey: 'gbol' });
    const src = branding.logo?.full?.image?.src ?? '';
    expect(src).toBe(xero.logoUrl);
    const image = await fetch(src);
    expect(image.status).toBe(200);
    expect(image.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
    expect(await image.text()).toMatch(/^<svg [^>]*aria-label="Xero"/);
  });
});

describe('settings', () => {
  it('profile: get and update', async () => {
    const updated = await sdk.settings.updateProfile({ name: 'SDK Conformance Ltd', redirectUrl: 'https://app.example.com/link/{companyId}', whiteListUrls: ['https://app.example.com'], confirmCompanyName: true });
    expect(updated).toMatchObject({ redirectUrl: 'https://app.example.com/link/{companyId}', confirmCompanyName: true });
    expect(await sdk.settings.getProfile()).toMatchObject({ name: 'SDK Conformance Ltd', whiteListUrls: ['https://app.example.com'] });
    await undocumented400(sdk.settings.updateProfile({ name: '', redirectUrl: 'not a url' }));
  });

  it('profile sync settings: set answers 204 with no body, and reads back', async () => {
    await sdk.settings.updateSyncSettings({ clientId: '00000000-0000-4000-8000-000000000000', settings: [{ dataType: 'bills', syncSchedule: 48, fetchOnFirstLink: false, syncOrder: 0, isLocked: false }], overridesDefaults: true });
    const read = await sdk.settings.getSyncSettings();
    expect(read.settings?.find((s) => s.dataType === 'bills')).toMatchObject({ syncSchedule: 48 });
  });

  it('API keys: create (shown once), list (never the key), delete', async () => {
    const created = await sdk.settings.createApiKey({ name: 'ci pipeline' });
    expect(created).toMatchObject({ name: 'ci pipeline', apiKey: expect.stringMatching(/^fy_/) });
    const listed = await sdk.settings.listApiKeys();
    const mine = listed.results?.find((k) => k?.id === created.id);
    expect(mine).toMatchObject({ name: 'ci pipeline' });
    expect(mine?.apiKey).toBeUndefined();
    // The SDK expects a JSON body on this 204 (its document points the 204 at an error
    // response); HTTP gives a 204 no body, so the SDK reports an error although the key is gone.
    const deleted = await sdk.settings.deleteApiKey({ apiKeyId: created.id! }).then(() => undefined, (e: unknown) => e);
    expect(deleted).toBeInstanceOf(SDKError);
    expect((deleted as SDKError).statusCode).toBe(204);
    expect((await sdk.settings.listApiKeys()).results?.map((k) => k?.id)).not.toContain(created.id);
    const refused = await fetch(`${stack.baseUrl}/profile`, { headers: { authorization: `Basic ${Buffer.from(created.apiKey!).toString('base64')}` } });
    expect(refused.status).toBe(403); // a revoked key, as the admin revoke answers
  });

  it('CORS settings: set and get, and the old path answers the same', async () => {
    expect(await sdk.cors.set({ allowedOrigins: ['https://app.example.com'] })).toEqual({ allowedOrigins: ['https://app.example.com'] });
    expect(await sdk.cors.get()).toEqual({ allowedOrigins: ['https://app.example.com'] });
    await undocumented400(sdk.cors.set({ allowedOrigins: ['https://app.example.com/path'] }));
  });
});

describe('refresh data and push operations', () => {
  it('all, by data type, data status, pull operations', async () => {
    await sdk.refreshData.all({ companyId: linked.companyId });
    const pull = await sdk.refreshData.byDataType({ companyId: linked.companyId, dataType: 'invoices' });
    expect(pull).toMatchObject({ companyId: linked.companyId, dataType: 'invoices' });
    const status = await sdk.refreshData.get({ companyId: linked.companyId });
    expect(status.invoices?.latestSyncId).toEqual(expect.any(String));
    const pulls = await sdk.refreshData.listPullOperations({ companyId: linked.companyId });
    expect(pulls.results?.length).toBeGreaterThan(0);
    expect(await sdk.refreshData.getPullOperation({ companyId: linked.companyId, datasetId: pull.id })).toMatchObject({ id: pull.id });
  });

  it('push options: what a push accepts, and the checks before a push require exactly the fields it marks required', async () => {
    const options = await sdk.pushData.getModelOptions({ companyId: linked.companyId, connectionId: linked.connectionId, dataType: 'invoices' });
    expect(options).toMatchObject({ type: 'Object', displayName: 'Invoices', required: true });
    const required = Object.entries(options.properties ?? {}).filter(([, f]) => f.required).map(([name]) => name).sort();
    expect(required).toEqual(['customerRef', 'issueDate', 'lineItems']);
    expect(options.properties?.customerRef?.properties?.id).toMatchObject({ type: 'String', required: true });
    const empty = await fetch(`${stack.baseUrl}/companies/${linked.companyId}/connections/${linked.connectionId}/push/invoices`, {
      method: 'POST', headers: { authorization: `Basic ${Buffer.from(key).toString('base64')}`, 'content-type': 'application/json' }, body: '{}',
    });
    expect(empty.status).toBe(400);
    const items = ((await empty.json()) as { validation: { errors: Array<{ itemId: string }> } }).validation.errors.map((e) => e.itemId.replace(/\..*$/, '')).sort();
    expect(items).toEqual(required);
    const customers = await sdk.pushData.getModelOptions({ companyId: linked.companyId, connectionId: linked.connectionId, dataType: 'customers' });
    expect(customers.properties?.customerName).toMatchObject({ type: 'String', required: true });
  });

  it('push operations: list, and get one', async () => {
    const operations = await sdk.pushData.listOperations({ companyId: linked.companyId });
    expect(operations.results).toEqual([]);
    // The customers the invoice names come from the sync queued above; wait until it is readable.
    const [customer] = await waitFor('customers synced', async () => {
      const page = await fetch(`${stack.baseUrl}/companies/${linked.companyId}/data/customers?pageSize=1`, { headers: auth() });
      return page.status === 200 && ((await page.json()) as { results: Array<{ id: string }> }).results;
    });
    const pushed = await fetch(`${stack.baseUrl}/companies/${linked.companyId}/connections/${linked.connectionId}/push/invoices`, {
      method: 'POST', headers: { ...auth(), 'content-type': 'application/json' }, body: JSON.stringify(sampleInvoice(customer!.id)),
    });
    const { pushOperationKey } = (await pushed.json()) as { pushOperationKey: string };
    expect(await sdk.pushData.getOperation({ companyId: linked.companyId, pushOperationKey })).toMatchObject({ pushOperationKey, status: 'Success', dataType: 'invoices' });
  });
});

describe('token migration, supplemental data, custom data types, validation results', () => {
  it('update authorization: a connection is Linked with the tokens the client already holds', async () => {
    const tenant = await createTenant(stack.sandboxUrl, 'gbol', 2, 77);
    const company = await sdk.companies.create({ name: 'SDK Migrated Ltd' });
    const connection = await sdk.connections.create({ companyId: company.id, requestBody: { platformKey: 'gbol' } });
    const linkedNow = await sdk.connections.updateAuthorization({ companyId: company.id, connectionId: connection.id, requestBody: tenant.tokens });
    expect(linkedNow).toMatchObject({ id: connection.id, status: 'Linked' });
    expect((await documentedError(sdk.connections.updateAuthorization({ companyId: company.id, connectionId: '00000000-0000-4000-8000-000000000000', requestBody: tenant.tokens }))).statusCode).toBe(404);
  });

  it.each(['invoices', 'customers'] as const)('supplemental data of %s: configure, read back, and the next sync adds it', async (dataType) => {
    const config = { supplementalDataConfig: { extras: { dataSource: `/${dataType}`, pullData: { modified: '$[*].sourceModifiedDate' } } } };
    await sdk.supplementalData.configure({ platformKey: 'gbol', dataType, supplementalDataConfiguration: config });
    expect(await sdk.supplementalData.getConfiguration({ platformKey: 'gbol', dataType })).toEqual(config);
    const pull = await sdk.refreshData.byDataType({ companyId: linked.companyId, dataType });
    await waitFor(`${dataType} synced`, async () => (await sdk.refreshData.getPullOperation({ companyId: linked.companyId, datasetId: pull.id })).status === 'Complete');
    const page = (await (await fetch(`${stack.baseUrl}/companies/${linked.companyId}/data/${dataType}?pageSize=1`, { headers: auth() })).json()) as { results: Array<Record<string, any>> };
    const [record] = page.results;
    expect(record!.supplementalData).toEqual({ content: { extras: { modified: record!.sourceModifiedDate } } });
  });

  it('custom data type: configure, read the configuration, refresh, list its records', async () => {
    const configuration = { dataSource: '/customers', requiredData: { name: '$[*].customerName' }, keyBy: ['$[*].id'] };
    expect(await sdk.customDataType.configure({ platformKey: 'gbol', customDataIdentifier: 'contact-names', customDataTypeConfiguration: configuration })).toEqual(configuration);
    // The SDK types this answer as a page of records (its document's mistake); the configuration comes over the wire as it was stored.
    await sdk.customDataType.getConfiguration({ platformKey: 'gbol', customDataIdentifier: 'contact-names' });
    const pull = await sdk.customDataType.refresh({ companyId: linked.companyId, connectionId: linked.connectionId, customDataIdentifier: 'contact-names' });
    expect(pull).toMatchObject({ dataType: 'custom/contact-names' });
    await waitFor('custom data synced', async () => (await sdk.refreshData.getPullOperation({ companyId: linked.companyId, datasetId: pull.id })).status === 'Complete');
    const records = await sdk.customDataType.list({ companyId: linked.companyId, connectionId: linked.connectionId, customDataIdentifier: 'contact-names' });
    expect(records.totalResults).toBeGreaterThan(0);
    expect(records.results?.[0]).toMatchObject({ id: expect.any(String), content: { name: {} }, modifiedDate: { modifiedDate: expect.any(String) } });
    // The SDK's schema for a content entry is an object with no fields, so it keeps none of
    // them: the values are read over the wire, each carried as { value }.
    const wire = (await (await fetch(`${stack.baseUrl}/companies/${linked.companyId}/connections/${linked.connectionId}/data/custom/contact-names`, { headers: auth() })).json()) as { results: Array<{ content: { name: { value: unknown } } }> };
    expect(wire.results[0]!.content.name.value).toEqual(expect.any(String));
  });

  it('validation results of a pull', async () => {
    const pull = await sdk.refreshData.byDataType({ companyId: linked.companyId, dataType: 'bills' });
    await waitFor('bills synced', async () => (await sdk.refreshData.getPullOperation({ companyId: linked.companyId, datasetId: pull.id })).status === 'Complete');
    expect(await sdk.readData.getValidationResults({ companyId: linked.companyId, datasetId: pull.id })).toEqual({ errors: [], warnings: [] });
    expect((await documentedError(sdk.readData.getValidationResults({ companyId: linked.companyId, datasetId: '00000000-0000-4000-8000-000000000000' }))).statusCode).toBe(404);
  });
});
