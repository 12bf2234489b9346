// Tokens across authorization and sync, on fake clocks: an expired access token is
// refreshed at authorization and the rotated pair stored; syncs refresh before expiry;
// the legacy application's refresh ends in AuthError and a Deauthorized connection;
// rejected tokens leave the connection PendingAuth; and no token is ever seen in plain
// text in an API response or in what the service stores.
import { readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_ACCESS_TOKEN_TTL_SECONDS } from '../../src/sandbox/index.js';
import { readTokens } from '../../src/service/tokens.js';
import {
  ISO_Z, createClient, createTenant, linkedCompany, sandboxCall, type Api, type Tenant,
} from '../helpers/sync.js';
import { atRest } from '../helpers/at-rest.js';
import { type Harness, startTestStack } from '../helpers/stack.js';
import { integrationByKey } from '../../src/platforms/registry.js';

const PLATFORM = 'gbol'; // Xero: rotating refresh tokens, expiresAt in the token schema
const TTL = DEFAULT_ACCESS_TOKEN_TTL_SECONDS;

let h: Harness;
let api: Api;
/** Every token value handed out or stored during the file, for the final scan. */
const secrets = new Set<string>();

const remember = (tokens: Record<string, string> | undefined) => {
  for (const field of ['accessToken', 'refreshToken']) if (tokens?.[field]) secrets.add(tokens[field]);
};
const stored = async (connectionId: string) => {
  const tokens = await readTokens(h.service.context.store, h.service.context.sealer, connectionId);
  remember(tokens);
  return tokens;
};
const sealed = (connectionId: string) => h.service.context.store.loadSealedTokens(connectionId);

async function mint(tenant: Tenant, state: 'valid' | 'expired' | 'revoked'): Promise<Record<string, string>> {
  const result = await sandboxCall(h.sandboxUrl, 'POST', `/admin/tenants/${tenant.id}/tokens`, { state });
  expect(result.status).toBe(201);
  remember(result.body.tokens);
  return result.body.tokens;
}

async function newConnection(name: string): Promise<{ companyId: string; connectionId: string }> {
  const company = await api.call('POST', '/companies', { body: { name } });
  const connection = await api.call('POST', `/companies/${company.body.id}/connections`, { body: { platformKey: PLATFORM } });
  expect(connection.body.status).toBe('PendingAuth');
  return { companyId: company.body.id, connectionId: connection.body.id };
}

async function syncInvoices(companyId: string): Promise<any> {
  const queued = await api.call('POST', `/companies/${companyId}/data/queue/invoices`);
  expect(queued.status, queued.text).toBe(200);
  await h.drain();
  return (await api.call('GET', `/companies/${companyId}/data/history/${queued.body.id}`)).body;
}

beforeAll(async () => {
  h = await startTestStack('fake-clocks');
  const key = await createClient(h.api, h.adminKey, 'Tokens Ltd', 'Paid');
  api = { ...h.api, call: (method, path, options = {}) => h.api.call(method, path, { apiKey: key, ...options }) };
});
afterAll(async () => {
  await h?.stop();
});

describe('authorization', () => {
  it('stores valid tokens as given, and an expired access token refreshed, with the rotated pair', async () => {
    const tenant = await createTenant(h.sandboxUrl, PLATFORM, 20, 11);
    remember(tenant.tokens);
    const { companyId, connectionId } = await newConnection('Expired at link');
    const path = `/companies/${companyId}/connections/${connectionId}/authorization`;

    const valid = await api.call('PUT', path, { body: tenant.tokens });
    expect(valid.status, valid.text).toBe(200);
    const first = (await sealed(connectionId))!;
    expect(await stored(connectionId)).toMatchObject({ accessToken: tenant.tokens.accessToken, refreshToken: tenant.tokens.refreshToken });

    const expired = await mint(tenant, 'expired');
    expect(Date.parse(expired.expiresAt!)).toBeLessThan(h.clock.now().getTime());
    const result = await api.call('PUT', path, { body: expired });
    expect(result.status, result.text).toBe(200);
    expect(result.body.status).toBe('Linked');
    expect((await sealed(connectionId))!.equals(first)).toBe(false);
    const rotated = (await stored(connectionId))!;
    expect(rotated.accessToken).not.toBe(expired.accessToken);
    expect(rotated.refreshToken).not.toBe(expired.refreshToken);
    expect(Date.parse(rotated.expiresAt!)).toBe(h.clock.now().getTime() + TTL * 1000);
    // The rotated pair works: a sync completes without another refresh.
    expect((await syncInvoices(companyId)).status).toBe('Complete');
    expect(await stored(connectionId)).toEqual(rotated);
  });

  it.each([
    { case: 'a revoked grant', tokens: async (t: Tenant) => mint(t, 'revoked'), says: 'Xero said: The grant is revoked' },
    {
      case: 'tokens the platform never issued',
      tokens: async (t: Tenant) => ({ ...t.tokens, accessToken: 'at_forged_0000000000', refreshToken: 'rt_forged_0000000000' }),
      says: 'Xero said: The access token is not recognised by this platform.',
    },
  ])('rejects $case: 400 saying what the platform said, connection stays PendingAuth', async ({ tokens, says }) => {
    const tenant = await createTenant(h.sandboxUrl, PLATFORM, 5, 12);
    remember(tenant.tokens);
    const { companyId, connectionId } = await newConnection('Rejected');
    const result = await api.call('PUT', `/companies/${companyId}/connections/${connectionId}/authorization`, { body: await tokens(tenant) });
    expect(result.status, result.text).toBe(400);
    expect(result.body.error).toBe('Xero rejected the tokens.');
    expect(result.body.validation.errors).toEqual([{ itemId: 'tokens', message: expect.stringContaining(says), validatorName: 'PlatformVerification' }]);
    const connection = await api.call('GET', `/companies/${companyId}/connections/${connectionId}`);
    expect(connection.body).toMatchObject({ status: 'PendingAuth' });
    expect(connection.body).not.toHaveProperty('dataConnectionErrors');
    expect(connection.body).not.toHaveProperty('connectionInfo');
    expect(await sealed(connectionId)).toBeUndefined();
  });
});

describe('refresh during syncs', () => {
  it.each([
    { case: 'just before expiry (inside the refresh window)', advance: TTL - 120 },
    { case: 'after expiry', advance: TTL + 60 },
  ])('refreshes $case, rotates the stored pair, and completes', async ({ advance }) => {
    const { companyId, connectionId } = await linkedCompany(api, h.sandboxUrl, PLATFORM, 40, { seed: 13 });
    const before = (await stored(connectionId))!;
    h.clock.advance(advance);
    const pull = await syncInvoices(companyId);
    expect(pull, JSON.stringify(pull)).toMatchObject({ status: 'Complete', isErrored: false });
    const after = (await stored(connectionId))!;
    expect(after.accessToken).not.toBe(before.accessToken);
    expect(after.refreshToken).not.toBe(before.refreshToken);
    expect(Date.parse(after.expiresAt!)).toBe(h.clock.now().getTime() + TTL * 1000);
    const connection = await api.call('GET', `/companies/${companyId}/connections/${connectionId}`);
    expect(connection.body.status).toBe('Linked');
  });
});

describe('one refresh for many pulls', () => {
  it('POST /data/all after the access token expired: concurrent pulls share one refresh, all Complete', async () => {
    const { companyId, connectionId } = await linkedCompany(api, h.sandboxUrl, PLATFORM, 30, { seed: 15 });
    const before = (await stored(connectionId))!;
    h.clock.advance(TTL + 60);
    expect((await api.call('POST', `/companies/${companyId}/data/all`)).status).toBe(204);
    // The company's pulls run as one job, several at once; refresh tokens are single-use, so a second refresh with the same one would revoke the grant.
    expect((await h.sync({ concurrency: 4 })).pulls).toBe(integrationByKey(PLATFORM)!.dataTypes.length);
    await h.drain({ concurrency: 4 });
    const history = await api.call('GET', `/companies/${companyId}/data/history?pageSize=100`);
    const failed = (history.body.results as Array<{ dataType: string; status: string; errorMessage: string | null }>).filter((p) => p.status !== 'Complete');
    expect(failed).toEqual([]);
    const connection = await api.call('GET', `/companies/${companyId}/connections/${connectionId}`);
    expect(connection.body).toMatchObject({ status: 'Linked' });
    expect(connection.body).not.toHaveProperty('dataConnectionErrors');
    const after = (await stored(connectionId))!;
    expect(after.refreshToken).not.toBe(before.refreshToken);
    expect(Date.parse(after.expiresAt!)).toBe(h.clock.now().getTime() + TTL * 1000);
  });
});

describe('the legacy application still refreshing', () => {
  it.each([
    { case: 'after the service rotated the tokens', state: 'expired' as const, outcome: 'grant-revoked', advance: 0 },
    { case: 'before the service refreshed', state: 'valid' as const, outcome: 'rotated', advance: TTL + 60 },
  ])('$case: next sync is AuthError and the connection Deauthorized', async ({ state, outcome, advance }) => {
    const tenant = await createTenant(h.sandboxUrl, PLATFORM, 25, 14);
    remember(tenant.tokens);
    const tokens = await mint(tenant, state);
    const { companyId, connectionId } = await newConnection(`Legacy ${state}`);
    const linked = await api.call('PUT', `/companies/${companyId}/connections/${connectionId}/authorization`, { body: tokens });
    expect(linked.body.status, linked.text).toBe('Linked');

    const legacy = await sandboxCall(h.sandboxUrl, 'POST', `/admin/tenants/${tenant.id}/legacy-refresh`);
    expect(legacy.status).toBe(200);
    expect(legacy.body.outcome).toBe(outcome);
    h.clock.advance(advance);

    const pull = await syncInvoices(companyId);
    expect(pull).toMatchObject({ status: 'AuthError', isCompleted: true, isErrored: true });
    expect(pull.errorMessage).toMatch(/^Reauthorization required/);
    const connection = await api.call('GET', `/companies/${companyId}/connections/${connectionId}`);
    expect(connection.body.status).toBe('Deauthorized');
    expect(connection.body.dataConnectionErrors).toHaveLength(1);
    const [error] = connection.body.dataConnectionErrors;
    expect(Object.keys(error).sort()).toEqual(['statusCode', 'statusText', 'errorMessage', 'erroredOnUtc', 'status'].sort());
    expect(error).toMatchObject({ statusCode: '401', statusText: 'Unauthorized', status: 'Active' });
    expect(error.errorMessage).toMatch(/reauthoriz/i);
    expect(error.erroredOnUtc).toMatch(ISO_Z);
    expect(Date.parse(error.erroredOnUtc)).toBe(h.clock.now().getTime());
    // The data set never completed; no more pulls can be queued until reauthorization.
    expect((await api.call('GET', `/companies/${companyId}/data/invoices`)).status).toBe(409);
    expect((await api.call('POST', `/companies/${companyId}/data/queue/invoices`)).status).toBe(400);

    // Reauthorizing with fresh tokens clears the errors and syncs again.
    const fresh = await mint(tenant, 'valid');
    const again = await api.call('PUT', `/companies/${companyId}/connections/${connectionId}/authorization`, { body: fresh });
    expect(again.body).toMatchObject({ status: 'Linked' });
    expect(again.body).not.toHaveProperty('dataConnectionErrors');
    expect((await syncInvoices(companyId)).status).toBe('Complete');
    await stored(connectionId);
  });
});

describe('tokens at rest and on the wire', () => {
  it('no token value appears in any API response or in what the service stores', async () => {
    // Everything stored now is among the secrets too.
    const rows = await atRest(h).all<{ connection_id: string }>('SELECT connection_id FROM connection_tokens');
    expect(rows.length).toBeGreaterThanOrEqual(5);
    for (const row of rows) await stored(row.connection_id);
    expect(secrets.size).toBeGreaterThanOrEqual(20);

    // Also read the connection and company records once more, so their bodies are in the transcript.
    const companies = await api.call('GET', '/companies?pageSize=100');
    for (const company of companies.body.results) await api.call('GET', `/companies/${company.id}/connections`);

    if (!h.database) expect(readdirSync(h.dataDir)).toContain('ferry.db');
    const bytes = await atRest(h).bytes();
    // The scan does see plain text that is stored: a company name.
    expect(bytes.includes('Legacy expired')).toBe(true);
    const transcript = api.transcript.join('\n');
    expect(transcript).toContain('Legacy expired');
    const leaks = [...secrets].filter((secret) => bytes.includes(secret) || transcript.includes(secret));
    expect(leaks).toEqual([]);
  });
});
