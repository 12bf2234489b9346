// The documented size limits (docs/api.md, "Limits"): each is a 400 naming the field,
// answered before the platform is asked, so a bad value is never mistaken for an outage
// (a 503 that clients retry). Runs against the whole stack, with the sandbox platforms.
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Stack } from '../../src/stack.js';
import { ferry } from '../helpers/in-process.js';
import { tempDir } from '../helpers/service.js';
import { apiClient, createClient, createTenant, linkedCompany, sampleInvoice, type Api, type Linked } from '../helpers/sync.js';
import { expectErrorBody, itemIds } from './support.js';
import { startTestStack } from '../helpers/stack.js';

const dataDir = tempDir('ferry-limits-');
let stack: Stack;
let api: Api;
let apiKey: string;
let linked: Linked;

beforeAll(async () => {
  stack = await startTestStack('threads', { dataDir, rateLimit: 0 });
  const admin = apiClient(stack.baseUrl, stack.adminKey);
  apiKey = await createClient(admin, stack.adminKey, 'Limits Ltd', 'Paid');
  api = apiClient(stack.baseUrl, apiKey);
  linked = await linkedCompany(api, stack.sandboxUrl, 'gbol', 5);
});

afterAll(async () => {
  await stack?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('company fields', () => {
  const cases: Array<[string, string, Record<string, unknown>]> = [
    ['a name of 256 characters', 'name', { name: 'N'.repeat(256) }],
    ['a name of a megabyte', 'name', { name: 'N'.repeat(1024 * 1024 - 20) }],
    ['a description of 1001 characters', 'description', { name: 'Ok', description: 'd'.repeat(1001) }],
    ['a tag value of 101 characters', 'tags.k', { name: 'Ok', tags: { k: 'v'.repeat(101) } }],
  ];
  it.each(cases)('%s is a 400 naming %s', async (_name, field, body) => {
    const result = await api.call('POST', '/companies', { body });
    expectErrorBody(result, 400);
    expect(itemIds(result)).toContain(field);
  });

  // Unicode format characters (Cf) are invisible, and some reorder what is shown: refused, not silently removed.
  const hidden: Array<[string, string]> = [['U+202E', 'Invoices \u202Efdp.exe'], ['U+200B', 'Acme\u200B Ltd'], ['U+2066', 'Acme \u2066Ltd'], ['U+00AD', 'Ac\u00ADme'], ['U+FEFF', '\uFEFFAcme']];
  it.each(hidden)('a company name with %s is a 400 naming name, on create and on update', async (code, name) => {
    const created = await api.call('POST', '/companies', { body: { name } });
    expectErrorBody(created, 400);
    expect(itemIds(created)).toEqual(['name']);
    expect(created.body.validation.errors[0].message).toContain(`invisible format character ${code}`);
    const company = await api.call('POST', '/companies', { body: { name: 'Plain Ltd' } });
    for (const method of ['PUT', 'PATCH']) {
      const updated = await api.call(method, `/companies/${company.body.id}`, { body: { name } });
      expectErrorBody(updated, 400);
      expect(itemIds(updated)).toEqual(['name']);
    }
    expect((await api.call('GET', `/companies/${company.body.id}`)).body.name).toBe('Plain Ltd');
  });

  it('the profile name, which the companies\' people see when they link, refuses them too', async () => {
    const profile = await api.call('PUT', '/profile', { body: { name: 'Limits \u202Etxt.exe', redirectUrl: 'https://example.com/{companyId}' } });
    expectErrorBody(profile, 400);
    expect(itemIds(profile)).toEqual(['name']);
  });

  it('a name of 255 characters is kept whole', async () => {
    const result = await api.call('POST', '/companies', { body: { name: 'N'.repeat(255) } });
    expect(result.status, result.text).toBe(200);
    expect(result.body.name).toHaveLength(255);
  });
});

describe('token values', () => {
  const cases: Record<string, string> = {
    'a NUL': 'at_\u0000x',
    'a newline': 'at_x\nInjected: header',
    'a carriage return': 'at_x\r',
    '8193 characters': 'a'.repeat(8193),
  };
  it.each(Object.keys(cases))('an access token with %s is a 400 naming the field, not a 503, and is never echoed', async (name) => {
    const accessToken = cases[name]!;
    const tenant = await createTenant(stack.sandboxUrl, 'gbol', 1);
    const company = await api.call('POST', '/companies', { body: { name: 'Token Limits' } });
    const connection = await api.call('POST', `/companies/${company.body.id}/connections`, { body: { platformKey: 'gbol' } });
    const result = await api.call('PUT', `/companies/${company.body.id}/connections/${connection.body.id}/authorization`, {
      body: { ...tenant.tokens, accessToken },
    });
    expectErrorBody(result, 400);
    expect(itemIds(result)).toEqual(['accessToken']);
    expect(result.text).not.toContain(accessToken.slice(0, 12));
  });

  it('the CLI stops at once on such a token (no retries), exit 1 with the field named', async () => {
    const tenant = await createTenant(stack.sandboxUrl, 'gbol', 1);
    const company = await api.call('POST', '/companies', { body: { name: 'Token CLI' } });
    const connection = await api.call('POST', `/companies/${company.body.id}/connections`, { body: { platformKey: 'gbol' } });
    const keyFile = join(dataDir, 'client.key');
    const tokensFile = join(dataDir, 'tokens.json');
    writeFileSync(keyFile, apiKey, { mode: 0o600 });
    writeFileSync(tokensFile, JSON.stringify({ ...tenant.tokens, refreshToken: 'rt\u0000x' }));
    const started = Date.now();
    const run = await ferry(['--base-url', stack.baseUrl, '--api-key-file', keyFile, 'connections', 'authorize',
      '--company', company.body.id, '--connection', connection.body.id, '--tokens-file', tokensFile]);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).toContain('refreshToken');
    expect(run.stderr).toContain('control character');
    expect(run.stderr).not.toMatch(/could not be reached|retry/i);
  });
});

describe('JSON bodies', () => {
  it('a push body nested 100,000 deep is a 400, not a 503', async () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const result = await api.call('POST', `/companies/${linked.companyId}/connections/${linked.connectionId}/push/invoices`, {
      rawBody: `{"customerRef":{"id":"C-1"},"nested":${deep}}`, headers: { 'content-type': 'application/json' },
    });
    expectErrorBody(result, 400);
    expect(result.body.error).toContain('32 levels');
  });

  it('a record nested 32 deep still goes through', async () => {
    let nested: unknown = 'leaf';
    for (let i = 0; i < 30; i++) nested = { n: nested };
    const result = await api.call('POST', `/companies/${linked.companyId}/connections/${linked.connectionId}/push/invoices`, {
      body: { ...sampleInvoice('C-1'), nested },
    });
    expect(result.status, result.text).toBeLessThan(300);
  });
});

describe('NUL characters', () => {
  // PostgreSQL keeps no U+0000 in text: each was a 500 there (and stored as sent on SQLite).
  const inUrl = () => [
    '/companies/%00', `/companies/${linked.companyId}%00/connections`, '/companies?query=name%3D%00', '/companies?query=name%3D%22a%00%22',
    '/companies?tags=region%3D%00', `/companies/${linked.companyId}/data/invoices?query=id%3D%00`, '/webhooks/%00',
  ];
  it('in a path segment or a query value: 400, before any store is asked', async () => {
    for (const path of inUrl()) {
      const result = await api.call('GET', path);
      expectErrorBody(result, 400, 'The URL holds the control character NUL (U+0000, %00 in a URL), which no value may contain.');
    }
  });

  const inBody: Array<[string, string, Record<string, unknown>, string]> = [
    ['a description', '/companies', { name: 'Ok', description: 'a\u0000b' }, 'description'],
    ['a tag value', '/companies', { name: 'Ok', tags: { k: 'a\u0000b' } }, 'tags.k'],
    ['a tag key', '/companies', { name: 'Ok', tags: { 'k\u0000': 'v' } }, 'tags.k\u0000'],
    ['a webhook URL', '/webhooks', { url: 'https://a.invalid/\u0000', eventTypes: ['company.created'] }, 'url'],
    ['an API key name', '/apiKeys', { name: 'k\u0000' }, 'name'],
    ['a sync setting', '/profile/syncSettings', { settings: [{ dataType: 'invoices', syncFromUtc: '2024\u0000' }] }, 'settings[0].syncFromUtc'],
  ];
  it.each(inBody)('in %s of a JSON body: 400 naming where', async (_what, path, body, itemId) => {
    const result = await api.call('POST', path, { body });
    expectErrorBody(result, 400, 'The request body holds the control character NUL (U+0000, %00 in a URL), which no value may contain.');
    expect(itemIds(result)).toEqual([itemId]);
  });

  it('an escaped backslash before u0000 is text, not a NUL', async () => {
    const result = await api.call('POST', '/companies', { body: { name: 'Ok', description: 'C:\\u0000 is a path' } });
    expect(result.status, result.text).toBe(200);
    expect(result.body.description).toBe('C:\\u0000 is a path');
  });
});

describe('sync settings', () => {
  const cases: Array<[string, string, Record<string, unknown>]> = [
    ['syncSchedule 1e308', 'syncSchedule', { syncSchedule: 1e308 }],
    ['syncSchedule 8761', 'syncSchedule', { syncSchedule: 8761 }],
    ['monthsToSync -5', 'monthsToSync', { monthsToSync: -5 }],
    ['monthsToSync 2.5', 'monthsToSync', { monthsToSync: 2.5 }],
    ['syncFromUtc "garbage"', 'syncFromUtc', { syncFromUtc: 'garbage' }],
    ['syncFromUtc 2024-13-45', 'syncFromUtc', { syncFromUtc: '2024-13-45' }],
    ['syncFromWindow "3"', 'syncFromWindow', { syncFromWindow: '3' }],
  ];
  for (const where of ['company', 'profile'] as const) {
    it.each(cases)(`${where}: %s is a 400 naming %s`, async (_name, field, fields) => {
      const path = where === 'company' ? `/companies/${linked.companyId}/syncSettings` : '/profile/syncSettings';
      const result = await api.call('POST', path, { body: { settings: [{ dataType: 'invoices', syncSchedule: 24, ...fields }] } });
      expectErrorBody(result, 400);
      expect(itemIds(result)).toEqual([`settings[0].${field}`]);
    });
  }

  for (const where of ['company', 'profile'] as const) {
    it(`${where}: a data type given twice is a 400 naming the second entry, and nothing is stored`, async () => {
      const path = where === 'company' ? `/companies/${linked.companyId}/syncSettings` : '/profile/syncSettings';
      const before = (await api.call('GET', path)).body.settings;
      const twice = await api.call('POST', path, { body: { settings: [{ dataType: 'invoices', syncSchedule: 24 }, { dataType: 'bills', syncSchedule: 24 }, { dataType: 'invoices', syncSchedule: 48 }] } });
      expectErrorBody(twice, 400);
      expect(itemIds(twice)).toEqual(['settings[2].dataType']);
      expect(twice.body.validation.errors[0].message).toBe('invoices already has its setting in settings[0]: give each data type one entry.');
      // The probe's 10,000 copies of one entry.
      const flood = await api.call('POST', path, { body: { settings: Array.from({ length: 10_000 }, () => ({ dataType: 'invoices', syncSchedule: 24 })) } });
      expectErrorBody(flood, 400);
      expect(itemIds(flood)).toHaveLength(9_999);
      expect((await api.call('GET', path)).body.settings).toEqual(before);
    });
  }

  it('sane values are kept', async () => {
    const setting = { dataType: 'invoices', syncSchedule: 8760, monthsToSync: 24, syncFromUtc: '2024-01-01T00:00:00Z', syncFromWindow: 12 };
    const result = await api.call('POST', `/companies/${linked.companyId}/syncSettings`, { body: { settings: [setting] } });
    expect(result.status, result.text).toBeLessThan(300);
    const read = await api.call('GET', `/companies/${linked.companyId}/syncSettings`);
    expect(read.body.settings[0]).toMatchObject(setting);
  });
});
