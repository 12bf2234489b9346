// Authentication and accounts over real HTTP: 401/403/402/404 conditions, the admin's
// X-Client-Id, key revocation, and the admin.key / secret.key files of a data dir.
import { readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { atRest } from '../helpers/at-rest.js';
import { basic, tempDir } from '../helpers/service.js';
import { createCompany, createConnection, daysAgo, expectErrorBody, EXPIRED_402, FORBIDDEN, JSON_TYPE } from './support.js';
import { type TestService, startTestStack } from '../helpers/stack.js';

interface Account {
  id: string;
  apiKey: string;
}

interface Fixture {
  adminKey: string;
  alice: Account;
  bob: Account;
  expired: Account;
  oldPaid: Account;
  revokedKey: string;
  aliceCompany: string;
  aliceConnection: string;
}

interface Request {
  method: string;
  path: string;
  /** undefined: the admin key; null: no Authorization header. */
  apiKey?: string | null;
  headers?: Record<string, string>;
  body?: unknown;
}

interface Scenario {
  name: string;
  request: (f: Fixture) => Request;
  status: number;
  /** Exact `error` text of an error response. */
  error?: string | ((f: Fixture) => string);
}

const ADMIN_ONLY = 'This endpoint is restricted to administrators.';
const CLIENT_HEADER = 'Only an administrator key may act for a client with X-Client-Id.';
const UNAUTHORIZED = 'Unauthorized. The API key is missing, malformed or not recognised.';
const UNKNOWN_CLIENT = '7b0c1d6e-0000-4000-8000-000000000000';

/** An Authorization header sent as is (no key from the fixture). */
const rawAuth = (authorization: string): Pick<Request, 'apiKey' | 'headers'> => ({ apiKey: null, headers: { authorization } });

const scenarios: Scenario[] = [
  // 401: no usable key.
  { name: 'missing Authorization header', request: () => ({ method: 'GET', path: '/companies', apiKey: null }), status: 401, error: UNAUTHORIZED },
  { name: 'Basic without credentials', request: () => ({ method: 'GET', path: '/companies', ...rawAuth('Basic') }), status: 401, error: UNAUTHORIZED },
  { name: 'Basic with non-base64 text', request: () => ({ method: 'GET', path: '/companies', ...rawAuth('Basic !!not base64!!') }), status: 401, error: UNAUTHORIZED },
  { name: 'Basic with a control-character key', request: () => ({ method: 'GET', path: '/companies', ...rawAuth(`Basic ${Buffer.from('\u0001\u0002').toString('base64')}`) }), status: 401, error: UNAUTHORIZED },
  { name: 'Bearer scheme with a valid key', request: (f) => ({ method: 'GET', path: '/companies', ...rawAuth(`Bearer ${f.alice.apiKey}`) }), status: 401, error: UNAUTHORIZED },
  { name: 'raw key without a scheme', request: (f) => ({ method: 'GET', path: '/companies', ...rawAuth(f.alice.apiKey) }), status: 401, error: UNAUTHORIZED },
  { name: 'unknown key', request: () => ({ method: 'GET', path: '/companies', apiKey: 'fy_not_a_key_anyone_has' }), status: 401, error: UNAUTHORIZED },
  { name: 'unknown key on an unknown route', request: () => ({ method: 'GET', path: '/nowhere', apiKey: 'fy_not_a_key_anyone_has' }), status: 401, error: UNAUTHORIZED },

  // Accepted header forms.
  { name: 'curl -u KEY: form (trailing colon)', request: (f) => ({ method: 'GET', path: '/companies', ...rawAuth(basic(`${f.alice.apiKey}:`)) }), status: 200 },
  { name: 'lower-case scheme name', request: (f) => ({ method: 'GET', path: '/companies', ...rawAuth(`basic ${Buffer.from(f.alice.apiKey).toString('base64')}`) }), status: 200 },

  // 403: outdated key, someone else's resource.
  { name: 'revoked key', request: (f) => ({ method: 'GET', path: '/companies', apiKey: f.revokedKey }), status: 403, error: FORBIDDEN },
  { name: 'revoked key on an admin endpoint', request: (f) => ({ method: 'GET', path: '/admin/clients', apiKey: f.revokedKey }), status: 403, error: FORBIDDEN },
  { name: "GET another client's company", request: (f) => ({ method: 'GET', path: `/companies/${f.aliceCompany}`, apiKey: f.bob.apiKey }), status: 403, error: FORBIDDEN },
  { name: "PATCH another client's company", request: (f) => ({ method: 'PATCH', path: `/companies/${f.aliceCompany}`, apiKey: f.bob.apiKey, body: { description: 'mine now' } }), status: 403, error: FORBIDDEN },
  { name: "PUT another client's company", request: (f) => ({ method: 'PUT', path: `/companies/${f.aliceCompany}`, apiKey: f.bob.apiKey, body: { name: 'Mine' } }), status: 403, error: FORBIDDEN },
  { name: "DELETE another client's company", request: (f) => ({ method: 'DELETE', path: `/companies/${f.aliceCompany}`, apiKey: f.bob.apiKey }), status: 403, error: FORBIDDEN },
  { name: "list another client's connections", request: (f) => ({ method: 'GET', path: `/companies/${f.aliceCompany}/connections`, apiKey: f.bob.apiKey }), status: 403, error: FORBIDDEN },
  { name: "create a connection on another client's company", request: (f) => ({ method: 'POST', path: `/companies/${f.aliceCompany}/connections`, apiKey: f.bob.apiKey, body: { platformKey: 'gbol' } }), status: 403, error: FORBIDDEN },
  { name: "GET another client's connection", request: (f) => ({ method: 'GET', path: `/companies/${f.aliceCompany}/connections/${f.aliceConnection}`, apiKey: f.bob.apiKey }), status: 403, error: FORBIDDEN },
  { name: "authorize another client's connection", request: (f) => ({ method: 'PUT', path: `/companies/${f.aliceCompany}/connections/${f.aliceConnection}/authorization`, apiKey: f.bob.apiKey, body: { accessToken: 'a', refreshToken: 'r', tenantId: 't' } }), status: 403, error: FORBIDDEN },
  { name: "unlink another client's connection", request: (f) => ({ method: 'PATCH', path: `/companies/${f.aliceCompany}/connections/${f.aliceConnection}`, apiKey: f.bob.apiKey, body: { status: 'Unlinked' } }), status: 403, error: FORBIDDEN },
  { name: "DELETE another client's connection", request: (f) => ({ method: 'DELETE', path: `/companies/${f.aliceCompany}/connections/${f.aliceConnection}`, apiKey: f.bob.apiKey }), status: 403, error: FORBIDDEN },

  // 403: admin-only endpoints for a client key.
  { name: 'client key: GET /admin/clients', request: (f) => ({ method: 'GET', path: '/admin/clients', apiKey: f.alice.apiKey }), status: 403, error: ADMIN_ONLY },
  { name: 'client key: POST /admin/clients', request: (f) => ({ method: 'POST', path: '/admin/clients', apiKey: f.alice.apiKey, body: { name: 'Sneaky', plan: 'Paid' } }), status: 403, error: ADMIN_ONLY },
  { name: 'client key: GET its own /admin/clients/{id}', request: (f) => ({ method: 'GET', path: `/admin/clients/${f.alice.id}`, apiKey: f.alice.apiKey }), status: 403, error: ADMIN_ONLY },
  { name: 'client key: GET /admin/clients/{id}/apiKeys', request: (f) => ({ method: 'GET', path: `/admin/clients/${f.alice.id}/apiKeys`, apiKey: f.alice.apiKey }), status: 403, error: ADMIN_ONLY },
  { name: 'client key: POST /admin/clients/{id}/apiKeys', request: (f) => ({ method: 'POST', path: `/admin/clients/${f.alice.id}/apiKeys`, apiKey: f.alice.apiKey }), status: 403, error: ADMIN_ONLY },
  { name: 'client key: DELETE /admin/clients/{id}/apiKeys/{keyId}', request: (f) => ({ method: 'DELETE', path: `/admin/clients/${f.bob.id}/apiKeys/${UNKNOWN_CLIENT}`, apiKey: f.alice.apiKey }), status: 403, error: ADMIN_ONLY },

  // X-Client-Id.
  { name: 'client key sending X-Client-Id of another client', request: (f) => ({ method: 'GET', path: '/companies', apiKey: f.alice.apiKey, headers: { 'X-Client-Id': f.bob.id } }), status: 403, error: CLIENT_HEADER },
  { name: 'client key sending X-Client-Id of itself', request: (f) => ({ method: 'GET', path: '/companies', apiKey: f.alice.apiKey, headers: { 'X-Client-Id': f.alice.id } }), status: 403, error: CLIENT_HEADER },
  { name: 'admin key with X-Client-Id of an unknown client', request: () => ({ method: 'GET', path: '/companies', headers: { 'X-Client-Id': UNKNOWN_CLIENT } }), status: 404, error: `Client ${UNKNOWN_CLIENT} not found.` },
  { name: 'admin key with X-Client-Id of a client', request: (f) => ({ method: 'GET', path: '/companies', headers: { 'X-Client-Id': f.alice.id } }), status: 200 },
  { name: "admin key reaches a client's company without X-Client-Id", request: (f) => ({ method: 'GET', path: `/companies/${f.aliceCompany}` }), status: 200 },

  // 402: a Free account older than 365 days, on every endpoint.
  ...([
    ['GET', '/companies'],
    ['POST', '/companies'],
    ['GET', '/profile'],
    ['GET', '/integrations'],
    ['GET', '/integrations/gbol'],
    ['GET', `/companies/${UNKNOWN_CLIENT}`],
    ['GET', '/no/such/route'],
  ] as const).map(([method, path]): Scenario => ({
    name: `expired Free account: ${method} ${path}`,
    request: (f) => ({ method, path, apiKey: f.expired.apiKey, body: method === 'POST' ? { name: 'Late Ltd' } : undefined }),
    status: 402,
    error: EXPIRED_402.error,
  })),
  { name: 'admin acting for an expired Free account', request: (f) => ({ method: 'GET', path: '/companies', headers: { 'X-Client-Id': f.expired.id } }), status: 402, error: EXPIRED_402.error },
  { name: 'Paid account created 400 days ago: GET /companies', request: (f) => ({ method: 'GET', path: '/companies', apiKey: f.oldPaid.apiKey }), status: 200 },
  { name: 'Paid account created 400 days ago: POST /companies', request: (f) => ({ method: 'POST', path: '/companies', apiKey: f.oldPaid.apiKey, body: { name: 'Old Faithful Ltd' } }), status: 200 },
];

describe('authentication and accounts', () => {
  let t: TestService;
  let f: Fixture;

  /** Revokes the client's only key through the admin API and returns it. */
  async function revokeOnlyKey(client: Account): Promise<string> {
    const keys = await t.call('GET', `/admin/clients/${client.id}/apiKeys`);
    expect(keys.status).toBe(200);
    expect(keys.body.results).toHaveLength(1);
    const keyId: string = keys.body.results[0].id;
    const revoked = await t.call('DELETE', `/admin/clients/${client.id}/apiKeys/${keyId}`);
    expect(revoked.status).toBe(204);
    expect(revoked.text).toBe('');
    return client.apiKey;
  }

  beforeAll(async () => {
    t = await startTestStack('service');
    const alice = await t.createClient('Alice Ltd', 'Free');
    const company = await createCompany(t, alice.apiKey, { name: 'Alice Trading' });
    const connection = await createConnection(t, alice.apiKey, company.id, 'gbol');
    f = {
      adminKey: t.adminKey,
      alice,
      bob: await t.createClient('Bob Ltd', 'Free'),
      expired: await t.createClient('Expired Ltd', 'Free', daysAgo(400)),
      oldPaid: await t.createClient('Old Paid Ltd', 'Paid', daysAgo(400)),
      revokedKey: await revokeOnlyKey(await t.createClient('Revoked Ltd', 'Free')),
      aliceCompany: company.id,
      aliceConnection: connection.id,
    };
  });

  afterAll(async () => {
    await t?.stop();
  });

  it.each(scenarios)('$name → $status', async ({ request, status, error }) => {
    const { method, path, ...options } = request(f);
    const result = await t.call(method, path, options);
    expect(result.status, result.text).toBe(status);
    if (status >= 400) expectErrorBody(result, status, typeof error === 'function' ? error(f) : error);
    if (status === 402) expect({ ...result.body, correlationId: undefined }).toEqual({ ...EXPIRED_402, correlationId: undefined });
  });

  it('gives the exact 402 body of API.md to an expired Free account', async () => {
    const result = await t.call('GET', '/companies', { apiKey: f.expired.apiKey });
    expect(result.body).toEqual({ ...EXPIRED_402, correlationId: result.headers.get('x-correlation-id') });
    expect(result.body.validation.errors[0].message).toMatch(/^Account expired\. Learn more at https?:\/\/\S+$/);
  });

  it('revokes a key: 200 before, 403 after, and the key list marks it revoked', async () => {
    const carol = await t.createClient('Carol Ltd', 'Paid');
    expect((await t.call('GET', '/companies', { apiKey: carol.apiKey })).status).toBe(200);
    const second = await t.call('POST', `/admin/clients/${carol.id}/apiKeys`);
    expect(second.status).toBe(201);
    await t.call('GET', `/admin/clients/${carol.id}/apiKeys`).then((r) => expect(r.body.totalResults).toBe(2));

    const keys = await t.call('GET', `/admin/clients/${carol.id}/apiKeys`);
    const first = keys.body.results.find((k: { id: string }) => k.id !== second.body.id);
    expect((await t.call('DELETE', `/admin/clients/${carol.id}/apiKeys/${first.id}`)).status).toBe(204);

    expectErrorBody(await t.call('GET', '/companies', { apiKey: carol.apiKey }), 403, FORBIDDEN);
    expect((await t.call('GET', '/companies', { apiKey: second.body.apiKey })).status).toBe(200);
    const after = await t.call('GET', `/admin/clients/${carol.id}/apiKeys`);
    const revoked = after.body.results.find((k: { id: string }) => k.id === first.id);
    expect(revoked.revoked).toMatch(/Z$/);
    expect(after.body.results.find((k: { id: string }) => k.id === second.body.id)).not.toHaveProperty('revoked');
  });

  it('lets the admin act for a client with X-Client-Id: the company lands in the client list', async () => {
    const dave = await t.createClient('Dave Ltd', 'Free');
    const asDave = { 'X-Client-Id': dave.id };
    const profile = await t.call('GET', '/profile', { headers: asDave });
    expect(profile.body).toMatchObject({ clientId: dave.id, isAdmin: true, actingAsClient: true });

    const created = await t.call('POST', '/companies', { headers: asDave, body: { name: 'Managed Migration Co' } });
    expect(created.status).toBe(200);
    const daveList = await t.call('GET', '/companies', { apiKey: dave.apiKey });
    expect(daveList.body.results.map((c: { id: string }) => c.id)).toEqual([created.body.id]);
    const adminList = await t.call('GET', '/companies');
    expect(adminList.body.results.map((c: { id: string }) => c.id)).not.toContain(created.body.id);
    // The client's own key reaches the company the admin created for it.
    expect((await t.call('GET', `/companies/${created.body.id}`, { apiKey: dave.apiKey })).status).toBe(200);
  });
});

describe('admin.key and secret.key in the data dir', () => {
  const dataDir = tempDir('ferry-auth-keys-');
  let first: TestService | undefined;
  let second: TestService | undefined;

  afterAll(async () => {
    await first?.stop();
    await second?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('writes admin.key (0600) on first start, and the key works', async () => {
    first = await startTestStack('service', { dataDir, env: {} });
    const file = join(dataDir, 'admin.key');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8').trim()).toBe(first.adminKey);
    const clients = await first.call('GET', '/admin/clients', { apiKey: readFileSync(file, 'utf8').trim() });
    expect(clients.status).toBe(200);
    expect(clients.headers.get('content-type')).toBe(JSON_TYPE);
    expect(clients.body.results).toEqual([expect.objectContaining({ isAdmin: true, plan: 'Paid' })]);
  });

  it('writes secret.key (0600) on first start', () => {
    expect(statSync(join(dataDir, 'secret.key')).mode & 0o777).toBe(0o600);
  });

  it('stores API keys hashed, never in plain text', async () => {
    const rows = await atRest(first!).all('SELECT * FROM api_keys');
    expect(rows.length).toBeGreaterThan(0);
    expect(JSON.stringify(rows)).not.toContain(first!.adminKey);
  });

  it('keeps the same admin key when a second service opens the same data dir', async () => {
    const adminKey = first!.adminKey;
    const secret = readFileSync(join(dataDir, 'secret.key'), 'utf8');
    await first!.stop();
    first = undefined;
    second = await startTestStack('service', { dataDir, env: {} });
    expect(second.adminKey).toBe(adminKey);
    expect(readFileSync(join(dataDir, 'admin.key'), 'utf8').trim()).toBe(adminKey);
    expect(readFileSync(join(dataDir, 'secret.key'), 'utf8')).toBe(secret);
    expect((await second.call('GET', '/admin/clients', { apiKey: adminKey })).body.totalResults).toBe(1);
  });
});
