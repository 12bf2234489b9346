// Several API instances on one PostgreSQL database behave as one service: a write through
// one is seen at once through the others (response and auth caches), the admin account and
// X-Client-Id work the same everywhere, one key's rate limit holds across them all, and a
// key revoked through one ends its event streams on the others.
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createService, type Service } from '../../src/service/app.js';
import { describePostgres, freshDatabase } from '../helpers/postgres.js';
import { callApi, tempDir, type CallOptions, type CallResult } from '../helpers/service.js';
import { openStream } from '../helpers/sse-reader.js';

interface Instance {
  service: Service;
  url: string;
  dataDir: string;
  call(method: string, path: string, options?: CallOptions): Promise<CallResult>;
}

/** The token-encryption key every instance of a test shares, as FERRY_SECRET_KEY. */
const sharedKey = (): NodeJS.ProcessEnv => ({ FERRY_SECRET_KEY: randomBytes(32).toString('hex') });

async function startInstances(database: string, count: number, rateLimit: number, env = sharedKey()): Promise<Instance[]> {
  // Started together: one of them makes the admin account, each writes a key of it into its own data dir.
  return Promise.all(Array.from({ length: count }, async () => {
    const dataDir = tempDir('ferry-instance-');
    const service = await createService({ dataDir, database, rateLimit, env });
    const url = await service.listen({ port: 0, host: '127.0.0.1' });
    return { service, url, dataDir, call: (method: string, path: string, options?: CallOptions) => callApi(url, service.adminKey, method, path, options) };
  }));
}

async function stopInstances(instances: Instance[]): Promise<void> {
  await Promise.all(instances.map((i) => i.service.close()));
  for (const i of instances) rmSync(i.dataDir, { recursive: true, force: true });
}

describePostgres('three API instances on one database', () => {
  let instances: Instance[];
  let alice: { id: string; apiKey: string };
  let database: string;

  beforeAll(async () => {
    database = await freshDatabase();
    instances = await startInstances(database, 3, 0);
    const made = await instances[0]!.call('POST', '/admin/clients', { body: { name: 'Alice Ltd', plan: 'Paid' } });
    expect(made.status).toBe(201);
    alice = { id: made.body.id, apiKey: made.body.apiKey };
  });

  afterAll(async () => {
    await stopInstances(instances);
  });

  it('share one admin account, each with a key of it in its own data dir', async () => {
    const keys = new Set(instances.map((i) => i.service.adminKey));
    expect(keys.size).toBe(3);
    const seen = await instances[2]!.call('GET', '/admin/clients');
    expect(seen.status).toBe(200);
    const adminAccounts = seen.body.results.filter((c: { name: string }) => c.name === 'ferry admin');
    expect(adminAccounts).toHaveLength(1);
    // Every instance's admin key works on every instance.
    for (const i of instances) {
      for (const other of instances) expect((await callApi(other.url, i.service.adminKey, 'GET', '/admin/clients')).status).toBe(200);
    }
  });

  it('a company made through one instance is listed at once through the others, after they cached the list', async () => {
    const before = await Promise.all(instances.map((i) => i.call('GET', '/companies', { apiKey: alice.apiKey })));
    for (const list of before) expect(list.status).toBe(200);
    const made = await instances[0]!.call('POST', '/companies', { apiKey: alice.apiKey, body: { name: 'Made on one' } });
    expect(made.status).toBe(200);
    for (const i of instances.slice(1)) {
      const list = await i.call('GET', '/companies', { apiKey: alice.apiKey });
      expect(list.body.results.map((c: { id: string }) => c.id)).toContain(made.body.id);
    }
  });

  it('a key revoked through one instance is refused at once by the others, which had just let it in', async () => {
    const key = await instances[1]!.call('POST', `/admin/clients/${alice.id}/apiKeys`);
    expect(key.status).toBe(201);
    for (const i of instances) expect((await i.call('GET', '/companies', { apiKey: key.body.apiKey })).status).toBe(200);
    const revoked = await instances[1]!.call('DELETE', `/admin/clients/${alice.id}/apiKeys/${key.body.id}`);
    expect(revoked.status).toBe(204);
    for (const i of instances) expect((await i.call('GET', '/companies', { apiKey: key.body.apiKey })).status).toBe(403);
  });

  it('a key revoked through one instance ends its event streams on another within a second', async () => {
    const key = await instances[0]!.call('POST', `/admin/clients/${alice.id}/apiKeys`);
    expect(key.status).toBe(201);
    const readers = await Promise.all([instances[1]!, instances[2]!].map((i) => openStream(i.url, key.body.apiKey, '/events/stream')));
    for (const reader of readers) {
      expect(reader.status).toBe(200);
      await reader.until('the start', () => reader.text().length > 0);
    }
    expect((await instances[0]!.call('DELETE', `/admin/clients/${alice.id}/apiKeys/${key.body.id}`)).status).toBe(204);
    await Promise.all(readers.map((reader) => reader.until('the end of the stream', () => reader.ended, 1000)));
  });

  it('counts open event streams per instance: a key at its cap on one instance still streams through another', async () => {
    const key = await instances[0]!.call('POST', `/admin/clients/${alice.id}/apiKeys`);
    expect(key.status).toBe(201);
    const apiKey: string = key.body.apiKey;
    const readers = await Promise.all(Array.from({ length: 10 }, () => openStream(instances[0]!.url, apiKey, '/events/stream')));
    expect(readers.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect((await openStream(instances[0]!.url, apiKey, '/events/stream')).status).toBe(429);
    const elsewhere = await openStream(instances[1]!.url, apiKey, '/events/stream');
    expect(elsewhere.status).toBe(200);
    for (const reader of [...readers, elsewhere]) reader.close();
  });

  it('an instance with another token-encryption key is refused at start, saying what to do', async () => {
    const dataDir = tempDir('ferry-instance-');
    try {
      await expect(createService({ dataDir, database, rateLimit: 0, env: sharedKey() })).rejects.toThrow(
        /holds tokens sealed with another token-encryption key than this process's\. Give every ferry process on one database the same key/,
      );
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('X-Client-Id acts for the client on every instance', async () => {
    for (const i of instances) {
      const list = await i.call('GET', '/companies', { headers: { 'X-Client-Id': alice.id } });
      expect(list.status).toBe(200);
      expect(list.body.results.map((c: { name: string }) => c.name)).toContain('Made on one');
    }
  });
});

describePostgres('one key\'s rate limit across three instances', () => {
  const LIMIT = 20;
  const SECONDS = 3;
  let instances: Instance[];

  beforeAll(async () => {
    instances = await startInstances(await freshDatabase(), 3, LIMIT);
  });

  afterAll(async () => {
    await stopInstances(instances);
  });

  it(`admits within 10% of ${LIMIT}/s and one burst, however the requests are spread`, async () => {
    const made = await instances[0]!.call('POST', '/admin/clients', { body: { name: 'Hammer Ltd', plan: 'Paid' } });
    expect(made.status).toBe(201);
    const apiKey: string = made.body.apiKey;
    let admitted = 0;
    let refused = 0;
    const started = Date.now();
    const deadline = started + SECONDS * 1000;
    await Promise.all(instances.flatMap((i) => Array.from({ length: 4 }, async () => {
      while (Date.now() < deadline) {
        const answer = await i.call('GET', '/companies', { apiKey });
        if (answer.status === 200) admitted += 1;
        else if (answer.status === 429) refused += 1;
        else throw new Error(`unexpected ${answer.status}: ${answer.text}`);
      }
    })));
    const seconds = (Date.now() - started) / 1000;
    const allowed = LIMIT * seconds + LIMIT;
    expect(refused).toBeGreaterThan(0);
    expect(admitted).toBeLessThanOrEqual(allowed * 1.1);
    expect(admitted).toBeGreaterThanOrEqual(LIMIT * seconds * 0.9);
  });
});
