// GET /companies is served from a response cache; no write, from this connection or from
// another one (the sync worker's), may leave a stale page behind.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { atRest } from '../helpers/at-rest.js';
import { type TestService, startTestStack } from '../helpers/stack.js';

describe('companies list response cache', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestStack('service');
  });
  afterAll(async () => {
    await t.stop();
  });

  const names = async (path = '/companies') => (await t.call('GET', path)).body.results.map((c: { name: string }) => c.name);

  it('shows writes made through the API at once', async () => {
    await t.call('POST', '/companies', { body: { name: 'First' } });
    expect(await names()).toEqual(['First']);
    const second = await t.call('POST', '/companies', { body: { name: 'Second' } });
    expect(await names()).toEqual(['First', 'Second']);
    await t.call('PATCH', `/companies/${second.body.id}`, { body: { name: 'Renamed' } });
    expect(await names()).toEqual(['First', 'Renamed']);
    await t.call('POST', `/companies/${second.body.id}/connections`, { body: { platformKey: 'gbol' } });
    const [, withConnection] = (await t.call('GET', '/companies')).body.results;
    expect(withConnection.dataConnections).toHaveLength(1);
    await t.call('DELETE', `/companies/${second.body.id}`);
    expect(await names()).toEqual(['First']);
  });

  it('shows writes committed by another database connection', async () => {
    expect(await names()).toEqual(['First']);
    expect(await atRest(t).run("UPDATE companies SET name = 'Changed elsewhere'")).toBe(1);
    expect(await names()).toEqual(['Changed elsewhere']);
  });

  it('keeps pages of different clients and queries apart; the Host header does not change them', async () => {
    const client = await t.createClient('Other', 'Paid');
    await t.call('POST', '/companies', { apiKey: client.apiKey, body: { name: 'Theirs' } });
    expect((await t.call('GET', '/companies', { apiKey: client.apiKey })).body.results.map((c: { name: string }) => c.name)).toEqual(['Theirs']);
    expect(await names()).toEqual(['Changed elsewhere']);
    expect(await names('/companies?query=name~nothing')).toEqual([]);
    // Links come from the service's public URL, so another Host shares the page (and never shows in it).
    const viaLocalhost = await fetch(t.baseUrl.replace('127.0.0.1', 'localhost') + '/companies', { headers: { authorization: `Basic ${Buffer.from(t.adminKey).toString('base64')}` } });
    expect(((await viaLocalhost.json()) as any).results[0].redirect).toContain(t.baseUrl);
  });
});

describe('companies list response cache: bounded in bytes, keyed by what the page depends on', () => {
  const LIMITS = { maxBytes: 256 * 1024, maxBytesPerClient: 96 * 1024 };
  let t: TestService;
  let flooder: { id: string; apiKey: string };
  let bystander: { id: string; apiKey: string };
  beforeAll(async () => {
    t = await startTestStack('service', { responseCache: LIMITS });
    flooder = await t.createClient('Flooder', 'Paid');
    bystander = await t.createClient('Bystander', 'Paid');
    // Names as long as the API allows, so each cached page is as large as it gets.
    for (let i = 0; i < 30; i++) {
      const created = await t.call('POST', '/companies', { apiKey: flooder.apiKey, body: { name: `${'N'.repeat(80)} ${i}`, description: 'd'.repeat(900) } });
      expect(created.status, created.text).toBe(200);
    }
    await t.call('POST', '/companies', { apiKey: bystander.apiKey, body: { name: 'Bystander Co' } });
    // Nothing is written from here on; but on PostgreSQL the version also moves with commits
    // in the server's other databases (pg/version.ts), which would empty the cache under
    // these tests of its bounds. So it is held.
    const { store } = t.service.context;
    const version = await store.dataVersion();
    vi.spyOn(store, 'dataVersion').mockResolvedValue(version);
    // A request reads it with its key (versionAndKey): held there too.
    const versionAndKey = store.versionAndKey.bind(store);
    vi.spyOn(store, 'versionAndKey').mockImplementation(async (keyHash) => ({ ...(await versionAndKey(keyHash)), version }));
  });
  afterAll(async () => {
    vi.restoreAllMocks();
    await t.stop();
  });
  const cache = () => t.service.context.responseCache;

  it('ignores unknown query parameters: one entry however many are sent, and none echoed in the links', async () => {
    const first = await t.call('GET', '/companies?pageSize=7', { apiKey: flooder.apiKey });
    const oneEntry = cache().size(flooder.id);
    expect(oneEntry).toBe(Buffer.byteLength(first.text));
    for (let i = 0; i < 200; i++) {
      const result = await t.call('GET', `/companies?pageSize=7&junk${i}=${'x'.repeat(i)}`, { apiKey: flooder.apiKey });
      expect(result.text).toBe(first.text);
    }
    expect(cache().size(flooder.id)).toBe(oneEntry);
    expect(first.body._links.current.href).toBe('/companies?page=1&pageSize=7');
  });

  it('keys by parsed paging values: page=01 and page=1 are one page', async () => {
    const before = cache().size(flooder.id);
    await t.call('GET', '/companies?page=01&pageSize=007', { apiKey: flooder.apiKey });
    expect(cache().size(flooder.id)).toBe(before);
  });

  it('never holds more than its byte bounds, and one client cannot push another\'s pages out', async () => {
    const theirs = await t.call('GET', '/companies', { apiKey: bystander.apiKey });
    const bystanderBytes = cache().size(bystander.id);
    expect(bystanderBytes).toBe(Buffer.byteLength(theirs.text));
    for (let pageSize = 1; pageSize <= 30; pageSize++) {
      for (const orderBy of ['name', '-name', 'created']) {
        const result = await t.call('GET', `/companies?pageSize=${pageSize}&orderBy=${orderBy}`, { apiKey: flooder.apiKey });
        expect(result.status).toBe(200);
        expect(cache().size(flooder.id)).toBeLessThanOrEqual(LIMITS.maxBytesPerClient);
        expect(cache().size()).toBeLessThanOrEqual(LIMITS.maxBytes);
      }
    }
    expect(cache().size(flooder.id)).toBeGreaterThan(LIMITS.maxBytesPerClient / 2);
    expect(cache().size(bystander.id)).toBe(bystanderBytes);
  });

  it('builds a page once for requests that miss it together', async () => {
    const built = vi.spyOn(t.service.context.store, 'companiesPage');
    const asked = await Promise.all(Array.from({ length: 12 }, () => t.call('GET', '/companies?pageSize=3&orderBy=-created', { apiKey: flooder.apiKey })));
    expect(new Set(asked.map((r) => r.text)).size).toBe(1);
    expect(asked[0]!.body.results).toHaveLength(3);
    expect(built).toHaveBeenCalledTimes(1);
  });
});
