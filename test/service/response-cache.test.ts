// GET /companies is served from a response cache; no write, from this connection or from
// another one (the sync worker's), may leave a stale page behind.
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type TestService } from '../helpers/service.js';

describe('companies list response cache', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startService();
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
    const other = new Database(join(t.dataDir, 'ferry.db'));
    other.prepare("UPDATE companies SET name = 'Changed elsewhere'").run();
    other.close();
    expect(await names()).toEqual(['Changed elsewhere']);
  });

  it('keeps pages of different clients, queries and hosts apart', async () => {
    const client = await t.createClient('Other', 'Paid');
    await t.call('POST', '/companies', { apiKey: client.apiKey, body: { name: 'Theirs' } });
    expect((await t.call('GET', '/companies', { apiKey: client.apiKey })).body.results.map((c: { name: string }) => c.name)).toEqual(['Theirs']);
    expect(await names()).toEqual(['Changed elsewhere']);
    expect(await names('/companies?query=name~nothing')).toEqual([]);
    const viaLocalhost = await fetch(t.baseUrl.replace('127.0.0.1', 'localhost') + '/companies', { headers: { authorization: `Basic ${Buffer.from(t.adminKey).toString('base64')}` } });
    expect(((await viaLocalhost.json()) as any).results[0].redirect).toContain('localhost');
  });
});
