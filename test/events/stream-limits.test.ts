// Open event streams are capped per API key (10), per account (50) and per process (503
// beyond it), each refusal with Retry-After and the error envelope; a stream that ends
// gives its slot back at once; and a revoked key's streams end within a second, while the
// account's other keys stream on. On a real service (127.0.0.1), on the test run's store.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from 'node:net';
import { basic } from '../helpers/service.js';
import { openStream, type Reader } from '../helpers/sse-reader.js';
import { startTestStack, type TestService } from '../helpers/stack.js';

type Opened = Awaited<ReturnType<typeof openStream>>;

/** Opens `count` streams at once; every one that started is returned with the refusals. */
async function openMany(t: TestService, apiKey: string, count: number): Promise<Opened[]> {
  return Promise.all(Array.from({ length: count }, () => openStream(t.baseUrl, apiKey, '/events/stream')));
}

/** Opens a stream, asking again at once after a 429 until `ms` have passed: a slot is freed when the service sees the socket close. */
async function openWhenFree(t: TestService, apiKey: string, ms = 5000): Promise<Opened> {
  const deadline = Date.now() + ms;
  for (;;) {
    const reader = await openStream(t.baseUrl, apiKey, '/events/stream');
    if (reader.status !== 429 || Date.now() > deadline) return reader;
  }
}

const closeAll = (readers: Reader[]) => {
  for (const reader of readers) reader.close();
};

describe('event stream caps', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestStack('service');
  });
  afterAll(async () => {
    await t?.stop();
  });

  const newKey = async (clientId: string): Promise<string> => {
    const created = await t.call('POST', `/admin/clients/${clientId}/apiKeys`);
    expect(created.status).toBe(201);
    return created.body.apiKey as string;
  };

  it('opens 10 streams on one key; the 11th is 429 with Retry-After and the error envelope; a closed one frees its slot', async () => {
    const { apiKey } = await t.createClient('Ten streams', 'Paid');
    const readers = await openMany(t, apiKey, 10);
    expect(readers.map((r) => r.status)).toEqual(Array(10).fill(200));

    const refused = await openStream(t.baseUrl, apiKey, '/events/stream');
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    const body = JSON.parse(refused.body);
    expect(body).toMatchObject({ statusCode: 429, service: 'PublicApi', correlationId: expect.any(String) });
    expect(body.error).toMatch(/at most 10 per API key/);

    readers.shift()!.close();
    const next = await openWhenFree(t, apiKey);
    expect(next.status).toBe(200);
    readers.push(next);
    expect((await openStream(t.baseUrl, apiKey, '/events/stream')).status).toBe(429);
    // The key's other requests are not held up by its streams.
    expect((await t.call('GET', '/companies', { apiKey })).status).toBe(200);
    closeAll(readers);
  });

  it('counts no slot for HEAD, and none stays taken by readers that left, even before their stream started', async () => {
    const { apiKey } = await t.createClient('Leaving readers', 'Paid');
    for (let i = 0; i < 12; i += 1) expect((await t.call('HEAD', '/events/stream', { apiKey })).status).toBe(200);
    // Readers that hang up a moment after asking: some before the service answers them, some after.
    const { port } = new URL(t.baseUrl);
    const hangUps = Array.from({ length: 60 }, (_, i) => new Promise<void>((resolve) => {
      const socket = connect(Number(port), '127.0.0.1', () => {
        socket.write(`GET /events/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${basic(apiKey)}\r\n\r\n`);
        setTimeout(() => socket.destroy(), i % 6);
      });
      socket.on('error', () => undefined);
      socket.on('close', () => resolve());
    }));
    await Promise.all(hangUps);
    const readers: Opened[] = [];
    for (let i = 0; i < 10; i += 1) readers.push(await openWhenFree(t, apiKey));
    expect(readers.map((r) => r.status)).toEqual(Array(10).fill(200));
    closeAll(readers);
  });

  it('opens 50 streams per account over its keys; the 51st is 429 naming the account; another account still streams', async () => {
    const { id, apiKey: first } = await t.createClient('Fifty streams', 'Paid');
    const keys = [first, ...await Promise.all(Array.from({ length: 5 }, () => newKey(id)))];
    const readers = (await Promise.all(keys.slice(0, 5).map((key) => openMany(t, key, 10)))).flat();
    expect(readers.filter((r) => r.status === 200)).toHaveLength(50);

    const refused = await openStream(t.baseUrl, keys[5]!, '/events/stream');
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBeDefined();
    expect(JSON.parse(refused.body).error).toMatch(/at most 50 per account/);

    const other = await t.createClient('Another account', 'Paid');
    const theirs = await openStream(t.baseUrl, other.apiKey, '/events/stream');
    expect(theirs.status).toBe(200);
    closeAll([...readers, theirs]);
  });
});

describe('event stream caps of the process', () => {
  it('answers 503 with Retry-After and the error envelope once the process holds --max-streams', async () => {
    const t = await startTestStack('service', { streamLimits: { total: 3 } });
    try {
      const accounts = await Promise.all([1, 2, 3, 4].map((n) => t.createClient(`Process cap ${n}`, 'Paid')));
      const readers = await Promise.all(accounts.slice(0, 3).map((a) => openStream(t.baseUrl, a.apiKey, '/events/stream')));
      expect(readers.map((r) => r.status)).toEqual([200, 200, 200]);
      const refused = await openStream(t.baseUrl, accounts[3]!.apiKey, '/events/stream');
      expect(refused.status).toBe(503);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(JSON.parse(refused.body)).toMatchObject({ statusCode: 503, service: 'PublicApi', error: expect.stringMatching(/event streams/) });
      closeAll(readers);
    } finally {
      await t.stop();
    }
  });
});

describe('a revoked key\'s streams', () => {
  it('end within a second of the revocation (the heartbeat is 15 s); the account\'s other keys stream on', async () => {
    const t = await startTestStack('service');
    try {
      const { id, apiKey: kept } = await t.createClient('Revoking', 'Paid');
      const created = await t.call('POST', `/admin/clients/${id}/apiKeys`);
      expect(created.status).toBe(201);
      const revoked = await Promise.all([1, 2].map(() => openStream(t.baseUrl, created.body.apiKey, '/events/stream')));
      const staying = await openStream(t.baseUrl, kept, '/events/stream');
      for (const reader of [...revoked, staying]) await reader.until('the start', () => reader.text().length > 0);

      expect((await t.call('DELETE', `/admin/clients/${id}/apiKeys/${created.body.id}`)).status).toBe(204);
      await Promise.all(revoked.map((reader) => reader.until('the end of the revoked key\'s stream', () => reader.ended, 1000)));

      expect(staying.ended).toBe(false);
      const company = await t.call('POST', '/companies', { apiKey: kept, body: { name: 'Still streaming' } });
      await staying.until('the event', () => staying.messages.length >= 1);
      expect(JSON.parse(staying.messages[0]!.data).payload.id).toBe(company.body.id);
      staying.close();
    } finally {
      await t.stop();
    }
  });
});
