// Companies over real HTTP: create (sanitising, validation), the record's exact shape,
// get/patch/put/delete, 404s, the Free plan's company limit and the tags filter.
import { randomUUID } from 'node:crypto';
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { atRest } from '../helpers/at-rest.js';
import type { CallResult } from '../helpers/service.js';
import {
  COMPANY_LIMIT_402, createCompany, createConnection, expectErrorBody, ISO_Z, itemIds, JSON_TYPE, nullPaths, UUID,
} from './support.js';
import { type TestService, startTestStack } from '../helpers/stack.js';

let t: TestService;
/** A Paid client, so the tests here never meet the company limit by accident. */
let key: string;

beforeAll(async () => {
  t = await startTestStack('service');
  key = (await t.createClient('Companies Test Ltd', 'Paid')).apiKey;
});

afterAll(async () => {
  await t?.stop();
});

const post = (body: unknown): Promise<CallResult> => t.call('POST', '/companies', { apiKey: key, body });
/** Own properties named like Object.prototype members, as JSON.parse makes them. */
const PROTO_TAGS = JSON.parse('{"__proto__": "x", "constructor": "y"}') as Record<string, string>;
const manyTags = (n: number): Record<string, string> => Object.fromEntries(Array.from({ length: n }, (_, i) => [`tag${i}`, `v${i}`]));

describe('POST /companies: names and tags', () => {
  interface CreateScenario {
    name: string;
    body: unknown;
    /** 200: the stored name (and tags); 400: the validation itemIds. */
    storedName?: string;
    storedTags?: Record<string, string>;
    invalid?: string[];
  }

  const scenarios: CreateScenario[] = [
    { name: 'removes disallowed characters', body: { name: 'Acme <Ltd> #1' }, storedName: 'Acme Ltd 1' },
    { name: "keeps - ' & @ . , ? !", body: { name: "O'Brien & Sons - Ltd. @HQ, ok? yes!" }, storedName: "O'Brien & Sons - Ltd. @HQ, ok? yes!" },
    { name: 'keeps non-ASCII letters and digits', body: { name: 'Café Zoë 2' }, storedName: 'Café Zoë 2' },
    { name: 'trims and collapses spaces', body: { name: '   Spaced    Out  Ltd  ' }, storedName: 'Spaced Out Ltd' },
    { name: 'names need not be unique', body: { name: 'Acme <Ltd> #1' }, storedName: 'Acme Ltd 1' },
    { name: 'empty after sanitising', body: { name: '<>#$%^*()' }, invalid: ['name'] },
    { name: 'empty string name', body: { name: '' }, invalid: ['name'] },
    { name: 'missing name', body: { description: 'no name' }, invalid: ['name'] },
    { name: 'non-string name', body: { name: 42 }, invalid: ['name'] },
    { name: '10 tags', body: { name: 'Ten Tags', tags: manyTags(10) }, storedName: 'Ten Tags', storedTags: manyTags(10) },
    { name: '11 tags', body: { name: 'Eleven Tags', tags: manyTags(11) }, invalid: ['tags'] },
    { name: 'tag key of 27 characters', body: { name: 'Key 27', tags: { ['k'.repeat(27)]: 'v' } }, storedName: 'Key 27', storedTags: { ['k'.repeat(27)]: 'v' } },
    { name: 'tag key of 28 characters', body: { name: 'Key 28', tags: { ['k'.repeat(28)]: 'v' } }, invalid: [`tags.${'k'.repeat(28)}`] },
    { name: 'empty tag key', body: { name: 'Empty Key', tags: { '': 'v' } }, invalid: ['tags.'] },
    { name: 'tag value of 100 characters', body: { name: 'Value 100', tags: { k: 'v'.repeat(100) } }, storedName: 'Value 100', storedTags: { k: 'v'.repeat(100) } },
    { name: 'tag value of 101 characters', body: { name: 'Value 101', tags: { k: 'v'.repeat(101) } }, invalid: ['tags.k'] },
    { name: 'non-string tag value', body: { name: 'Number Tag', tags: { k: 1 } }, invalid: ['tags.k'] },
    { name: 'tags as an array', body: { name: 'Array Tags', tags: ['a'] }, invalid: ['tags'] },
    { name: 'tags named __proto__ and constructor are kept', body: { name: 'Proto Tags', tags: PROTO_TAGS }, storedName: 'Proto Tags', storedTags: PROTO_TAGS },
    { name: 'a bad name and a bad tag together', body: { name: '###', tags: { k: 2 } }, invalid: ['name', 'tags.k'] },
  ];

  it.each(scenarios)('$name', async ({ body, storedName, storedTags, invalid }) => {
    const result = await post(body);
    if (invalid) {
      expectErrorBody(result, 400);
      expect(itemIds(result)).toEqual(invalid);
      return;
    }
    expect(result.status, result.text).toBe(200);
    expect(result.body.name).toBe(storedName);
    expect(result.body.tags).toEqual(storedTags ?? {});
    const fetched = await t.call('GET', `/companies/${result.body.id}`, { apiKey: key });
    expect(fetched.body).toEqual(result.body);
  });

  it.each([
    { name: 'a JSON array', rawBody: '[]' },
    { name: 'a JSON string', rawBody: '"Acme"' },
    { name: 'no body', rawBody: '' },
  ])('rejects $name as the body with 400', async ({ rawBody }) => {
    const result = await t.call('POST', '/companies', { apiKey: key, rawBody, headers: { 'content-type': 'application/json' } });
    expectErrorBody(result, 400);
  });
});

describe('company record shape', () => {
  const REQUIRED = ['id', 'name', 'redirect', 'created', 'products', 'tags', 'referenceSubsidiaryCompanies', 'dataConnections'];

  it.each([
    { name: 'name only', body: { name: 'Shape Ltd' }, keys: REQUIRED },
    { name: 'with a description', body: { name: 'Shape Ltd', description: 'Described' }, keys: [...REQUIRED, 'description'] },
    { name: 'with an empty description', body: { name: 'Shape Ltd', description: '' }, keys: REQUIRED },
  ])('$name: exactly the contract keys', async ({ body, keys }) => {
    const result = await post(body);
    expect(result.status).toBe(200);
    expect(result.headers.get('content-type')).toBe(JSON_TYPE);
    const record = result.body;
    expect(Object.keys(record).sort()).toEqual([...keys].sort());
    expect(record).not.toHaveProperty('lastSync');
    expect(record.id).toMatch(UUID);
    expect(record.name).toBe('Shape Ltd');
    expect(record.redirect).toBe(`${t.baseUrl}/link/companies/${record.id}`);
    expect(() => new URL(record.redirect)).not.toThrow();
    expect(record.created).toMatch(ISO_Z);
    expect(Math.abs(Date.parse(record.created) - Date.now())).toBeLessThan(60_000);
    expect(record).not.toHaveProperty('createdByUserName');
    expect(record.products).toEqual([]);
    expect(record.tags).toEqual({});
    expect(record.referenceSubsidiaryCompanies).toEqual([]);
    expect(record.dataConnections).toEqual([]);
    expect(nullPaths(record)).toEqual([]);
  });

  it('lists its connections in dataConnections', async () => {
    const company = await createCompany(t, key, { name: 'Connected Ltd' });
    const connection = await createConnection(t, key, company.id, 'gbol');
    const fetched = await t.call('GET', `/companies/${company.id}`, { apiKey: key });
    expect(fetched.body.dataConnections).toEqual([connection]);
  });
});

describe('GET, PATCH, PUT /companies/{id}', () => {
  const ORIGINAL = { name: 'Base Co', description: 'Original description', tags: { region: 'uk', tier: 'gold' } };

  interface UpdateScenario {
    name: string;
    method: 'PATCH' | 'PUT';
    body: unknown;
    /** The record's name/description/tags afterwards; description undefined = omitted. */
    after?: { name: string; description?: string; tags: Record<string, string> };
    invalid?: string[];
  }

  const scenarios: UpdateScenario[] = [
    { name: 'PATCH description only', method: 'PATCH', body: { description: 'New description' }, after: { ...ORIGINAL, description: 'New description' } },
    { name: 'PATCH name only (sanitised)', method: 'PATCH', body: { name: 'New <Name>' }, after: { ...ORIGINAL, name: 'New Name' } },
    { name: 'PATCH tags replaces the tag object', method: 'PATCH', body: { tags: { owner: 'ops' } }, after: { ...ORIGINAL, tags: { owner: 'ops' } } },
    { name: 'PATCH description null removes it', method: 'PATCH', body: { description: null }, after: { name: ORIGINAL.name, tags: ORIGINAL.tags } },
    { name: 'PATCH empty object changes nothing', method: 'PATCH', body: {}, after: ORIGINAL },
    { name: 'PATCH name empty after sanitising', method: 'PATCH', body: { name: '***' }, invalid: ['name'] },
    { name: 'PATCH 11 tags', method: 'PATCH', body: { tags: manyTags(11) }, invalid: ['tags'] },
    { name: 'PUT name only drops description and tags', method: 'PUT', body: { name: 'Replaced' }, after: { name: 'Replaced', tags: {} } },
    { name: 'PUT full record', method: 'PUT', body: { name: 'Replaced #2', description: 'D', tags: { a: 'b' } }, after: { name: 'Replaced 2', description: 'D', tags: { a: 'b' } } },
    { name: 'PUT without a name', method: 'PUT', body: { description: 'nameless' }, invalid: ['name'] },
  ];

  it.each(scenarios)('$name', async ({ method, body, after, invalid }) => {
    const company = await createCompany(t, key, ORIGINAL);
    const result = await t.call(method, `/companies/${company.id}`, { apiKey: key, body });
    const fetched = await t.call('GET', `/companies/${company.id}`, { apiKey: key });
    if (invalid) {
      expectErrorBody(result, 400);
      expect(itemIds(result)).toEqual(invalid);
      expect(fetched.body).toEqual(company);
      return;
    }
    expect(result.status, result.text).toBe(200);
    const expected: Record<string, unknown> = { ...company, name: after!.name, tags: after!.tags };
    delete expected.description;
    if (after!.description !== undefined) expected.description = after!.description;
    expect(result.body).toEqual(expected);
    expect(fetched.body).toEqual(expected);
  });
});

describe('DELETE /companies/{id}', () => {
  it('answers 204 with no body; the company and its connections and tokens are gone', async () => {
    const company = await createCompany(t, key, { name: 'Doomed Ltd' });
    const connection = await createConnection(t, key, company.id, 'mqjo');
    const authorized = await t.call('PUT', `/companies/${company.id}/connections/${connection.id}/authorization`, {
      apiKey: key, body: { accessToken: 'doomed-token', tenantId: 'doomed-tenant' },
    });
    expect(authorized.status, authorized.text).toBe(200);

    // Clients send Content-Type on bodiless DELETEs; that is not a malformed body.
    const deleted = await t.call('DELETE', `/companies/${company.id}`, { apiKey: key, headers: { 'content-type': 'application/json' } });
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expect(deleted.headers.get('x-correlation-id')).toMatch(UUID);

    expectErrorBody(await t.call('GET', `/companies/${company.id}`, { apiKey: key }), 404, `Company ${company.id} not found.`);
    expectErrorBody(await t.call('GET', `/companies/${company.id}/connections/${connection.id}`, { apiKey: key }), 404);
    expectErrorBody(await t.call('DELETE', `/companies/${company.id}`, { apiKey: key }), 404);
    const count = (sql: string, id: string) => atRest(t).value(sql, id);
    expect(await count('SELECT count(*) FROM connections WHERE company_id = ?', company.id)).toBe(0);
    expect(await count('SELECT count(*) FROM connection_tokens WHERE connection_id = ?', connection.id)).toBe(0);
    const list = await t.call('GET', '/companies?pageSize=5000', { apiKey: key });
    expect(list.body.results.map((c: { id: string }) => c.id)).not.toContain(company.id);
  });
});

describe('unknown company ids', () => {
  const unknown = randomUUID();
  it.each([
    { method: 'GET', id: unknown, body: undefined },
    { method: 'PATCH', id: unknown, body: { description: 'x' } },
    { method: 'PUT', id: unknown, body: { name: 'X' } },
    { method: 'DELETE', id: unknown, body: undefined },
    { method: 'GET', id: 'not-a-uuid', body: undefined },
    { method: 'GET', id: `${unknown}/connections`, body: undefined },
  ])('$method /companies/$id → 404', async ({ method, id, body }) => {
    const result = await t.call(method, `/companies/${id}`, { apiKey: key, body });
    expectErrorBody(result, 404, `Company ${id.split('/')[0]} not found.`);
  });
});

describe('Free plan company limit', () => {
  const createN = async (apiKey: string, n: number, prefix: string): Promise<CallResult[]> => {
    const results: CallResult[] = [];
    for (let i = 1; i <= n; i++) results.push(await t.call('POST', '/companies', { apiKey, body: { name: `${prefix} ${i}` } }));
    return results;
  };

  it('allows 50 companies on Free, refuses the 51st with the exact 402 body, and allows one again after a delete', async () => {
    const free = await t.createClient('Free Limit Ltd', 'Free');
    const fifty = await createN(free.apiKey, 50, 'Free Co');
    expect(fifty.map((r) => r.status)).toEqual(Array(50).fill(200));

    const refused = await t.call('POST', '/companies', { apiKey: free.apiKey, body: { name: 'One Too Many' } });
    expectErrorBody(refused, 402, COMPANY_LIMIT_402.error);
    expect(refused.body).toEqual({ ...COMPANY_LIMIT_402, correlationId: refused.headers.get('x-correlation-id') });
    expect(refused.body.validation.errors[0].message).toMatch(/^Company limit exceeded\. Learn more at https?:\/\/\S+$/);
    expect((await t.call('GET', '/companies', { apiKey: free.apiKey })).body.totalResults).toBe(50);

    // The admin acting for the client is held to the client's plan too.
    const asAdmin = await t.call('POST', '/companies', { headers: { 'X-Client-Id': free.id }, body: { name: 'Admin Try' } });
    expectErrorBody(asAdmin, 402, COMPANY_LIMIT_402.error);

    expect((await t.call('DELETE', `/companies/${fifty[0]!.body.id}`, { apiKey: free.apiKey })).status).toBe(204);
    expect((await t.call('POST', '/companies', { apiKey: free.apiKey, body: { name: 'Replacement' } })).status).toBe(200);
    expectErrorBody(await t.call('POST', '/companies', { apiKey: free.apiKey, body: { name: 'Again Too Many' } }), 402, COMPANY_LIMIT_402.error);
  });

  it('holds the limit under concurrent creates', async () => {
    const racer = await t.createClient('Racing Ltd', 'Free');
    await createN(racer.apiKey, 45, 'Racer');
    const burst = await Promise.all(Array.from({ length: 10 }, (_, i) =>
      t.call('POST', '/companies', { apiKey: racer.apiKey, body: { name: `Burst ${i}` } })));
    expect(burst.filter((r) => r.status === 200)).toHaveLength(5);
    expect(burst.filter((r) => r.status === 402)).toHaveLength(5);
    expect((await t.call('GET', '/companies', { apiKey: racer.apiKey })).body.totalResults).toBe(50);
  });

  it('lets a Paid account exceed 50 companies', async () => {
    const paid = await t.createClient('Paid Limit Ltd', 'Paid');
    const results = await createN(paid.apiKey, 52, 'Paid Co');
    expect(results.map((r) => r.status)).toEqual(Array(52).fill(200));
    expect((await t.call('GET', '/companies', { apiKey: paid.apiKey })).body.totalResults).toBe(52);
  });
});

describe('GET /companies?tags=key=value', () => {
  let tagKey: string;
  const names: Record<string, string> = {};

  beforeAll(async () => {
    tagKey = (await t.createClient('Tag Filter Ltd', 'Paid')).apiKey;
    const seeds = [
      { name: 'UK Gold', tags: { region: 'uk', tier: 'gold', 'cost-centre': 'cc 1' } },
      { name: 'UK Silver', tags: { region: 'uk', tier: 'silver' } },
      { name: 'US Gold', tags: { region: 'us', tier: 'gold', 'cost-centre': 'cc=2' } },
      { name: 'Untagged' },
    ];
    for (const seed of seeds) names[seed.name] = (await createCompany(t, tagKey, seed)).id;
  });

  it.each([
    { filter: 'tags=region=uk', expected: ['UK Gold', 'UK Silver'] },
    { filter: 'tags=region%3Duk', expected: ['UK Gold', 'UK Silver'] },
    { filter: 'tags=tier=gold', expected: ['UK Gold', 'US Gold'] },
    { filter: 'tags=region=fr', expected: [] },
    { filter: 'tags=nosuchtag=x', expected: [] },
    { filter: `tags=${encodeURIComponent('cost-centre=cc 1')}`, expected: ['UK Gold'] },
    { filter: `tags=${encodeURIComponent('cost-centre=cc=2')}`, expected: ['US Gold'] },
    { filter: 'tags=tier=gold&query=name~uk', expected: ['UK Gold'] },
    { filter: 'tags=tier=gold&pageSize=1', expected: ['UK Gold'], total: 2 },
  ])('$filter', async ({ filter, expected, total }) => {
    const result = await t.call('GET', `/companies?${filter}`, { apiKey: tagKey });
    expect(result.status, result.text).toBe(200);
    expect(result.body.results.map((c: { name: string }) => c.name)).toEqual(expected);
    expect(result.body.totalResults).toBe(total ?? expected.length);
  });

  it.each(['tags=noequals', 'tags==value'])('%s → 400', async (filter) => {
    const result = await t.call('GET', `/companies?${filter}`, { apiKey: tagKey });
    expectErrorBody(result, 400);
    expect(itemIds(result)).toEqual(['tags']);
  });
});
