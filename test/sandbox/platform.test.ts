import { statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { tokenFieldProblems } from '../../src/platforms/token-fields.js';
import { INTEGRATIONS, integrationByKey } from '../../src/platforms/registry.js';
import { CREDENTIAL_ROLES, credentialRoles, generateRecords, type Invoice } from '../../src/sandbox/index.js';
import { bearer } from './support.js';
import { type TestSandbox, startTestStack } from '../helpers/stack.js';

const ISO_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
const INVOICE_KEYS = ['id', 'invoiceNumber', 'customerRef', 'issueDate', 'dueDate', 'paidOnDate', 'currency', 'currencyRate', 'lineItems',
  'subTotal', 'totalTaxAmount', 'totalAmount', 'amountDue', 'status', 'note', 'metadata', 'modifiedDate', 'sourceModifiedDate'];
const LINE_KEYS = ['description', 'unitAmount', 'quantity', 'subTotal', 'taxAmount', 'totalAmount', 'accountRef', 'itemRef'];
const cents = (n: number) => Math.round(n * 100);
const twoDp = (n: number) => expect(Math.abs(n * 100 - Math.round(n * 100))).toBeLessThan(1e-6);

let sb: TestSandbox;
beforeAll(async () => {
  sb = await startTestStack('sandbox');
});
afterAll(async () => {
  await sb.stop();
});
beforeEach(async () => {
  await sb.call('PATCH', '/admin/settings', { body: { rateLimit: 0, faultRate: 0, latencyMs: 0, pushMode: 'sync', pushDelaySeconds: 5 } });
});

/** A Xero tenant and a GET helper with its access token. */
async function xero(extra: Record<string, unknown> = {}) {
  const [tenant] = await sb.tenants('gbol', extra);
  const t = tenant!;
  const get = (path: string, token = t.tokens.accessToken!) => sb.call('GET', `/platforms/gbol/tenants/${t.orgId}${path}`, { headers: bearer(token) });
  return { tenant: t, get };
}

describe('credential table', () => {
  it('names only real token fields, for real registry keys', () => {
    for (const [key, roles] of Object.entries(CREDENTIAL_ROLES)) {
      const integration = integrationByKey(key);
      expect(integration, key).toBeDefined();
      const names = integration!.tokenFields.map((f) => f.name);
      const named = [roles.access, roles.refresh, roles.tenant, roles.expiresAt, roles.refreshExpiresAt, ...(roles.fixed ?? []), ...Object.keys(roles.templates ?? {})];
      for (const name of named.filter(Boolean)) expect(names, `${key}.${name}`).toContain(name);
      // Something must authenticate data calls: an access field, or a refresh token that yields one.
      expect(roles.access ?? roles.refresh, key).toBeDefined();
    }
  });

  it('infers roles from conventional names for an integration added without a row', () => {
    const field = (name: string, required = true) => ({ name, required, description: name, example: `${name}_example` });
    const roles = credentialRoles({
      key: 'zzzz', name: 'New', sourceType: 'Accounting', migrationRoute: 'self-service', dataTypes: ['invoices'],
      tokenFields: [field('accessToken'), field('refreshToken'), field('ledgerId'), field('expiresAt', false)],
    });
    expect(roles).toEqual({ access: 'accessToken', refresh: 'refreshToken', expiresAt: 'expiresAt', tenant: 'ledgerId' });
  });

  it('issues every integration exactly its token fields, valid against the schema', async () => {
    for (const integration of INTEGRATIONS) {
      const [tenant] = await sb.tenants(integration.key, { invoices: 1 });
      expect(Object.keys(tenant!.tokens).sort(), integration.key).toEqual(integration.tokenFields.map((f) => f.name).sort());
      expect(tokenFieldProblems(integration.tokenFields, integration.name, tenant!.tokens), integration.key).toEqual([]);
      const roles = credentialRoles(integration);
      if (roles.tenant) expect(tenant!.tokens[roles.tenant]).toBe(tenant!.orgId);
      if (roles.expiresAt) expect(tenant!.tokens[roles.expiresAt]).toMatch(ISO_Z);
    }
  });
});

describe('generated data', () => {
  it('is a pure function of the seed', async () => {
    const a = await xero({ seed: 4242, invoices: 300 });
    const b = await xero({ seed: 4242, invoices: 300 });
    const c = await xero({ seed: 4243, invoices: 300 });
    for (const type of ['invoices', 'customers', 'payments', 'chartOfAccounts', 'journalEntries']) {
      const [ra, rb, rc] = await Promise.all([a.get(`/${type}?pageSize=50`), b.get(`/${type}?pageSize=50`), c.get(`/${type}?pageSize=50`)]);
      expect(ra.status).toBe(200);
      expect(ra.body.results).toEqual(rb.body.results);
      expect(ra.body.results).not.toEqual(rc.body.results);
    }
    expect(generateRecords({ seed: 4242, invoices: 300 }, 'invoices', 50, 50)).toEqual((await a.get('/invoices?pageSize=50&page=2')).body.results);
  });

  it('shapes invoices exactly as the API does, with consistent arithmetic and real customer refs', async () => {
    const { get } = await xero({ seed: 7, invoices: 1000 });
    const customers = (await get('/customers?pageSize=1000')).body.results as Array<{ id: string; customerName: string }>;
    const names = new Map(customers.map((c) => [c.id, c.customerName]));
    const page = await get('/invoices?pageSize=1000');
    expect(page.body.totalResults).toBe(1000);
    const invoices = page.body.results as Invoice[];
    const statuses = new Set<string>();
    for (const inv of invoices) {
      for (const key of Object.keys(inv)) expect(INVOICE_KEYS).toContain(key);
      for (const value of Object.values(inv)) expect(value).not.toBeNull();
      expect(names.get(inv.customerRef.id)).toBe(inv.customerRef.companyName);
      for (const stamp of [inv.issueDate, inv.dueDate, inv.modifiedDate, inv.sourceModifiedDate, inv.paidOnDate ?? inv.issueDate]) expect(stamp).toMatch(ISO_Z);
      expect(inv.lineItems.length).toBeGreaterThan(0);
      let sub = 0;
      let tax = 0;
      for (const line of inv.lineItems) {
        for (const key of Object.keys(line)) expect(LINE_KEYS).toContain(key);
        [line.unitAmount, line.subTotal, line.taxAmount, line.totalAmount].forEach(twoDp);
        expect(cents(line.subTotal)).toBe(cents(line.unitAmount) * line.quantity);
        expect(cents(line.totalAmount)).toBe(cents(line.subTotal) + cents(line.taxAmount));
        sub += cents(line.subTotal);
        tax += cents(line.taxAmount);
      }
      [inv.subTotal, inv.totalTaxAmount, inv.totalAmount, inv.amountDue].forEach(twoDp);
      expect(cents(inv.subTotal)).toBe(sub);
      expect(cents(inv.totalTaxAmount)).toBe(tax);
      expect(cents(inv.totalAmount)).toBe(sub + tax);
      expect(inv.amountDue).toBeGreaterThanOrEqual(0);
      expect(inv.amountDue).toBeLessThanOrEqual(inv.totalAmount);
      if (inv.status === 'Paid') {
        expect(inv.amountDue).toBe(0);
        expect(inv.paidOnDate).toMatch(ISO_Z);
      } else {
        expect(inv.paidOnDate).toBeUndefined();
      }
      if (inv.status === 'Submitted' || inv.status === 'Draft') expect(inv.amountDue).toBe(inv.totalAmount);
      if (inv.status === 'PartiallyPaid') expect(inv.amountDue).toBeLessThan(inv.totalAmount);
      expect(inv.metadata).toEqual({ isDeleted: false });
      expect(new Set(invoices.map((i) => i.id)).size).toBe(invoices.length);
      statuses.add(inv.status);
    }
    expect([...statuses].sort()).toEqual(['Draft', 'Paid', 'PartiallyPaid', 'Submitted', 'Void']);
  });

  it('pages the end of a million invoices quickly, holding nothing', async () => {
    const { get } = await xero({ seed: 99, invoices: 1_000_000 });
    const heapBefore = process.memoryUsage().heapUsed;
    const started = performance.now();
    const last = await get('/invoices?page=10000&pageSize=100');
    const elapsed = performance.now() - started;
    expect(last.status).toBe(200);
    expect(last.body.totalResults).toBe(1_000_000);
    expect(last.body.results).toHaveLength(100);
    expect(last.body.results[99].invoiceNumber).toBe('INV-1000000');
    expect(last.body.next).toBeUndefined();
    expect(elapsed).toBeLessThan(1000);
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(64 * 1024 * 1024);
    // Nothing per invoice is stored.
    expect(statSync(join(sb.dataDir, 'sandbox.db')).size).toBeLessThan(2 * 1024 * 1024);
    // The cursor walks on from any offset, whatever the page size.
    const first = await get('/invoices?pageSize=3');
    const second = await get(`/invoices?pageSize=2&cursor=${first.body.next}`);
    expect(second.body.results.map((r: Invoice) => r.invoiceNumber)).toEqual(['INV-000004', 'INV-000005']);
    expect((await get('/invoices?cursor=nonsense')).status).toBe(400);
    expect((await get('/invoices?pageSize=1001')).status).toBe(400);
  });
});

describe('errors', () => {
  it('answers 401 saying whether the token is unknown, expired or revoked', async () => {
    const { tenant, get } = await xero({ invoices: 5 });
    const missing = await sb.call('GET', `/platforms/gbol/tenants/${tenant.orgId}/invoices`);
    expect(missing.status).toBe(401);
    expect(missing.body.error).toBe('invalid_token');
    expect((await get('/invoices', 'at_not-a-token')).body.error).toBe('invalid_token');

    const mint = async (state: string) => (await sb.call('POST', `/admin/tenants/${tenant.id}/tokens`, { body: { state } })).body.tokens.accessToken as string;
    const expired = await get('/invoices', await mint('expired'));
    expect(expired.status).toBe(401);
    expect(expired.body.error).toBe('token_expired');
    expect(expired.headers.get('www-authenticate')).toContain('invalid_token');
    const revoked = await get('/invoices', await mint('revoked'));
    expect(revoked.status).toBe(401);
    expect(revoked.body.error).toBe('token_revoked');

    // Time passes: the access token expires after 30 minutes.
    expect((await get('/invoices')).status).toBe(200);
    sb.clock.advance(30 * 60);
    expect((await get('/invoices')).body.error).toBe('token_expired');
  });

  it('refuses another tenant, an unsupported data type and an unknown platform', async () => {
    const { tenant } = await xero({ invoices: 5 });
    const [other] = await sb.tenants('gbol', { invoices: 5 });
    const cross = await sb.call('GET', `/platforms/gbol/tenants/${other!.orgId}/invoices`, { headers: bearer(tenant.tokens.accessToken!) });
    expect(cross.status).toBe(403);

    const [clearBooks] = await sb.tenants('jhch', { invoices: 5 });
    const unsupported = await sb.call('GET', `/platforms/jhch/tenants/${clearBooks!.orgId}/journalEntries`, { headers: bearer(clearBooks!.tokens.accessToken!) });
    expect(unsupported.status).toBe(404);
    expect(unsupported.body.message).toBe('Datatype journalEntries not supported by platform(s) Clear Books');
    expect((await sb.call('GET', '/platforms/zzzz/tenants/x/invoices')).status).toBe(404);
  });

  it('rate-limits per tenant with Retry-After, and injects faults, both switchable at runtime', async () => {
    const { get } = await xero({ invoices: 5 });
    const { get: getOther } = await xero({ invoices: 5 });
    expect((await sb.call('PATCH', '/admin/settings', { body: { rateLimit: 2 } })).body.rateLimit).toBe(2);
    expect((await get('/invoices')).status).toBe(200);
    expect((await get('/invoices')).status).toBe(200);
    const limited = await get('/invoices');
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await getOther('/invoices')).status).toBe(200);
    sb.clock.advance(1);
    expect((await get('/invoices')).status).toBe(200);
    await sb.call('PATCH', '/admin/settings', { body: { rateLimit: 0 } });
    for (let i = 0; i < 5; i++) expect((await get('/invoices')).status).toBe(200);

    await sb.call('PATCH', '/admin/settings', { body: { faultRate: 1 } });
    for (let i = 0; i < 4; i++) expect([500, 503]).toContain((await get('/invoices')).status);
    await sb.call('PATCH', '/admin/settings', { body: { faultRate: 0, latencyMs: 30 } });
    const started = performance.now();
    expect((await get('/invoices')).status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(25);

    const bad = await sb.call('PATCH', '/admin/settings', { body: { faultRate: 2, colour: 'red' } });
    expect(bad.status).toBe(400);
    expect(bad.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(['colour', 'faultRate']);
  });
});

describe('OAuth', () => {
  it('rotates refresh tokens; reusing one revokes every token of the grant', async () => {
    const { tenant, get } = await xero({ invoices: 5 });
    const first = await sb.call('POST', '/platforms/gbol/oauth/token', { form: { grant_type: 'refresh_token', refresh_token: tenant.tokens.refreshToken! } });
    expect(first.status).toBe(200);
    expect(first.headers.get('cache-control')).toBe('no-store');
    expect(first.body).toMatchObject({ token_type: 'Bearer', expires_in: 1800 });
    expect(first.body.refresh_token).not.toBe(tenant.tokens.refreshToken);
    const second = await sb.call('POST', '/platforms/gbol/oauth/token', { body: { grant_type: 'refresh_token', refresh_token: first.body.refresh_token } });
    expect(second.status).toBe(200);
    expect((await get('/invoices', second.body.access_token)).status).toBe(200);

    const reuse = await sb.call('POST', '/platforms/gbol/oauth/token', { form: { grant_type: 'refresh_token', refresh_token: first.body.refresh_token } });
    expect(reuse.status).toBe(400);
    expect(reuse.body.error).toBe('invalid_grant');
    for (const token of [tenant.tokens.accessToken!, first.body.access_token, second.body.access_token]) {
      expect((await get('/invoices', token)).body.error).toBe('token_revoked');
    }
    const afterRevoke = await sb.call('POST', '/platforms/gbol/oauth/token', { form: { grant_type: 'refresh_token', refresh_token: second.body.refresh_token } });
    expect(afterRevoke.body.error).toBe('invalid_grant');
  });

  it('knows OAuth apps and their callback URLs, and checks client credentials when given', async () => {
    const created = await sb.call('POST', '/admin/apps', { body: { platform: 'gbol', name: 'Legacy app', callbackUrls: ['https://legacy.example.com/callback'] } });
    expect(created.status).toBe(201);
    const { clientId, clientSecret } = created.body;
    const ask = (url: string) => sb.call('GET', `/admin/apps/${clientId}?callbackUrl=${encodeURIComponent(url)}`);
    expect((await ask('https://legacy.example.com/callback')).body.callbackUrlRegistered).toBe(true);
    expect((await ask('https://ferry.example.com/callback')).body.callbackUrlRegistered).toBe(false);
    expect((await sb.call('POST', `/admin/apps/${clientId}/callbackUrls`, { body: { url: 'https://ferry.example.com/callback' } })).status).toBe(201);
    expect((await ask('https://ferry.example.com/callback')).body.callbackUrlRegistered).toBe(true);
    expect((await sb.call('GET', `/admin/apps/${clientId}/callbackUrls`)).body.results).toHaveLength(2);
    expect((await sb.call('POST', '/admin/apps', { body: { platform: 'gbol', callbackUrls: ['not a url'] } })).status).toBe(400);

    const [tenant] = await sb.tenants('gbol', { invoices: 1, clientId });
    const refresh = (form: Record<string, string>) => sb.call('POST', '/platforms/gbol/oauth/token', { form: { grant_type: 'refresh_token', refresh_token: tenant!.tokens.refreshToken!, ...form } });
    expect((await refresh({ client_id: clientId, client_secret: 'wrong' })).status).toBe(401);
    const basic = Buffer.from(`${clientId}:${clientSecret}`).toString('base64');
    const ok = await sb.call('POST', '/platforms/gbol/oauth/token', {
      form: { grant_type: 'refresh_token', refresh_token: tenant!.tokens.refreshToken! }, headers: { authorization: `Basic ${basic}` },
    });
    expect(ok.status).toBe(200);
  });

  it('removes an app\'s callback URL (DELETE ?url=), refusing an unknown app, a URL it lacks and a bad URL', async () => {
    const created = await sb.call('POST', '/admin/apps', { body: { platform: 'gbol', callbackUrls: ['https://a.example.com/cb', 'https://b.example.com/cb'] } });
    const { clientId } = created.body;
    const remove = (url: string, app = clientId) => sb.call('DELETE', `/admin/apps/${app}/callbackUrls?url=${encodeURIComponent(url)}`);
    // Normalised as when added: the host's case and an empty path do not matter.
    const removed = await remove('HTTPS://A.EXAMPLE.COM/cb');
    expect(removed.status).toBe(200);
    expect(removed.body.callbackUrls).toEqual(['https://b.example.com/cb']);
    expect((await sb.call('GET', `/admin/apps/${clientId}?callbackUrl=${encodeURIComponent('https://a.example.com/cb')}`)).body.callbackUrlRegistered).toBe(false);
    const again = await remove('https://a.example.com/cb');
    expect(again.status).toBe(404);
    expect(again.body.message).toContain('https://a.example.com/cb');
    expect((await remove('https://b.example.com/cb', 'NOSUCHAPP')).status).toBe(404);
    const bad = await remove('not a url');
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].field).toBe('url');
    expect((await sb.call('DELETE', `/admin/apps/${clientId}/callbackUrls`)).status).toBe(400);
    expect((await sb.call('GET', `/admin/apps/${clientId}/callbackUrls`)).body.results).toEqual(['https://b.example.com/cb']);
  });

  it('logs the legacy application refreshing, which revokes a grant the service has rotated', async () => {
    const { tenant } = await xero({ invoices: 1 });
    const before = sb.clock.now().toISOString();
    const rotated = await sb.call('POST', '/platforms/gbol/oauth/token', { form: { grant_type: 'refresh_token', refresh_token: tenant.tokens.refreshToken! } });
    sb.clock.advance(10);
    const legacy = await sb.call('POST', `/admin/tenants/${tenant.id}/legacy-refresh`);
    expect(legacy.status).toBe(200);
    expect(legacy.body.outcome).toBe('grant-revoked');
    const data = await sb.call('GET', `/platforms/gbol/tenants/${tenant.orgId}/invoices`, { headers: bearer(rotated.body.access_token) });
    expect(data.body.error).toBe('token_revoked');
    const log = await sb.call('GET', `/admin/tenants/${tenant.id}/legacy-refreshes?since=${encodeURIComponent(before)}`);
    expect(log.body.results).toEqual([{ at: legacy.body.at, outcome: 'grant-revoked' }]);
    sb.clock.advance(10);
    expect((await sb.call('GET', `/admin/tenants/${tenant.id}/legacy-refreshes?since=${sb.clock.now().toISOString()}`)).body.results).toEqual([]);

    // Before the service rotates, the legacy app rotates the token away from it instead.
    const [fresh] = await sb.tenants('gbol', { invoices: 1 });
    expect((await sb.call('POST', `/admin/tenants/${fresh!.id}/legacy-refresh`)).body.outcome).toBe('rotated');
    const late = await sb.call('POST', '/platforms/gbol/oauth/token', { form: { grant_type: 'refresh_token', refresh_token: fresh!.tokens.refreshToken! } });
    expect(late.body.error).toBe('invalid_grant');
  });
});

describe('push', () => {
  const invoice = (customerId: string, extra: Record<string, unknown> = {}) => ({
    customerRef: { id: customerId }, issueDate: '2026-11-01T00:00:00Z', status: 'Submitted',
    subTotal: 100, totalTaxAmount: 20, totalAmount: 120, amountDue: 120, ...extra,
  });

  it('creates at once (200), refuses invalid records (400), and lists pushed records after generated ones', async () => {
    const { tenant, get } = await xero({ invoices: 3 });
    const customerId = (await get('/customers?pageSize=1')).body.results[0].id as string;
    const post = (body: unknown) => sb.call('POST', `/platforms/gbol/tenants/${tenant.orgId}/invoices`, { body, headers: bearer(tenant.tokens.accessToken!) });
    const created = await post(invoice(customerId, { id: 'ignored' }));
    expect(created.status).toBe(200);
    expect(created.body.id).not.toBe('ignored');
    expect(created.body.modifiedDate).toMatch(ISO_Z);
    const listed = await get('/invoices');
    expect(listed.body.totalResults).toBe(4);
    expect(listed.body.results[3]).toEqual(created.body);

    const noCustomer = await post(invoice(customerId, { customerRef: undefined, totalAmount: -5 }));
    expect(noCustomer.status).toBe(400);
    expect(noCustomer.body.error).toBe('validation_failed');
    expect(noCustomer.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(['customerRef.id', 'totalAmount']);
    expect((await post(invoice('no-such-customer'))).body.errors[0].field).toBe('customerRef.id');
    const taxRate = await sb.call('POST', `/platforms/gbol/tenants/${tenant.orgId}/taxRates`, { body: { name: 'x' }, headers: bearer(tenant.tokens.accessToken!) });
    expect(taxRate.status).toBe(405);
  });

  it('answers 202 when async and settles by the clock: Success, or Failed with errors', async () => {
    const { tenant, get } = await xero({ invoices: 3 });
    const customerId = (await get('/customers?pageSize=1')).body.results[0].id as string;
    const post = (body: unknown, headers: Record<string, string> = {}) =>
      sb.call('POST', `/platforms/gbol/tenants/${tenant.orgId}/invoices`, { body, headers: { ...bearer(tenant.tokens.accessToken!), ...headers } });

    const preferred = await post(invoice(customerId), { prefer: 'respond-async' });
    expect(preferred.status).toBe(202);
    await sb.call('PATCH', '/admin/settings', { body: { pushMode: 'async', pushDelaySeconds: 30 } });
    const good = await post(invoice(customerId));
    const bad = await post(invoice(customerId, { amountDue: -1 }));
    expect(good.status).toBe(202);
    expect(good.body.status).toBe('Pending');
    const status = (push: Result) => get(push.headers.get('location')!.replace(`/platforms/gbol/tenants/${tenant.orgId}`, ''));
    expect((await status(good)).body.status).toBe('Pending');
    sb.clock.advance(30);
    const done = await status(good);
    expect(done.body.status).toBe('Success');
    expect(done.body.completedOn).toMatch(ISO_Z);
    expect(done.body.record.customerRef.id).toBe(customerId);
    const failed = await status(bad);
    expect(failed.body.status).toBe('Failed');
    expect(failed.body.errors).toEqual([{ field: 'amountDue', message: 'amountDue must not be negative.' }]);
    // The push nobody polled settled too: the platform's queue does not wait to be asked.
    expect((await get('/invoices')).body.totalResults).toBe(5);
    expect((await status(preferred)).body.status).toBe('Success');
  });
});

describe('restart', () => {
  it('keeps apps, tenants and tokens as they were', async () => {
    const own = await startTestStack('sandbox');
    try {
      const [tenant] = await own.tenants('qhyg', { invoices: 10, seed: 5 });
      const path = `/platforms/qhyg/tenants/${tenant!.orgId}/invoices`;
      const before = await own.call('GET', path, { headers: bearer(tenant!.tokens.accessToken!) });
      await own.restart();
      const after = await own.call('GET', path, { headers: bearer(tenant!.tokens.accessToken!) });
      expect(after.status).toBe(200);
      expect(after.body).toEqual(before.body);
      const refreshed = await own.call('POST', '/platforms/qhyg/oauth/token', { form: { grant_type: 'refresh_token', refresh_token: tenant!.tokens.refreshToken! } });
      expect(refreshed.status).toBe(200);
      expect((await own.call('GET', '/admin/tenants?platform=qhyg')).body.results).toHaveLength(1);
    } finally {
      await own.stop();
    }
  });
});

type Result = Awaited<ReturnType<TestSandbox['call']>>;
