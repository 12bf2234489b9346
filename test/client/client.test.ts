// The real ApiClient against small real HTTP servers (node:http on 127.0.0.1:0), each
// scripted for one scenario: auth headers, typed errors, which failures are retried (and
// which are not, for a POST), Retry-After, backoff, pacing by the rate-limit headers,
// paging, timeouts. Servers count what they receive; times are lower bounds, never sleeps.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiClient, backoffMs, type ClientOptions } from '../../src/client/client.js';
import { ApiRequestError, ConnectionError, UnexpectedAnswerError } from '../../src/client/errors.js';
import { Pacer, PROBE_WAIT_MS, PROBES, type Permit } from '../../src/client/pacer.js';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
  at: number;
}

type Handler = (req: IncomingMessage, res: ServerResponse, n: number, body: string) => void;

interface Scripted {
  url: string;
  port: number;
  seen: Seen[];
  close(): Promise<void>;
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A server that answers the n-th request (0-based) with handler(req, res, n, body). */
async function serve(handler: Handler, port = 0): Promise<Scripted> {
  const seen: Seen[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const n = seen.length;
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body, at: performance.now() });
      handler(req, res, n, body);
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const actual = (server.address() as AddressInfo).port;
  const close = async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  cleanups.push(close);
  return { url: `http://127.0.0.1:${actual}`, port: actual, seen, close };
}

function client(url: string, options: Partial<ClientOptions> = {}): ApiClient {
  const c = new ApiClient({ baseUrl: url, apiKey: 'fy_test-key', ...options });
  cleanups.push(() => c.close());
  return c;
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

function envelope(status: number, error: string, extra: Record<string, unknown> = {}) {
  return { statusCode: status, service: 'PublicApi', error, correlationId: `cid-${status}`, ...extra };
}

/** Fails the first `failures` requests with `fail`, then answers 200 {ok: n}. */
function failing(failures: number, fail: (res: ServerResponse, req: IncomingMessage) => void): Handler {
  return (req, res, n) => (n < failures ? fail(res, req) : json(res, 200, { ok: n }));
}

const reset = (_res: ServerResponse, req: IncomingMessage) => req.socket.destroy();

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected the request to fail');
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('ApiClient: requests and headers', () => {
  it('sends Basic base64(key), JSON headers and X-Client-Id only when clientId is set', async () => {
    const s = await serve((_req, res) => json(res, 200, { ok: true }));
    await client(s.url).get('/companies');
    await client(s.url, { clientId: 'client-42' }).post('/companies', { name: 'Acme' });
    const [plain, acting] = s.seen;
    expect(plain!.headers.authorization).toBe(`Basic ${Buffer.from('fy_test-key').toString('base64')}`);
    expect(plain!.headers['x-client-id']).toBeUndefined();
    expect(plain!.headers.accept).toBe('application/json');
    expect(plain!.headers['content-type']).toBeUndefined();
    expect(acting!.headers.authorization).toBe('Basic ZnlfdGVzdC1rZXk=');
    expect(acting!.headers['x-client-id']).toBe('client-42');
    expect(acting!.headers['content-type']).toBe('application/json');
    expect(JSON.parse(acting!.body)).toEqual({ name: 'Acme' });
  });

  it('keeps the base URL path, adds the query (URL-encoded, empty values dropped) to a path with or without one', async () => {
    const s = await serve((_req, res) => json(res, 200, {}));
    const c = client(`${s.url}/api/`);
    await c.get('/companies', { query: { query: 'name=A && b', page: 2, orderBy: undefined, pageSize: '' } });
    await c.get('/companies?page=3', { query: { pageSize: 10 } });
    expect(s.seen.map((r) => r.url)).toEqual(['/api/companies?query=name%3DA%20%26%26%20b&page=2', '/api/companies?page=3&pageSize=10']);
  });

  it('returns undefined for an empty body (204), and exchange() gives status, headers and time', async () => {
    const s = await serve((_req, res, n) => {
      if (n === 0) {
        res.writeHead(204);
        res.end();
      } else json(res, 201, { id: 'x' }, { 'x-correlation-id': 'cid-1' });
    });
    const c = client(s.url);
    expect(await c.delete('/thing')).toBeUndefined();
    const ex = await c.exchange<{ id: string }>('POST', '/thing', { body: {} });
    expect(ex).toMatchObject({ status: 201, body: { id: 'x' } });
    expect(ex.headers['x-correlation-id']).toBe('cid-1');
    expect(ex.ms).toBeGreaterThanOrEqual(0);
  });
});

describe('ApiClient: typed errors', () => {
  it('keeps status, the error text, validation items and the correlation id (not retried)', async () => {
    const validation = { errors: [{ itemId: 'Company', message: 'Company limit exceeded. Learn more at https://x', validatorName: 'CreateCompany' }], warnings: [] };
    const s = await serve((_req, res) => json(res, 402, envelope(402, 'CompanyValidationException: Company limit exceeded', { validation })));
    const err = await rejection(client(s.url).post('/companies', { name: 'x' }));
    expect(err).toBeInstanceOf(ApiRequestError);
    const e = err as ApiRequestError;
    expect(e.status).toBe(402);
    expect(e.message).toBe('CompanyValidationException: Company limit exceeded');
    expect(e.validation).toEqual(validation.errors);
    expect(e.correlationId).toBe('cid-402');
    expect(e).toMatchObject({ method: 'POST', path: '/companies' });
    expect(s.seen).toHaveLength(1);
  });

  it.each([400, 401, 403, 404, 409])('%i is not retried, whatever the method', async (status) => {
    const s = await serve((_req, res) => json(res, status, envelope(status, `error ${status}`)));
    const err = (await rejection(client(s.url).get('/companies/x'))) as ApiRequestError;
    expect(err).toMatchObject({ status, message: `error ${status}`, correlationId: `cid-${status}`, validation: [] });
    expect(s.seen).toHaveLength(1);
  });

  it('a non-JSON error body keeps the status, and the X-Correlation-Id header stands in for the body', async () => {
    const s = await serve((_req, res) => {
      res.writeHead(418, { 'content-type': 'text/html', 'x-correlation-id': 'cid-header' });
      res.end('<html>teapot</html>');
    });
    const err = (await rejection(client(s.url).get('/x'))) as ApiRequestError;
    expect(err).toBeInstanceOf(ApiRequestError);
    expect(err).toMatchObject({ status: 418, message: 'HTTP 418', correlationId: 'cid-header', validation: [] });
  });

  it.each([
    { status: 200, type: 'text/html', body: '<html>Sign in</html>', message: 'answered GET /integrations with text/html that is not the service\'s JSON.' },
    { status: 200, type: 'application/json', body: 'not json at all', message: 'answered GET /integrations with application/json that is not the service\'s JSON.' },
    { status: 404, type: 'text/html', body: '<html>Not Found</html>', message: 'answered GET /integrations with 404 and text/html that is not the service\'s JSON.' },
    { status: 501, type: 'text/html', body: '<html>Unsupported method</html>', message: 'answered GET /integrations with 501 and text/html that is not the service\'s JSON.' },
    { status: 501, type: 'text/plain', body: '', message: 'answered GET /integrations with 501 and an empty body that is not the service\'s JSON.' },
    { status: 405, type: 'text/plain', body: 'Method Not Allowed', message: 'answered GET /integrations with 405 and text/plain that is not the service\'s JSON.' },
    // Another JSON server (the sandbox platforms, say): its error is not the service's envelope, which names its statusCode.
    { status: 404, type: 'application/json', body: '{"error":"not_found","message":"No route GET /integrations."}', message: 'answered GET /integrations with 404 and application/json that is not the service\'s JSON.' },
  ])('a $status $type page where the API should be is not the service: one error naming the URL, not retried', async ({ status, type, body, message }) => {
    const s = await serve((_req, res) => {
      res.writeHead(status, { 'content-type': type });
      res.end(body);
    });
    const err = await rejection(client(s.url).get('/integrations', { query: { pageSize: 5 } }));
    expect(err).toBeInstanceOf(UnexpectedAnswerError);
    expect((err as Error).message).toBe(`${s.url} ${message}`);
    expect((err as UnexpectedAnswerError).hint).toMatch(/^Is --base-url/);
    expect(s.seen).toHaveLength(1);
  });
});

describe('ApiClient: retries', () => {
  it('a 429 is retried after Retry-After (measured: the retry waited at least that long)', async () => {
    const s = await serve(failing(1, (res) => json(res, 429, envelope(429, 'Too many requests'), { 'retry-after': '1' })));
    const started = performance.now();
    expect(await client(s.url).get('/companies')).toEqual({ ok: 1 });
    expect(s.seen).toHaveLength(2);
    expect(s.seen[1]!.at - s.seen[0]!.at).toBeGreaterThanOrEqual(1000);
    expect(performance.now() - started).toBeGreaterThanOrEqual(1000);
  });

  it('after a 429 the whole client holds, not only the request that got it', async () => {
    let limited = false;
    const s = await serve((req, res) => {
      if (req.url === '/first' && !limited) {
        limited = true;
        json(res, 429, envelope(429, 'Too many requests'), { 'retry-after': '1' });
      } else json(res, 200, { url: req.url });
    });
    const lines: string[] = [];
    const c = client(s.url, { log: (line) => lines.push(line) });
    const first = c.get('/first');
    while (!lines.some((l) => l.startsWith('GET /first → 429'))) await new Promise((resolve) => setTimeout(resolve, 5));
    const second = await c.get('/second');
    await first;
    expect(second).toEqual({ url: '/second' });
    const firstSeen = s.seen[0]!.at;
    const secondSeen = s.seen.find((r) => r.url === '/second')!.at;
    expect(secondSeen - firstSeen).toBeGreaterThanOrEqual(1000);
  });

  for (const method of ['GET', 'PUT', 'DELETE'] as const) {
    it(`${method} is retried after 500, 503 and a connection reset`, async () => {
      const s = await serve((req, res, n) => {
        if (n === 0) json(res, 500, envelope(500, 'boom'));
        else if (n === 1) json(res, 503, envelope(503, 'maintenance'));
        else if (n === 2) req.socket.destroy();
        else json(res, 200, { ok: n });
      });
      const lines: string[] = [];
      expect(await client(s.url, { log: (l) => lines.push(l) }).request(method, '/thing', method === 'PUT' ? { body: { a: 1 } } : {})).toEqual({ ok: 3 });
      expect(s.seen.map((r) => r.method)).toEqual([method, method, method, method]);
      expect(lines.filter((l) => l.includes('failed'))).toHaveLength(1);
    });
  }

  it('a GET is retried when the connection breaks in the middle of the body', async () => {
    const s = await serve((req, res, n) => {
      if (n === 0) {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
        res.write('{"results":[');
        setTimeout(() => req.socket.destroy(), 20);
      } else json(res, 200, { ok: n });
    });
    expect(await client(s.url).get('/companies')).toEqual({ ok: 1 });
    expect(s.seen).toHaveLength(2);
  });

  it('backoffMs: jittered, exponential from 200 ms, capped at 10 s, never below half', () => {
    for (let attempt = 0; attempt <= 12; attempt += 1) {
      const base = Math.min(10_000, 200 * 2 ** attempt);
      const samples = Array.from({ length: 200 }, () => backoffMs(attempt));
      for (const ms of samples) {
        expect(ms).toBeGreaterThanOrEqual(base / 2);
        expect(ms).toBeLessThanOrEqual(base);
      }
      expect(new Set(samples).size).toBeGreaterThan(100); // jittered, not a constant
    }
  });

  it('retries 500s with growing waits (backoff measured between the attempts)', async () => {
    const s = await serve(failing(3, (res) => json(res, 500, envelope(500, 'boom'))));
    await client(s.url).get('/x');
    const gaps = s.seen.slice(1).map((r, i) => r.at - s.seen[i]!.at);
    expect(gaps).toHaveLength(3);
    expect(gaps[0]).toBeGreaterThanOrEqual(100 - 2);
    expect(gaps[1]).toBeGreaterThanOrEqual(200 - 2);
    expect(gaps[2]).toBeGreaterThanOrEqual(400 - 2);
  });

  it('maxRetries is respected: maxRetries + 1 attempts, then the last error', async () => {
    const s = await serve((_req, res) => json(res, 503, envelope(503, 'maintenance')));
    const err = (await rejection(client(s.url, { maxRetries: 2 }).get('/x'))) as ApiRequestError;
    expect(err).toMatchObject({ status: 503, message: 'maintenance' });
    expect(s.seen).toHaveLength(3);
    const none = await serve((_req, res) => json(res, 500, envelope(500, 'boom')));
    await rejection(client(none.url, { maxRetries: 0 }).get('/x'));
    expect(none.seen).toHaveLength(1);
  });

  it('Retry-After as an HTTP date is honoured too', async () => {
    const s = await serve(failing(1, (res) => json(res, 503, envelope(503, 'maintenance'), { 'retry-after': new Date(Date.now() + 2000).toUTCString() })));
    await client(s.url).get('/x');
    // The date has whole-second precision: at least 1 s of the 2 s is left when it is read.
    expect(s.seen[1]!.at - s.seen[0]!.at).toBeGreaterThanOrEqual(1000);
  });

  it('a Retry-After longer than maxRetryAfterSeconds fails at once with it, instead of sleeping', async () => {
    const s = await serve((_req, res) => json(res, 429, envelope(429, 'Too many requests'), { 'retry-after': '3600' }));
    const started = performance.now();
    const err = (await rejection(client(s.url, { maxRetryAfterSeconds: 60 }).get('/x'))) as ApiRequestError;
    expect(err).toMatchObject({ status: 429, retryAfterSeconds: 3600 });
    expect(s.seen).toHaveLength(1);
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('a 429 past maxRetries keeps its Retry-After on the error', async () => {
    const s = await serve((_req, res) => json(res, 429, envelope(429, 'Too many requests'), { 'retry-after': '0' }));
    const err = (await rejection(client(s.url, { maxRetries: 1 }).get('/x'))) as ApiRequestError;
    expect(err).toMatchObject({ status: 429, retryAfterSeconds: 0 });
    expect(s.seen).toHaveLength(2);
  });
});

describe('ApiClient: when a POST is retried', () => {
  it('not after a 500: exactly one request', async () => {
    const s = await serve(failing(1, (res) => json(res, 500, envelope(500, 'boom'))));
    const err = (await rejection(client(s.url).post('/companies', { name: 'x' }))) as ApiRequestError;
    expect(err).toMatchObject({ status: 500, message: 'boom', correlationId: 'cid-500' });
    expect(s.seen).toHaveLength(1);
  });

  it('not after a connection reset: exactly one request, a ConnectionError', async () => {
    const s = await serve(failing(1, reset));
    const err = await rejection(client(s.url).post('/companies', { name: 'x' }));
    expect(err).toBeInstanceOf(ConnectionError);
    expect(err.message).toMatch(/broke during POST \/companies/);
    expect(s.seen).toHaveLength(1);
  });

  it('after a 429 and after a 503 (the service did not act on it)', async () => {
    const s = await serve((_req, res, n) => {
      if (n === 0) json(res, 429, envelope(429, 'Too many requests'), { 'retry-after': '0' });
      else if (n === 1) json(res, 503, envelope(503, 'maintenance'));
      else json(res, 201, { id: 'c1' });
    });
    expect(await client(s.url).post('/companies', { name: 'x' })).toEqual({ id: 'c1' });
    expect(s.seen).toHaveLength(3);
    expect(s.seen.every((r) => r.method === 'POST' && r.body === '{"name":"x"}')).toBe(true);
  });

  it('after a 500 and a reset when the caller says idempotent: true', async () => {
    const s = await serve((req, res, n) => {
      if (n === 0) json(res, 500, envelope(500, 'boom'));
      else if (n === 1) req.socket.destroy();
      else json(res, 200, { ok: n });
    });
    expect(await client(s.url).post('/companies/c1/connections/k1/sync', {}, { idempotent: true })).toEqual({ ok: 2 });
    expect(s.seen).toHaveLength(3);
  });

  it('after ECONNREFUSED: retried until the service is up', async () => {
    const port = await freePort();
    let s: Scripted | undefined;
    const lines: string[] = [];
    const starting: Array<Promise<void>> = [];
    const c = client(`http://127.0.0.1:${port}`, {
      log: (line) => {
        lines.push(line);
        if (line.includes('ECONNREFUSED') && starting.length === 0) {
          starting.push(serve((_req, res) => json(res, 201, { id: 'c1' }), port).then((started) => void (s = started)));
        }
      },
    });
    expect(await c.post('/companies', { name: 'x' })).toEqual({ id: 'c1' });
    await Promise.all(starting);
    expect(lines[0]).toBe('POST /companies failed: ECONNREFUSED');
    expect(s!.seen).toHaveLength(1);
  });

  it('after ECONNREFUSED with nothing listening: a ConnectionError after maxRetries + 1 attempts', async () => {
    const port = await freePort();
    const lines: string[] = [];
    const err = await rejection(client(`http://127.0.0.1:${port}`, { maxRetries: 2, log: (l) => lines.push(l) }).post('/companies', {}));
    expect(err).toBeInstanceOf(ConnectionError);
    expect(err).toMatchObject({ code: 'ECONNREFUSED', timedOut: false, method: 'POST' });
    expect(err.message).toBe(`Could not reach http://127.0.0.1:${port} (ECONNREFUSED).`);
    expect(lines).toEqual(Array(3).fill('POST /companies failed: ECONNREFUSED'));
  });
});

describe('ApiClient: timeouts', () => {
  it('a server that never answers: a ConnectionError within timeoutMs + margin, not retried', async () => {
    const s = await serve(() => {
      // never answers
    });
    const started = performance.now();
    const err = await rejection(client(s.url, { timeoutMs: 500 }).get('/slow'));
    const elapsed = performance.now() - started;
    expect(err).toBeInstanceOf(ConnectionError);
    expect(err).toMatchObject({ timedOut: true, code: 'HEADERS_TIMEOUT' });
    expect(err.message).toBe(`No response from ${s.url} within 0.5 s (GET /slow).`);
    expect(elapsed).toBeGreaterThanOrEqual(450);
    expect(elapsed).toBeLessThan(500 + 1500);
    expect(s.seen).toHaveLength(1);
  });

  it('a body that stops half-way times out too', async () => {
    const s = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      res.write('{"partial":');
    });
    const started = performance.now();
    const err = await rejection(client(s.url, { timeoutMs: 500 }).get('/slow'));
    expect(err).toMatchObject({ timedOut: true, code: 'BODY_TIMEOUT' });
    expect(performance.now() - started).toBeLessThan(500 + 1500);
    expect(s.seen).toHaveLength(1);
  });

  it('an abort signal stops a request and its retries at once', async () => {
    const s = await serve((_req, res) => json(res, 503, envelope(503, 'maintenance'), { 'retry-after': '30' }));
    const controller = new AbortController();
    const started = performance.now();
    const pending = rejection(client(s.url).get('/x', { signal: controller.signal }));
    while (s.seen.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort(new Error('interrupted'));
    expect((await pending).message).toBe('interrupted');
    expect(performance.now() - started).toBeLessThan(5000);
    expect(s.seen).toHaveLength(1);
  });
});

/** A token bucket of `rate`/s (burst `rate`) like the service's, with its headers; 429 when empty. */
function bucketServer(rate: number) {
  let tokens = rate;
  let at = performance.now();
  let limited = 0;
  const started = performance.now();
  const events: string[] = [];
  const handler: Handler = (req, res, n) => {
    const now = performance.now();
    tokens = Math.min(rate, tokens + ((now - at) / 1000) * rate);
    at = now;
    const allowed = tokens >= 1;
    if (allowed) tokens -= 1;
    events.push(`${(now - started).toFixed(1)}ms #${n} ${req.url} ${allowed ? 200 : 429} left ${tokens.toFixed(2)}`);
    const headers = { 'x-rate-limit-limit': String(rate), 'x-rate-limit-remaining': String(Math.floor(tokens)), 'x-rate-limit-reset': String(Math.ceil(Date.now() / 1000 + (rate - tokens) / rate)) };
    if (allowed) return json(res, 200, { n }, headers);
    limited += 1;
    json(res, 429, envelope(429, 'Too many requests'), { ...headers, 'retry-after': String(Math.max(1, Math.ceil((1 - tokens) / rate))) });
  };
  /** What the server saw, for the assertion message when a test fails. */
  const log = () => events.join('\n');
  return { handler, limited: () => limited, log };
}

describe('ApiClient: pacing by the rate-limit headers', () => {
  it('50 concurrent requests through one client against a 10/s bucket: few or no 429s, about 50/10 s', async () => {
    const bucket = bucketServer(10);
    const s = await serve(bucket.handler);
    const lines: string[] = [];
    const c = client(s.url, { log: (line) => lines.push(`${(performance.now() - started).toFixed(1)}ms ${line}`) });
    const started = performance.now();
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => c.get<{ n: number }>(`/companies?i=${i}`)));
    const elapsed = performance.now() - started;
    expect(results).toHaveLength(50);
    expect(bucket.limited(), `server:\n${bucket.log()}\nclient:\n${lines.join('\n')}`).toBeLessThanOrEqual(2);
    expect(elapsed).toBeGreaterThanOrEqual(3500);
    expect(elapsed).toBeLessThan(9000);
  });

  it('with plenty of headroom nothing waits', async () => {
    const bucket = bucketServer(1000);
    const s = await serve(bucket.handler);
    const c = client(s.url);
    const started = performance.now();
    await Promise.all(Array.from({ length: 50 }, () => c.get('/companies')));
    expect(bucket.limited()).toBe(0);
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it('a service without rate-limit headers is not paced', async () => {
    const s = await serve((_req, res) => json(res, 200, {}));
    const c = client(s.url);
    const started = performance.now();
    await Promise.all(Array.from({ length: 50 }, () => c.get('/companies')));
    expect(performance.now() - started).toBeLessThan(2000);
    expect(s.seen).toHaveLength(50);
  });
});

describe('Pacer under concurrency', () => {
  const headers = (limit: number, remaining: number) => ({ limit, remaining });

  async function sendTimes(pacer: Pacer, count: number, started: number): Promise<number[]> {
    return Promise.all(Array.from({ length: count }, async () => {
      await pacer.acquire();
      return performance.now() - started;
    }));
  }

  it('before the first answer two requests go; the others wait for an answer', async () => {
    const pacer = new Pacer();
    const probes = [await pacer.acquire(), await pacer.acquire()];
    let released = 0;
    const waiting = Array.from({ length: 5 }, () => pacer.acquire().then((p) => ((released += 1), p)));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(released).toBe(0);
    pacer.observe(probes[1]!, headers(100, 98));
    const permits = await Promise.all(waiting);
    expect(released).toBe(5);
    expect(new Set([...probes, ...permits].map((p) => p.seq)).size).toBe(PROBES + 5);
  });

  it('a probe that fails lets the next caller probe; while no answer comes, one more goes every PROBE_WAIT_MS', async () => {
    const pacer = new Pacer();
    const first = await pacer.acquire();
    const second = await pacer.acquire();
    const next = pacer.acquire();
    pacer.settle(first);
    const third = await next;
    expect(third.seq).toBe(2);
    // The two probes out never answer: of three waiters, one goes after PROBE_WAIT_MS.
    const started = performance.now();
    const released: number[] = [];
    const waiters = Array.from({ length: 3 }, () => pacer.acquire().then((p) => (released.push(performance.now() - started), p)));
    while (released.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(released[0]).toBeGreaterThanOrEqual(PROBE_WAIT_MS - 5);
    expect(released).toHaveLength(1);
    // The answer lets the other two go at once: before the event loop's next turn, whatever the machine's load.
    pacer.observe(second, headers(100, 50));
    await new Promise((resolve) => setImmediate(resolve));
    expect(released).toHaveLength(3);
    await Promise.all(waiters);
  });

  it('many callers at once: the bucket’s tokens go now, the rest are spaced at the refill rate', async () => {
    const pacer = new Pacer();
    const probe = await pacer.acquire();
    pacer.observe(probe, headers(50, 4)); // 50/s: a slot every 20 ms once the 4 tokens are used
    const started = performance.now();
    let released = 0;
    const sent = Promise.all(Array.from({ length: 24 }, async () => {
      await pacer.acquire();
      released += 1;
      return performance.now() - started;
    }));
    // The four tokens go at once, before any timer: a timer of 0 ms, set after the first
    // slot's (20 ms), comes before it however late the event loop gets to them.
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(released).toBe(4);
    // The others wait for their slots: never early, and, with room for a loaded machine, not far late.
    const times = (await sent).sort((a, b) => a - b);
    for (let i = 4; i < 24; i += 1) expect(times[i]).toBeGreaterThanOrEqual((i - 3) * 20 - 2);
    expect(times[23]).toBeLessThan(2 * 20 * 20 + 500);
  });

  it('answers of requests still in flight are not double-counted, and stale answers do not open the gate', async () => {
    const pacer = new Pacer();
    const probe = await pacer.acquire();
    pacer.observe(probe, headers(10, 9));
    const burst: Permit[] = [];
    for (let i = 0; i < 9; i += 1) burst.push(await pacer.acquire());
    // A late answer from before the burst says 9 remained: the 9 sent since are still counted.
    pacer.observe(probe, headers(10, 9));
    const started = performance.now();
    await pacer.acquire();
    expect(performance.now() - started).toBeGreaterThanOrEqual(100 - 2);
  });

  it('a 429 holds every caller, including those already waiting for a later slot', async () => {
    const pacer = new Pacer();
    const probe = await pacer.acquire();
    pacer.observe(probe, headers(20, 0));
    const started = performance.now();
    const waiting = sendTimes(pacer, 5, started); // slots at 50, 100, … 250 ms
    await new Promise((resolve) => setTimeout(resolve, 10));
    pacer.backOff(600);
    // A stale answer with room to spare must not cancel the hold.
    pacer.observe(probe, headers(20, 20));
    const times = await waiting;
    for (const t of times) expect(t).toBeGreaterThanOrEqual(600);
  });

  it('an abort while waiting rejects with the signal’s reason', async () => {
    const pacer = new Pacer();
    const probe = await pacer.acquire();
    pacer.observe(probe, headers(1, 0));
    const controller = new AbortController();
    const pending = pacer.acquire(controller.signal);
    controller.abort(new Error('stop'));
    await expect(pending).rejects.toThrow('stop');
  });
});

describe('ApiClient: pages() and records()', () => {
  /** Three pages of 2 under /api, with relative next links that carry the whole query. */
  function pagedServer(records: string[], pageSize: number, options: { emptyPageLinksOn?: boolean } = {}): Handler {
    return (req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      const page = Number(url.searchParams.get('page') ?? '1');
      const size = Number(url.searchParams.get('pageSize') ?? String(pageSize));
      const query = url.searchParams.get('query');
      const results = records.slice((page - 1) * size, page * size);
      const q = (p: number) => `/companies?page=${p}&pageSize=${size}${query ? `&query=${encodeURIComponent(query)}` : ''}`;
      const more = page * size < records.length || (options.emptyPageLinksOn ?? false);
      json(res, 200, {
        results: results.map((id) => ({ id })),
        pageNumber: page,
        pageSize: size,
        totalResults: records.length,
        _links: { self: { href: '/companies' }, current: { href: q(page) }, ...(more ? { next: { href: q(page + 1) } } : {}) },
      });
    };
  }

  it('pages() follows relative _links.next (query strings and all) under the base path until it is absent', async () => {
    const s = await serve(pagedServer(['a', 'b', 'c', 'd', 'e'], 2));
    const c = client(`${s.url}/api`);
    const pages = [];
    for await (const page of c.pages<{ id: string }>('/companies', { query: { pageSize: 2, query: 'name~a && x' } })) pages.push(page.results.map((r) => r.id));
    expect(pages).toEqual([['a', 'b'], ['c', 'd'], ['e']]);
    expect(s.seen.map((r) => r.url)).toEqual([
      '/api/companies?pageSize=2&query=name~a%20%26%26%20x',
      '/api/companies?page=2&pageSize=2&query=name~a%20%26%26%20x',
      '/api/companies?page=3&pageSize=2&query=name~a%20%26%26%20x',
    ]);
    expect(s.seen.every((r) => r.headers.authorization === `Basic ${Buffer.from('fy_test-key').toString('base64')}`)).toBe(true);
  });

  it('records() yields every record in order', async () => {
    const ids = Array.from({ length: 23 }, (_, i) => `r${i}`);
    const s = await serve(pagedServer(ids, 5));
    const got = [];
    for await (const record of client(s.url).records<{ id: string }>('/companies', { query: { pageSize: 5 } })) got.push(record.id);
    expect(got).toEqual(ids);
    expect(s.seen).toHaveLength(5);
  });

  it('stops at an empty page even if it links further', async () => {
    const s = await serve(pagedServer(['a', 'b', 'c', 'd'], 2, { emptyPageLinksOn: true }));
    const got = [];
    for await (const record of client(s.url).records<{ id: string }>('/companies')) got.push(record.id);
    expect(got).toEqual(['a', 'b', 'c', 'd']);
    expect(s.seen).toHaveLength(3); // pages 1, 2 and the empty page 3
  });

  it('an empty first page yields that page (for its totalResults) and stops', async () => {
    const s = await serve(pagedServer([], 2, { emptyPageLinksOn: true }));
    const pages = [];
    for await (const page of client(s.url).pages('/companies')) pages.push(page);
    expect(pages).toHaveLength(1);
    expect(pages[0]).toMatchObject({ results: [], totalResults: 0 });
  });

  it('a link that points back at a page already read ends the list instead of looping', async () => {
    const s = await serve((_req, res) => json(res, 200, { results: [{ id: 'a' }], pageNumber: 1, pageSize: 1, totalResults: 9, _links: { self: { href: '/c' }, current: { href: '/c?page=1' }, next: { href: '/c?page=1' } } }));
    const got = [];
    for await (const record of client(s.url).records('/c?page=1')) got.push(record);
    expect(s.seen.length).toBeLessThanOrEqual(2);
  });

  it('an absolute next link on the same base URL is followed; one off the service is refused', async () => {
    let off = false;
    const s = await serve((req, res) => {
      const page = req.url?.includes('page=2') ? 2 : 1;
      const next = page === 1 ? { next: { href: off ? 'http://elsewhere.example/api/c?page=2' : `http://127.0.0.1:${s.port}/api/c?page=2` } } : {};
      json(res, 200, { results: [{ id: `p${page}` }], pageNumber: page, pageSize: 1, totalResults: 2, _links: { self: { href: '/c' }, current: { href: `/c?page=${page}` }, ...next } });
    });
    const got = [];
    for await (const record of client(`${s.url}/api`).records<{ id: string }>('/c')) got.push(record.id);
    expect(got).toEqual(['p1', 'p2']);
    expect(s.seen.map((r) => r.url)).toEqual(['/api/c', '/api/c?page=2']);
    off = true;
    const err = await rejection((async () => {
      for await (const _ of client(`${s.url}/api`).records('/c')) void _;
    })());
    expect(err.message).toMatch(/off the service/);
  });
});
