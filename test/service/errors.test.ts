// Every status code of the seed's table that the core produces, each with the condition
// that causes it, and the properties every response shares: X-Correlation-Id, the JSON
// content type, the exact error body. Also rate limiting, 500 without internals,
// maintenance mode, and that a committed write is readable without a clean shutdown.
import Database from 'better-sqlite3';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { atRest } from '../helpers/at-rest.js';
import type { CallResult } from '../helpers/service.js';
import { createCompany, createConnection, daysAgo, expectErrorBody, EXPIRED_402, FORBIDDEN, JSON_TYPE, MALFORMED, ManualClock, UUID } from './support.js';
import { type TestService, startTestStack } from '../helpers/stack.js';

const INTERNAL = 'Internal server error. Retry later, and quote the correlation id to support if it persists.';
const MAINTENANCE = 'Service unavailable: offline for maintenance. Retry later.';
const TOO_MANY = 'Too many requests. Retry later.';

interface Env {
  main: TestService;
  limited: TestService;
  limitedClock: ManualClock;
  broken: TestService;
  maintenance: TestService;
  alice: { id: string; apiKey: string };
  bob: { id: string; apiKey: string };
  expired: { id: string; apiKey: string };
  /** Keys on the rate-limited service, one per test that spends them. */
  limitedKeys: string[];
  aliceCompany: string;
}

interface StatusScenario {
  status: number;
  condition: string;
  run: (e: Env) => Promise<CallResult>;
  /** Exact `error` text. */
  error?: string;
  /** Headers the response must carry (exact value or pattern). */
  headers?: Record<string, string | RegExp>;
  /** Whether the error body carries item-level `validation`. */
  validation?: boolean;
}

const json = { 'content-type': 'application/json' };
/** Moves the rate-limited service's clock on far enough that every bucket is full again. */
const refill = (e: Env): void => e.limitedClock.set(new Date(e.limitedClock.now().getTime() + 60_000));

const scenarios: StatusScenario[] = [
  { status: 200, condition: 'GET /companies with a valid key', run: (e) => e.main.call('GET', '/companies', { apiKey: e.alice.apiKey }) },
  {
    status: 200,
    condition: 'DELETE of a connection (empty body)',
    run: async (e) => {
      const connection = await createConnection(e.main, e.alice.apiKey, e.aliceCompany, 'gbol');
      return e.main.call('DELETE', `/companies/${e.aliceCompany}/connections/${connection.id}`, { apiKey: e.alice.apiKey });
    },
  },
  {
    status: 204,
    condition: 'DELETE of a company (no body)',
    run: async (e) => {
      const company = await createCompany(e.main, e.alice.apiKey, { name: 'Short Lived' });
      return e.main.call('DELETE', `/companies/${company.id}`, { apiKey: e.alice.apiKey });
    },
  },
  {
    status: 400,
    condition: 'malformed JSON body',
    run: (e) => e.main.call('POST', '/companies', { apiKey: e.alice.apiKey, rawBody: '{"name": "Acme', headers: json }),
    error: 'The request body is not valid JSON.',
  },
  {
    status: 400,
    condition: 'body over 1 MiB',
    run: (e) => e.main.call('POST', '/companies', { apiKey: e.alice.apiKey, rawBody: JSON.stringify({ name: 'x'.repeat(1024 * 1024) }), headers: json }),
    error: 'The request body is larger than the limit of 1048576 bytes.',
  },
  {
    status: 400,
    condition: 'wrong content type (application/xml)',
    run: (e) => e.main.call('POST', '/companies', { apiKey: e.alice.apiKey, rawBody: '<company name="Acme"/>', headers: { 'content-type': 'application/xml' } }),
    error: 'Request bodies must be JSON (Content-Type: application/json).',
  },
  {
    status: 400,
    condition: 'text/plain body',
    run: (e) => e.main.call('POST', '/companies', { apiKey: e.alice.apiKey, rawBody: 'name=Acme', headers: { 'content-type': 'text/plain' } }),
  },
  {
    status: 400,
    condition: 'invalid paging parameter (item-level validation)',
    run: (e) => e.main.call('GET', '/companies?pageSize=0', { apiKey: e.alice.apiKey }),
    validation: true,
  },
  {
    status: 400,
    condition: 'malformed query',
    run: (e) => e.main.call('GET', `/companies?query=${encodeURIComponent('name=')}`, { apiKey: e.alice.apiKey }),
    error: MALFORMED,
  },
  {
    status: 400,
    condition: 'invalid company (item-level validation)',
    run: (e) => e.main.call('POST', '/companies', { apiKey: e.alice.apiKey, body: { name: '###' } }),
    validation: true,
  },
  {
    status: 401,
    condition: 'no API key',
    run: (e) => e.main.call('GET', '/companies', { apiKey: null }),
    error: 'Unauthorized. The API key is missing, malformed or not recognised.',
  },
  {
    status: 402,
    condition: 'expired Free account',
    run: (e) => e.main.call('GET', '/companies', { apiKey: e.expired.apiKey }),
    error: EXPIRED_402.error,
    validation: true,
  },
  {
    status: 403,
    condition: "another client's company",
    run: (e) => e.main.call('GET', `/companies/${e.aliceCompany}`, { apiKey: e.bob.apiKey }),
    error: FORBIDDEN,
  },
  {
    status: 403,
    condition: 'admin-only endpoint with a client key',
    run: (e) => e.main.call('GET', '/admin/clients', { apiKey: e.bob.apiKey }),
    error: 'This endpoint is restricted to administrators.',
  },
  { status: 404, condition: 'unknown route', run: (e) => e.main.call('GET', '/nope', { apiKey: e.alice.apiKey }), error: 'No route GET /nope.' },
  {
    status: 404,
    condition: 'unknown route below a known one (query string not echoed)',
    run: (e) => e.main.call('POST', '/companies/x/y/z?secret=1', { apiKey: e.alice.apiKey }),
    error: 'No route POST /companies/x/y/z.',
  },
  {
    status: 404,
    condition: 'unknown company',
    run: (e) => e.main.call('GET', '/companies/00000000-0000-4000-8000-000000000000', { apiKey: e.alice.apiKey }),
    error: 'Company 00000000-0000-4000-8000-000000000000 not found.',
  },
  {
    status: 405,
    condition: 'DELETE /companies',
    run: (e) => e.main.call('DELETE', '/companies', { apiKey: e.alice.apiKey }),
    error: 'Method not allowed.',
    headers: { allow: 'GET, POST, HEAD' },
  },
  {
    status: 405,
    condition: 'POST /integrations/{key}',
    run: (e) => e.main.call('POST', '/integrations/gbol', { apiKey: e.alice.apiKey, body: {} }),
    headers: { allow: 'GET, HEAD' },
  },
  {
    status: 405,
    condition: 'GET .../authorization',
    run: (e) => e.main.call('GET', `/companies/${e.aliceCompany}/connections/x/authorization`, { apiKey: e.alice.apiKey }),
    headers: { allow: 'PUT' },
  },
  {
    status: 429,
    condition: 'third immediate request at rateLimit 2',
    run: async (e) => {
      refill(e);
      const key = e.limitedKeys[0]!;
      await e.limited.call('GET', '/companies', { apiKey: key });
      await e.limited.call('GET', '/companies', { apiKey: key });
      return e.limited.call('GET', '/companies', { apiKey: key });
    },
    error: TOO_MANY,
    headers: { 'retry-after': /^[1-9]\d*$/, 'x-rate-limit-limit': '2', 'x-rate-limit-remaining': '0', 'x-rate-limit-reset': /^\d+$/ },
  },
  {
    status: 500,
    condition: 'the database failing underneath the service',
    run: async (e) => {
      // On SQLite its connection closed; on PostgreSQL (where a database that cannot be
      // reached is a 503, test/scale/database-lost.test.ts) a table gone from under it.
      if (e.broken.service.db) e.broken.service.db.close();
      else await atRest(e.broken).run('ALTER TABLE companies RENAME TO companies_gone');
      return e.broken.call('GET', '/companies');
    },
    error: INTERNAL,
  },
  {
    status: 503,
    condition: 'maintenance mode',
    run: (e) => e.maintenance.call('GET', '/companies'),
    error: MAINTENANCE,
    headers: { 'retry-after': '60' },
  },
];

describe('status codes', () => {
  const env = {} as Env;
  const internalErrors: Array<{ err: unknown; correlationId: string }> = [];
  const correlationIds: string[] = [];

  beforeAll(async () => {
    env.main = await startTestStack('service');
    env.limitedClock = new ManualClock(new Date());
    env.limited = await startTestStack('service', { rateLimit: 2, clock: env.limitedClock });
    env.broken = await startTestStack('service', { onInternalError: (err, correlationId) => internalErrors.push({ err, correlationId }) });
    env.maintenance = await startTestStack('service', { maintenance: true });
    env.alice = await env.main.createClient('Alice Ltd', 'Paid');
    env.bob = await env.main.createClient('Bob Ltd', 'Paid');
    env.expired = await env.main.createClient('Expired Ltd', 'Free', daysAgo(400));
    env.aliceCompany = (await createCompany(env.main, env.alice.apiKey, { name: 'Alice Co' })).id;
    env.limitedKeys = [];
    for (let i = 0; i < 3; i++) {
      refill(env);
      env.limitedKeys.push((await env.limited.createClient(`Limited ${i}`, 'Paid')).apiKey);
    }
  });

  afterAll(async () => {
    for (const t of [env.main, env.limited, env.broken, env.maintenance]) await t?.stop();
  });

  it.each(scenarios)('$status: $condition', async ({ run, status, error, headers, validation }) => {
    const result = await run(env);
    expect(result.status, result.text).toBe(status);
    const correlationId = result.headers.get('x-correlation-id');
    expect(correlationId).toMatch(UUID);
    correlationIds.push(correlationId!);
    if (result.text === '') {
      expect(result.headers.get('content-type')).toBeNull();
    } else {
      expect(result.headers.get('content-type')).toBe(JSON_TYPE);
    }
    if (status >= 400) {
      expectErrorBody(result, status, error);
      expect('validation' in result.body).toBe(validation === true);
      expect(result.text).not.toMatch(/\bat .*\(|stack|sqlite|database|Error:/i);
    }
    for (const [name, value] of Object.entries(headers ?? {})) {
      if (typeof value === 'string') expect(result.headers.get(name)).toBe(value);
      else expect(result.headers.get(name)).toMatch(value);
    }
  });

  it('gives every response its own correlation id', () => {
    expect(correlationIds).toHaveLength(scenarios.length);
    expect(new Set(correlationIds).size).toBe(correlationIds.length);
  });

  it('reports the 500 internally under the same correlation id, and only there', () => {
    expect(internalErrors).toHaveLength(1);
    expect(internalErrors[0]!.correlationId).toBe(correlationIds[scenarios.findIndex((s) => s.status === 500)]);
    expect(String(internalErrors[0]!.err)).toMatch(env.broken.database ? /relation "companies" does not exist/ : /database/i);
  });

  it('does not take a correlation id from the client', async () => {
    const result = await env.main.call('GET', '/companies', { apiKey: env.alice.apiKey, headers: { 'X-Correlation-Id': 'client-chosen', 'X-Request-Id': 'also-client' } });
    expect(result.headers.get('x-correlation-id')).toMatch(UUID);
  });

  it('rate limits per key, with X-Rate-Limit-* headers on every response of that key', async () => {
    refill(env);
    const now = env.limitedClock.now().getTime();
    const key = env.limitedKeys[1]!;
    const burst: CallResult[] = [];
    for (const path of ['/companies', '/nope', '/companies', '/companies']) burst.push(await env.limited.call('GET', path, { apiKey: key }));
    expect(burst.map((r) => r.status)).toEqual([200, 404, 429, 429]);
    expect(burst.map((r) => r.headers.get('x-rate-limit-remaining'))).toEqual(['1', '0', '0', '0']);
    for (const result of burst) {
      expect(result.headers.get('x-rate-limit-limit')).toBe('2');
      const reset = Number(result.headers.get('x-rate-limit-reset'));
      expect(Number.isInteger(reset)).toBe(true);
      expect(reset).toBeGreaterThanOrEqual(Math.floor(now / 1000));
      expect(reset).toBeLessThanOrEqual(Math.ceil(now / 1000) + 1);
    }
    expect(burst[2]!.headers.get('retry-after')).toBe('1');

    // Another key has its own bucket.
    expect((await env.limited.call('GET', '/companies', { apiKey: env.limitedKeys[2]! })).status).toBe(200);
    // Half a second refills one request at 2 per second.
    env.limitedClock.set(new Date(now + 500));
    const refilled = [await env.limited.call('GET', '/companies', { apiKey: key }), await env.limited.call('GET', '/companies', { apiKey: key })];
    expect(refilled.map((r) => r.status)).toEqual([200, 429]);
  });

  it('answers 503 in maintenance even without a key, and serves again when it ends', async () => {
    expectErrorBody(await env.maintenance.call('GET', '/companies', { apiKey: null }), 503, MAINTENANCE);
    expectErrorBody(await env.maintenance.call('POST', '/companies', { body: { name: 'During Maintenance' } }), 503, MAINTENANCE);
    env.maintenance.service.setMaintenance(false);
    expect((await env.maintenance.call('GET', '/companies')).status).toBe(200);
    env.maintenance.service.setMaintenance(true);
    expectErrorBody(await env.maintenance.call('GET', '/companies'), 503, MAINTENANCE);
  });

  it('gives an expired account the exact API.md 402 body on POST too', async () => {
    const result = await env.main.call('POST', '/companies', { apiKey: env.expired.apiKey, body: { name: 'Too Late' } });
    expect(result.body).toEqual({ ...EXPIRED_402, correlationId: result.headers.get('x-correlation-id') });
  });
});

describe('kill safety of the store', () => {
  let t: TestService;

  beforeAll(async () => {
    t = await startTestStack('service');
  });

  afterAll(async () => {
    await t?.stop();
  });

  it('a committed write is readable by another connection while the server still runs (on SQLite, it is in the WAL)', async () => {
    const client = await t.createClient('Durable Ltd', 'Paid');
    const company = await createCompany(t, client.apiKey, { name: 'Durable Co', tags: { ferryKey: 'D-1' } });

    if (!t.database) {
      const file = join(t.dataDir, 'ferry.db');
      expect(statSync(`${file}-wal`).size).toBeGreaterThan(0);
      const reader = new Database(file, { readonly: true, fileMustExist: true });
      try {
        expect(reader.pragma('journal_mode', { simple: true })).toBe('wal');
      } finally {
        reader.close();
      }
    }
    const row = await atRest(t).get('SELECT name, client_id, tags FROM companies WHERE id = ?', company.id);
    expect(row).toEqual({ name: 'Durable Co', client_id: client.id, tags: JSON.stringify({ ferryKey: 'D-1' }) });
    // The server is unaffected by the second connection.
    expect((await t.call('GET', `/companies/${company.id}`, { apiKey: client.apiKey })).status).toBe(200);
  });
});
