// Integrations and connections over real HTTP: the registry, creating connections, token
// migration through PUT .../authorization (schema checks, managed integrations, sealed
// storage), unlinking and deleting.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { createSealer, loadSecretKey } from '../../src/service/secrets.js';
import { atRest } from '../helpers/at-rest.js';
import type { CallResult } from '../helpers/service.js';
import { createCompany, createConnection, expectErrorBody, ISO_Z, itemIds, JSON_TYPE, nullPaths, UUID, type Body } from './support.js';
import { type TestService, startTestStack } from '../helpers/stack.js';

const MANAGED = { fbrh: 'FreeAgent', vxvy: 'FreshBooks', qhyg: 'QuickBooks Online', fztf: 'Shopify', pbtz: 'Wave', rwuv: 'Zoho Books' };
const XERO_TOKENS = { accessToken: 'at_xero_1', refreshToken: 'rt_xero_1', tenantId: 'tenant-1' };
const QBO_TOKENS = { accessToken: 'at_qbo_1', refreshToken: 'rt_qbo_1', realmId: '9130350000000001' };

let t: TestService;
let client: { id: string; apiKey: string };
let companyId: string;

beforeAll(async () => {
  t = await startTestStack('service', { env: {} });
  client = await t.createClient('Connections Ltd', 'Free');
  companyId = (await createCompany(t, client.apiKey, { name: 'Connected Co' })).id;
});

afterAll(async () => {
  await t?.stop();
});

const connectionPath = (connectionId: string, suffix = ''): string => `/companies/${companyId}/connections/${connectionId}${suffix}`;
const newConnection = (platformKey = 'gbol'): Promise<Body> => createConnection(t, client.apiKey, companyId, platformKey);
const authorize = (connectionId: string, body: unknown, options: { apiKey?: string; headers?: Record<string, string> } = {}): Promise<CallResult> =>
  t.call('PUT', connectionPath(connectionId, '/authorization'), { apiKey: client.apiKey, ...options, body });

describe('GET /integrations', () => {
  interface RegistryScenario {
    name: string;
    path: string;
    check: (result: CallResult) => void;
  }

  // The public Integration fields (key, logoUrl, name and enabled required), then ferry's own.
  const INTEGRATION_KEYS = [
    'dataProvidedBy', 'dataTypes', 'enabled', 'integrationId', 'isBeta', 'isOfflineConnector', 'key', 'logoUrl', 'migrationRoute', 'name', 'sourceId',
    'sourceType', 'tokenFields',
  ];

  const scenarios: RegistryScenario[] = [
    {
      name: 'lists at least 26 integrations on the default page',
      path: '/integrations',
      check: ({ body }) => {
        expect(body.totalResults).toBeGreaterThanOrEqual(26);
        expect(body.results).toHaveLength(body.totalResults);
        expect(body.pageSize).toBe(100);
        for (const integration of body.results) {
          expect(Object.keys(integration).sort()).toEqual(INTEGRATION_KEYS);
          expect(integration.key).toMatch(/^[a-z]{4}$/);
          expect(['self-service', 'managed']).toContain(integration.migrationRoute);
        }
        expect(body.results.filter((i: { migrationRoute: string }) => i.migrationRoute === 'self-service').length).toBeGreaterThanOrEqual(20);
      },
    },
    {
      name: 'query=migrationRoute=managed gives exactly the six managed platforms',
      path: `/integrations?query=${encodeURIComponent('migrationRoute=managed')}`,
      check: ({ body }) => {
        expect(body.totalResults).toBe(6);
        expect(Object.fromEntries(body.results.map((i: { key: string; name: string }) => [i.key, i.name]))).toEqual(MANAGED);
      },
    },
    {
      name: 'is paged',
      path: '/integrations?page=2&pageSize=5',
      check: ({ body }) => {
        expect(body.results).toHaveLength(5);
        expect(body.pageNumber).toBe(2);
        expect(body._links.previous.href).toBe('/integrations?page=1&pageSize=5');
        expect(body._links.next.href).toBe('/integrations?page=3&pageSize=5');
      },
    },
    {
      name: 'orders by name',
      path: '/integrations?orderBy=-name&pageSize=3',
      check: ({ body }) => expect(body.results.map((i: { name: string }) => i.name)).toEqual(['Zoho Books', 'Xero', 'WooCommerce']),
    },
    {
      name: 'GET /integrations/qhyg: QuickBooks Online, managed, with its token schema',
      path: '/integrations/qhyg',
      check: ({ body }) => {
        expect(Object.keys(body).sort()).toEqual(INTEGRATION_KEYS);
        expect(body).toMatchObject({ key: 'qhyg', name: 'QuickBooks Online', sourceType: 'Accounting', migrationRoute: 'managed' });
        expect(body.tokenFields).toContainEqual({ name: 'realmId', required: true, description: expect.any(String) });
        expect(body.tokenFields.map((f: { name: string }) => f.name)).toEqual(expect.arrayContaining(Object.keys(QBO_TOKENS)));
        expect(body.dataTypes).toContain('invoices');
      },
    },
    {
      name: 'GET /integrations/gbol: Xero, self-service',
      path: '/integrations/gbol',
      check: ({ body }) => expect(body).toMatchObject({ key: 'gbol', name: 'Xero', migrationRoute: 'self-service' }),
    },
    { name: 'platform keys are case-insensitive', path: '/integrations/GBOL', check: ({ body }) => expect(body.key).toBe('gbol') },
  ];

  it.each(scenarios)('$name', async ({ path, check }) => {
    const result = await t.call('GET', path, { apiKey: client.apiKey });
    expect(result.status, result.text).toBe(200);
    expect(result.headers.get('content-type')).toBe(JSON_TYPE);
    check(result);
  });

  it('GET /integrations/{unknown} → 404', async () => {
    expectErrorBody(await t.call('GET', '/integrations/zzzz', { apiKey: client.apiKey }), 404, 'Integration zzzz not found.');
  });
});

describe('POST /companies/{id}/connections', () => {
  const CONNECTION_KEYS = [
    'created', 'id', 'integrationId', 'integrationKey', 'linkUrl', 'platformName', 'sourceId', 'sourceType', 'status',
  ];

  it.each([
    { body: { platformKey: 'gbol' }, key: 'gbol', platformName: 'Xero', sourceType: 'Accounting' },
    { body: { platformKey: 'GBOL' }, key: 'gbol', platformName: 'Xero', sourceType: 'Accounting' },
    { body: { platformKey: 'suuo' }, key: 'suuo', platformName: 'Plaid', sourceType: 'Banking' },
    { body: { platformKey: 'exgd' }, key: 'exgd', platformName: 'Stripe', sourceType: 'Commerce' },
    { body: { platformKey: 'qhyg' }, key: 'qhyg', platformName: 'QuickBooks Online', sourceType: 'Accounting' },
  ])('$body.platformKey → 200 PendingAuth with the contract fields', async ({ body, key, platformName, sourceType }) => {
    const result = await t.call('POST', `/companies/${companyId}/connections`, { apiKey: client.apiKey, body });
    expect(result.status, result.text).toBe(200);
    const record = result.body;
    expect(Object.keys(record).sort()).toEqual(CONNECTION_KEYS);
    expect(record).not.toHaveProperty('lastSync');
    expect(record).toMatchObject({ integrationKey: key, platformName, sourceType, status: 'PendingAuth' });
    expect(record).not.toHaveProperty('dataConnectionErrors');
    expect(record).not.toHaveProperty('connectionInfo');
    expect(record.id).toMatch(UUID);
    expect(record.integrationId).toMatch(UUID);
    expect(typeof record.sourceId).toBe('string');
    expect(record.linkUrl).toBe(`${t.baseUrl}/link/companies/${companyId}/connections/${record.id}`);
    expect(record.created).toMatch(ISO_Z);
    expect(nullPaths(record)).toEqual([]);

    // The same record from the list, the single GET and the company's dataConnections.
    expect((await t.call('GET', connectionPath(record.id), { apiKey: client.apiKey })).body).toEqual(record);
    const list = await t.call('GET', `/companies/${companyId}/connections?pageSize=5000`, { apiKey: client.apiKey });
    expect(list.body.results).toContainEqual(record);
    const company = await t.call('GET', `/companies/${companyId}`, { apiKey: client.apiKey });
    expect(company.body.dataConnections).toContainEqual(record);
  });

  it('gives every connection of one platform the same integrationId', async () => {
    const [a, b] = [await newConnection('gbol'), await newConnection('gbol')];
    expect(a.integrationId).toBe(b.integrationId);
    expect(a.id).not.toBe(b.id);
  });

  it.each([
    { name: 'unknown platformKey', body: { platformKey: 'zzzz' } },
    { name: 'missing platformKey', body: {} },
    { name: 'empty platformKey', body: { platformKey: '  ' } },
    { name: 'non-string platformKey', body: { platformKey: 7 } },
  ])('$name → 400 (itemId platformKey)', async ({ body }) => {
    const result = await t.call('POST', `/companies/${companyId}/connections`, { apiKey: client.apiKey, body });
    expectErrorBody(result, 400);
    expect(itemIds(result)).toEqual(['platformKey']);
  });

  it("a connection of another company of the same client → 404 under this company's path", async () => {
    const other = await createCompany(t, client.apiKey, { name: 'Other Co' });
    const foreign = await createConnection(t, client.apiKey, other.id, 'gbol');
    expectErrorBody(await t.call('GET', connectionPath(foreign.id), { apiKey: client.apiKey }), 404);
    expectErrorBody(await authorize(foreign.id, XERO_TOKENS), 404);
    expect((await t.call('DELETE', `/companies/${other.id}`, { apiKey: client.apiKey })).status).toBe(204);
  });

  it('unknown company → 404; unknown connection → 404', async () => {
    const unknown = '00000000-0000-4000-8000-000000000000';
    expectErrorBody(await t.call('POST', `/companies/${unknown}/connections`, { apiKey: client.apiKey, body: { platformKey: 'gbol' } }), 404);
    expectErrorBody(await t.call('GET', `/companies/${unknown}/connections`, { apiKey: client.apiKey }), 404);
    expectErrorBody(await t.call('GET', connectionPath(unknown), { apiKey: client.apiKey }), 404, `Data connection ${unknown} not found for company ${companyId}.`);
  });
});

describe('PUT .../authorization (token migration)', () => {
  interface AuthScenario {
    name: string;
    platformKey?: string;
    body: unknown;
    /** 400: one validation item per bad key, in this order. */
    invalid?: string[];
  }

  const scenarios: AuthScenario[] = [
    { name: 'valid Xero tokens', body: XERO_TOKENS },
    { name: 'valid Xero tokens with the optional expiresAt', body: { ...XERO_TOKENS, expiresAt: '2026-11-21T11:00:00Z' } },
    { name: 'optional field empty', body: { ...XERO_TOKENS, expiresAt: '' } },
    { name: 'valid Sandbox tokens', platformKey: 'mqjo', body: { accessToken: 'a', tenantId: 't' } },
    { name: 'empty body object', body: {}, invalid: ['accessToken', 'refreshToken', 'tenantId'] },
    { name: 'one required field missing', body: { accessToken: 'a', refreshToken: 'r' }, invalid: ['tenantId'] },
    { name: 'required field empty', body: { ...XERO_TOKENS, tenantId: '' }, invalid: ['tenantId'] },
    { name: 'one unknown field', body: { ...XERO_TOKENS, realmId: '123' }, invalid: ['realmId'] },
    { name: 'missing and unknown fields together', body: { accessToken: 'a', refreshToken: 'r', foo: '1', bar: '2' }, invalid: ['tenantId', 'foo', 'bar'] },
    { name: 'non-string token value', body: { ...XERO_TOKENS, tenantId: 42 }, invalid: ['tenantId'] },
  ];

  it.each(scenarios)('$name', async ({ platformKey, body, invalid }) => {
    const connection = await newConnection(platformKey);
    const result = await authorize(connection.id, body);
    const after = await t.call('GET', connectionPath(connection.id), { apiKey: client.apiKey });
    if (invalid) {
      expectErrorBody(result, 400);
      expect(itemIds(result)).toEqual(invalid);
      expect(result.body.validation.errors.every((e: { validatorName: string }) => e.validatorName === 'TokenSchema')).toBe(true);
      expect(after.body).toEqual(connection);
      return;
    }
    expect(result.status, result.text).toBe(200);
    expect(result.body).toEqual({ ...connection, status: 'Linked' });
    expect(after.body).toEqual(result.body);
  });

  it.each([
    { name: 'a JSON array', rawBody: '[]' },
    { name: 'no body', rawBody: '' },
  ])('$name as the body → 400', async ({ rawBody }) => {
    const connection = await newConnection();
    const result = await t.call('PUT', connectionPath(connection.id, '/authorization'), {
      apiKey: client.apiKey, rawBody, headers: { 'content-type': 'application/json' },
    });
    expectErrorBody(result, 400);
  });

  it('stores tokens sealed: the token text is in no table and not in the database files', async () => {
    const secret = { accessToken: 'PLAINTEXT-ACCESS-7d1f0c', refreshToken: 'PLAINTEXT-REFRESH-92ab44', tenantId: 'PLAINTEXT-TENANT-5e8a10' };
    const connection = await newConnection();
    expect((await authorize(connection.id, secret)).status).toBe(200);

    const stored = atRest(t);
    const row = await stored.get<{ sealed: Buffer }>('SELECT sealed FROM connection_tokens WHERE connection_id = ?', connection.id);
    expect(Buffer.isBuffer(row?.sealed)).toBe(true);
    const sealed = row!.sealed;
    for (const value of Object.values(secret)) {
      expect(sealed.includes(value)).toBe(false);
      expect(sealed.toString('latin1')).not.toContain(value);
    }
    // It is a real seal under the data dir's secret key, bound to this connection.
    const sealer = createSealer(loadSecretKey(t.dataDir, {}));
    expect(sealer.open(sealed, connection.id)).toEqual(secret);
    expect(() => sealer.open(sealed, 'another-connection')).toThrow();

    const tables = await stored.tables();
    expect(tables).toContain('connection_tokens');
    for (const table of tables) {
      for (const dbRow of await stored.all(`SELECT * FROM "${table}"`)) {
        for (const cell of Object.values(dbRow)) {
          const text = Buffer.isBuffer(cell) ? cell.toString('latin1') : String(cell);
          for (const value of Object.values(secret)) expect(text, `${table}`).not.toContain(value);
        }
      }
    }
    // The files too, on SQLite (PostgreSQL's are its server's).
    const file = join(t.dataDir, 'ferry.db');
    for (const suffix of ['', '-wal']) {
      if (!existsSync(file + suffix)) continue;
      const bytes = readFileSync(file + suffix);
      for (const value of Object.values(secret)) expect(bytes.includes(value), `ferry.db${suffix}`).toBe(false);
    }
  });

  describe('managed integration (QuickBooks Online, qhyg)', () => {
    it.each([
      { name: 'client key', as: 'client', status: 403 },
      { name: 'admin key with X-Client-Id', as: 'admin-for-client', status: 200 },
      { name: 'admin key without X-Client-Id', as: 'admin', status: 200 },
    ] as const)('$name → $status', async ({ as, status }) => {
      const connection = await newConnection('qhyg');
      const options = as === 'client' ? {} : as === 'admin' ? { apiKey: t.adminKey } : { apiKey: t.adminKey, headers: { 'X-Client-Id': client.id } };
      const result = await authorize(connection.id, QBO_TOKENS, options);
      const after = await t.call('GET', connectionPath(connection.id), { apiKey: client.apiKey });
      if (status === 403) {
        expectErrorBody(result, 403);
        expect(result.body.error).toContain('QuickBooks Online');
        expect(result.body.error).toContain('managed migration');
        expect(after.body.status).toBe('PendingAuth');
      } else {
        expect(result.status, result.text).toBe(200);
        expect(result.body.status).toBe('Linked');
        expect(after.body.status).toBe('Linked');
      }
    });

    it('checks the managed route before the token schema', async () => {
      const connection = await newConnection('qhyg');
      expectErrorBody(await authorize(connection.id, { nonsense: 'x' }), 403);
    });
  });
});

describe('unlink and delete', () => {
  const linked = async (): Promise<Body> => {
    const connection = await newConnection();
    const result = await authorize(connection.id, XERO_TOKENS);
    expect(result.status).toBe(200);
    return result.body;
  };

  it.each([
    { name: 'PendingAuth → Unlinked', start: 'PendingAuth', body: { status: 'Unlinked' }, status: 400 },
    { name: 'Linked → Unlinked', start: 'Linked', body: { status: 'Unlinked' }, status: 200 },
    { name: 'Unlinked → Unlinked again', start: 'Unlinked', body: { status: 'Unlinked' }, status: 400 },
    { name: 'Linked → Linked (only Unlinked may be set)', start: 'Linked', body: { status: 'Linked' }, status: 400 },
    { name: 'Linked, no status in the body', start: 'Linked', body: {}, status: 400 },
  ])('PATCH $name → $status', async ({ start, body, status }) => {
    let connection = start === 'PendingAuth' ? await newConnection() : await linked();
    if (start === 'Unlinked') {
      connection = (await t.call('PATCH', connectionPath(connection.id), { apiKey: client.apiKey, body: { status: 'Unlinked' } })).body;
      expect(connection.status).toBe('Unlinked');
    }
    const result = await t.call('PATCH', connectionPath(connection.id), { apiKey: client.apiKey, body });
    const after = await t.call('GET', connectionPath(connection.id), { apiKey: client.apiKey });
    if (status === 200) {
      expect(result.status, result.text).toBe(200);
      expect(result.body).toEqual({ ...connection, status: 'Unlinked' });
      expect(after.body).toEqual(result.body);
    } else {
      expectErrorBody(result, status);
      expect(itemIds(result)).toEqual(['status']);
      expect(after.body).toEqual(connection);
    }
  });

  it.each(['PendingAuth', 'Linked'])('DELETE a %s connection → 200 with an empty body, then 404', async (start) => {
    const connection = start === 'Linked' ? await linked() : await newConnection();
    const deleted = await t.call('DELETE', connectionPath(connection.id), { apiKey: client.apiKey });
    expect(deleted.status).toBe(200);
    expect(deleted.text).toBe('');
    expect(deleted.headers.get('content-type')).toBeNull();
    expect(deleted.headers.get('x-correlation-id')).toMatch(UUID);

    expectErrorBody(await t.call('GET', connectionPath(connection.id), { apiKey: client.apiKey }), 404);
    expectErrorBody(await t.call('DELETE', connectionPath(connection.id), { apiKey: client.apiKey }), 404);
    expectErrorBody(await authorize(connection.id, XERO_TOKENS), 404);
    const company = await t.call('GET', `/companies/${companyId}`, { apiKey: client.apiKey });
    expect(company.body.dataConnections.map((c: { id: string }) => c.id)).not.toContain(connection.id);
    expect(await atRest(t).value('SELECT count(*) FROM connection_tokens WHERE connection_id = ?', connection.id)).toBe(0);
  });
});
