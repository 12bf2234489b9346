// The database going away while the service runs: requests answer 503 with Retry-After
// (never a 500 or a hang), /readyz says why and the unreachable gauge is 1, the person
// running the service is told once, and once more when it is back, and then everything
// answers as before with nothing lost.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createService, type Service } from '../../src/service/app.js';
import { describePostgres, freshDatabase } from '../helpers/postgres.js';
import { callApi, tempDir } from '../helpers/service.js';
import { getJson, parseExposition, total } from '../helpers/observability.js';
import { cutDatabase } from './cut-database.js';

describePostgres('the database going away mid-run', () => {
  let service: Service;
  let url: string;
  let dataDir: string;
  let database: string;
  const notices: string[] = [];
  const internal: unknown[] = [];

  beforeAll(async () => {
    const databaseUrl = await freshDatabase();
    database = new URL(databaseUrl).pathname.slice(1);
    dataDir = tempDir('ferry-lost-');
    service = await createService({
      dataDir, database: databaseUrl, rateLimit: 0, metrics: true,
      onNotice: (message) => notices.push(message), onInternalError: (err) => internal.push(err),
    });
    url = await service.listen({ port: 0, host: '127.0.0.1' });
  });

  afterAll(async () => {
    await cutDatabase(database, true);
    await service.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers 503 with Retry-After while it is gone, says so once, and serves again when it is back', async () => {
    const call = (method: string, path: string, body?: unknown) => callApi(url, service.adminKey, method, path, body === undefined ? {} : { body });
    const made = await call('POST', '/admin/clients', { name: 'Kept Ltd', plan: 'Paid' });
    expect(made.status).toBe(201);
    const company = await callApi(url, made.body.apiKey, 'POST', '/companies', { body: { name: 'Made before' } });
    expect(company.status).toBe(200);

    await cutDatabase(database, false);
    for (const [method, path, body] of [['GET', '/companies'], ['POST', '/companies', { name: 'Made while gone' }], ['GET', '/admin/clients']] as const) {
      const answer = await callApi(url, made.body.apiKey, method, path, body ? { body } : {});
      expect(answer.status, `${method} ${path}`).toBe(503);
      expect(answer.headers.get('retry-after')).toBe('5');
      expect(answer.body.error).toBe('Service unavailable: its database cannot be reached. Retry later.');
      expect(answer.body.correlationId).toBeTruthy();
    }
    // The balancer's view: alive, not ready, and why; the gauge an alert watches.
    expect((await getJson(`${url}/healthz`)).status).toBe(200);
    expect(await getJson(`${url}/readyz`)).toMatchObject({ status: 503, body: { status: 'not ready', reasons: ['the database cannot be reached'] } });
    expect(total(parseExposition((await service.exposition!()).text), 'ferry_database_unreachable')).toBe(1);
    expect(notices.filter((n) => n.startsWith('the database cannot be reached'))).toHaveLength(1);
    expect(internal.map(String)).toEqual([]);

    await cutDatabase(database, true);
    const deadline = Date.now() + 20_000;
    let list = await callApi(url, made.body.apiKey, 'GET', '/companies');
    while (list.status !== 200 && Date.now() < deadline) list = await callApi(url, made.body.apiKey, 'GET', '/companies');
    expect(list.status).toBe(200);
    expect(list.body.results.map((c: { name: string }) => c.name)).toEqual(['Made before']);
    expect(notices.at(-1)).toBe('the database is reachable again');
    expect(await getJson(`${url}/readyz`)).toMatchObject({ status: 200, body: { status: 'ready' } });
    expect(total(parseExposition((await service.exposition!()).text), 'ferry_database_unreachable')).toBe(0);
  });
});
