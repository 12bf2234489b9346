// The API client's HTTP exchange on node:http / node:https (transport.ts), through the real
// ApiClient against small real servers on 127.0.0.1:0: connections kept alive and capped at
// `connections`, idle sockets that never keep the process alive, the server's Keep-Alive
// hint, raw bodies as their chunks, stream() idle timeouts, aborts, close(), and https.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiClient, type ClientOptions } from '../../src/client/client.js';
import { ConnectionError } from '../../src/client/errors.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

interface Listening {
  url: string;
  /** Every connection the server accepted, open or closed. */
  sockets: Socket[];
  open(): number;
  /** Requests received so far. */
  received(): number;
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function listen(server: Server, handler: Handler, protocol = 'http'): Promise<Listening> {
  const sockets: Socket[] = [];
  let received = 0;
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    received += 1;
    req.resume();
    req.on('end', () => handler(req, res));
  });
  server.on(protocol === 'https' ? 'secureConnection' : 'connection', (socket: Socket) => sockets.push(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const { port } = server.address() as AddressInfo;
  return { url: `${protocol}://127.0.0.1:${port}`, sockets, open: () => sockets.filter((s) => !s.destroyed).length, received: () => received };
}

function serve(handler: Handler): Promise<Listening> {
  const server = createServer();
  // The client decides when a kept-alive connection ends, not the server's 5 s default.
  server.keepAliveTimeout = 60_000;
  return listen(server, handler);
}

function client(url: string, options: Partial<ClientOptions> = {}): ApiClient {
  const c = new ApiClient({ baseUrl: url, apiKey: 'fy_test-key', maxRetries: 0, ...options });
  cleanups.push(() => c.close());
  return c;
}

function json(res: ServerResponse, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

async function until(condition: () => boolean, what: string, deadlineMs = 10_000): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

/** Handles that keep the event loop alive (ref'd), by kind. */
const refHandles = (kind: string) => process.getActiveResourcesInfo().filter((r) => r === kind).length;

describe('transport: connections', () => {
  it('an idle kept-alive socket does not keep the process alive; one in use does', async () => {
    let answer: (() => void) | undefined;
    const server = createServer();
    server.keepAliveTimeout = 60_000;
    const s = await listen(server, (_req, res) => (answer = () => json(res, { ok: true })));
    // The test server's own handles are not what is counted (first in the file: no sockets of other tests closing meanwhile).
    server.unref();
    server.on('connection', (socket: Socket) => socket.unref());
    const before = refHandles('TCPSocketWrap');
    const c = client(s.url);
    const pending = c.get('/x');
    await until(() => answer !== undefined, 'the request');
    expect(refHandles('TCPSocketWrap')).toBe(before + 1);
    answer!();
    await pending;
    await until(() => refHandles('TCPSocketWrap') === before, 'the free socket to be unref\'d');
    expect(s.open()).toBe(1); // still open, kept alive for the next request
  });

  it('keeps one connection alive across sequential requests', async () => {
    const s = await serve((_req, res) => json(res, { ok: true }));
    const c = client(s.url);
    for (let i = 0; i < 5; i += 1) await c.get('/x');
    expect(s.received()).toBe(5);
    expect(s.sockets).toHaveLength(1);
  });

  it('opens at most `connections` sockets; the rest wait for one, and the headers timeout starts only once sent', async () => {
    let inFlight = 0;
    let peak = 0;
    const s = await serve((_req, res) => {
      inFlight += 1;
      peak = Math.max(peak, inFlight);
      setTimeout(() => {
        inFlight -= 1;
        json(res, { ok: true });
      }, 300);
    });
    // 8 requests of 300 ms on 2 sockets take ~1.2 s: far past timeoutMs for the last ones if queueing counted.
    const c = client(s.url, { connections: 2, timeoutMs: 1000 });
    const results = await Promise.all(Array.from({ length: 8 }, () => c.get('/x')));
    expect(results).toHaveLength(8);
    expect(peak).toBe(2);
    expect(s.sockets).toHaveLength(2);
  });

  it('closes a free socket before the server\'s Keep-Alive timeout hint runs out', async () => {
    const s = await serve((_req, res) => json(res, { ok: true }, { 'keep-alive': 'timeout=2' }));
    await client(s.url).get('/x');
    expect(s.open()).toBe(1);
    // Without the hint the client would keep it 30 s; the server keeps it 60 s.
    await until(() => s.open() === 0, 'the client to close the idle connection', 8000);
  });

  it('close() waits for a request in flight, then closes every socket', async () => {
    let answer: (() => void) | undefined;
    const s = await serve((req, res) => (req.url === '/slow' ? (answer = () => json(res, { slow: true })) : json(res, { ok: true })));
    const c = client(s.url, { connections: 4 });
    await Promise.all([c.get('/a'), c.get('/b'), c.get('/c')]);
    const slow = c.get('/slow');
    await until(() => answer !== undefined, 'the slow request');
    // Closing at once would break the slow request's connection.
    const closing = c.close();
    answer!();
    expect(await slow).toEqual({ slow: true });
    await closing;
    await until(() => s.open() === 0, 'every connection to close');
  });
});

describe('transport: bodies', () => {
  it('a JSON body goes with its Content-Length; a POST without one says 0, a GET says nothing', async () => {
    const s = await serve((req, res) => json(res, { length: req.headers['content-length'] ?? null, chunked: req.headers['transfer-encoding'] ?? null }));
    const c = client(s.url);
    expect(await c.post('/x', { name: 'Åcme' })).toEqual({ length: String(Buffer.byteLength('{"name":"Åcme"}')), chunked: null });
    expect(await c.post('/x')).toEqual({ length: '0', chunked: null });
    expect(await c.get('/x')).toEqual({ length: null, chunked: null });
  });

  it('raw: true gives a large body as the chunks that arrived, unjoined', async () => {
    const body = Buffer.alloc(1024 * 1024);
    for (let i = 0; i < body.length; i += 1) body[i] = i % 251;
    const s = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson', 'content-length': body.length });
      res.end(body);
    });
    const chunks = await client(s.url).get<Buffer[]>('/page', { raw: true });
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.every((chunk) => Buffer.isBuffer(chunk))).toBe(true);
    expect(Buffer.concat(chunks).equals(body)).toBe(true);
  });

  it('a JSON body with a byte-order mark still parses', async () => {
    const s = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"ok":true}')]));
    });
    expect(await client(s.url).get('/x')).toEqual({ ok: true });
  });

  it('a connection reset in the middle of the body is a ConnectionError (ECONNRESET)', async () => {
    const s = await serve((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      res.write('{"results":[', () => req.socket.destroy());
    });
    const err = await rejection(client(s.url).get('/x'));
    expect(err).toBeInstanceOf(ConnectionError);
    expect(err).toMatchObject({ code: 'ECONNRESET', timedOut: false });
    expect((err as Error).message).toBe(`The connection to ${s.url} broke during GET /x (ECONNRESET).`);
  });
});

describe('transport: stream()', () => {
  it('a body that keeps coming more often than idleMs is read to the end, however long it lasts', async () => {
    const s = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      let sent = 0;
      const tick = setInterval(() => {
        res.write(`data: ${sent}\n\n`);
        if (++sent === 8) {
          clearInterval(tick);
          res.end();
        }
      }, 100);
    });
    const response = await client(s.url).stream('/events', { idleMs: 400 });
    let text = '';
    for await (const chunk of response.body as AsyncIterable<Buffer>) text += chunk.toString();
    expect(text.match(/data: \d/g)).toHaveLength(8);
  });

  it('silence for idleMs once the body flows breaks the stream with BODY_TIMEOUT', async () => {
    const s = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': hello\n\n');
    });
    const response = await client(s.url).stream('/events', { idleMs: 300 });
    const got: string[] = [];
    const err = await rejection((async () => {
      for await (const chunk of response.body as AsyncIterable<Buffer>) got.push(chunk.toString());
    })());
    expect(got).toEqual([': hello\n\n']);
    expect(err).toMatchObject({ code: 'BODY_TIMEOUT' });
    await until(() => s.open() === 0, 'the broken connection to close');
  });

  it('an abort ends a flowing stream with the signal\'s reason', async () => {
    const s = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': hello\n\n');
    });
    const controller = new AbortController();
    const response = await client(s.url).stream('/events', { signal: controller.signal });
    const reason = new Error('stop');
    const reading = rejection((async () => {
      for await (const chunk of response.body as AsyncIterable<Buffer>) {
        void chunk;
        controller.abort(reason);
      }
    })());
    expect(await reading).toBe(reason);
  });
});

describe('transport: aborts', () => {
  it('an abort while waiting for the answer rejects with the signal\'s reason and drops the connection', async () => {
    const s = await serve(() => {
      // never answers
    });
    const controller = new AbortController();
    const pending = rejection(client(s.url).get('/x', { signal: controller.signal }));
    await until(() => s.received() === 1, 'the request');
    const reason = new Error('interrupted');
    controller.abort(reason);
    expect(await pending).toBe(reason);
    await until(() => s.open() === 0, 'the connection to close');
  });

  it('an abort in the middle of a raw body rejects with the reason', async () => {
    const controller = new AbortController();
    const reason = new Error('interrupted');
    const s = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson', 'content-length': '100000' });
      res.write('{"id":1}\n', () => controller.abort(reason));
    });
    expect(await rejection(client(s.url).get('/page', { raw: true, signal: controller.signal }))).toBe(reason);
    expect(s.received()).toBe(1);
  });

  it('an abort of a request still waiting for a free socket rejects at once, and it is never sent', async () => {
    let answer: (() => void) | undefined;
    const s = await serve((req, res) => {
      if (req.url === '/first') answer = () => json(res, { first: true });
      else json(res, { url: req.url });
    });
    const c = client(s.url, { connections: 1 });
    await c.get('/warm'); // past the pacer's first lone request: the next ones wait only for the socket
    const first = c.get('/first');
    await until(() => answer !== undefined, 'the first request');
    const controller = new AbortController();
    const queued = rejection(c.get('/queued', { signal: controller.signal }));
    // Only microtasks lie between get() and the request joining the agent's queue: one turn of the loop is enough.
    await new Promise((resolve) => setImmediate(resolve));
    const reason = new Error('interrupted');
    controller.abort(reason);
    expect(await queued).toBe(reason);
    answer!();
    expect(await first).toEqual({ first: true });
    expect(await c.get('/after')).toEqual({ url: '/after' });
    expect(s.received()).toBe(3);
  });

  it('an already aborted signal sends nothing', async () => {
    const s = await serve((_req, res) => json(res, {}));
    const reason = new Error('already');
    expect(await rejection(client(s.url).get('/x', { signal: AbortSignal.abort(reason) }))).toBe(reason);
    expect(s.received()).toBe(0);
  });
});

const openssl = spawnSync('openssl', ['version']).status === 0;

describe.skipIf(!openssl)('transport: https', () => {
  it('talks to an https target through a kept-alive TLS connection', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ferry-tls-'));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    const made = spawnSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1',
      '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { encoding: 'utf8' });
    expect(made.status, made.stderr).toBe(0);
    const server = createTlsServer({ key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) });
    server.keepAliveTimeout = 60_000;
    const s = await listen(server, (req, res) => json(res, { url: req.url, auth: req.headers.authorization }), 'https');
    // The certificate is this test's own: trust it for this process only.
    const previous = process.env.NODE_TLS_REJECT_UNAUTHORIZED;
    process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
    cleanups.push(async () => {
      if (previous === undefined) delete process.env.NODE_TLS_REJECT_UNAUTHORIZED;
      else process.env.NODE_TLS_REJECT_UNAUTHORIZED = previous;
    });
    const c = client(`${s.url}/api`);
    expect(await c.get('/companies', { query: { page: 2 } })).toEqual({ url: '/api/companies?page=2', auth: `Basic ${Buffer.from('fy_test-key').toString('base64')}` });
    await c.get('/companies');
    expect(s.sockets).toHaveLength(1);
  });
});
