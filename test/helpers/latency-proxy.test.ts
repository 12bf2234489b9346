// The latency-and-limit proxy of the benches and tests (bench/lib/latency-proxy.mjs), in
// front of a real service and of a bare echo server, all on 127.0.0.1 port 0.
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, request, type IncomingHttpHeaders, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLatencyProxy, type LatencyProxy, type LatencyProxyOptions } from '../../bench/lib/latency-proxy.mjs';
import { startTestStack, type TestService } from './stack.js';
import { basic } from './service.js';

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** One request on a connection of its own (so a reset hits only it); 'reset' when the connection broke without an answer. */
function send(url: string, method: string, headers: Record<string, string>, body?: string): Promise<Answer | 'reset'> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      res.on('error', reject);
    });
    req.on('error', (err: NodeJS.ErrnoException) => (err.code === 'ECONNRESET' ? resolve('reset') : reject(err)));
    req.end(body);
  });
}

function answer(result: Answer | 'reset'): Answer {
  if (result === 'reset') throw new Error('the connection was reset');
  return result;
}

function rateHeaders(headers: IncomingHttpHeaders): string[] {
  return Object.keys(headers).filter((name) => name.startsWith('x-rate-limit-'));
}

const proxies: LatencyProxy[] = [];
async function proxy(options: LatencyProxyOptions): Promise<LatencyProxy> {
  const started = await startLatencyProxy(options);
  proxies.push(started);
  return started;
}

describe('latency proxy in front of a real service', () => {
  let target: TestService;
  let auth: Record<string, string>;

  beforeAll(async () => {
    // The service's own limit is on, so its X-Rate-Limit-* headers are there to be replaced or stripped.
    target = await startTestStack('service', { rateLimit: 1000 });
    auth = { authorization: basic(target.adminKey) };
  });
  afterAll(async () => {
    await Promise.all(proxies.map((p) => p.close()));
    await target.stop();
  });

  it('forwards method, path, query, headers and body after the delay, and setDelay changes it', async () => {
    const p = await proxy({ target: target.baseUrl, delayMs: 120 });
    let started = performance.now();
    const created = answer(await send(`${p.url}/companies`, 'POST', { ...auth, 'content-type': 'application/json' }, JSON.stringify({ name: 'Through The Proxy Ltd' })));
    // A lower bound only: the delay is added, whatever else the machine is doing.
    expect(performance.now() - started).toBeGreaterThanOrEqual(118);
    expect(created.status).toBe(200);
    const company = JSON.parse(created.body);
    expect(company.name).toBe('Through The Proxy Ltd');

    p.setDelay(250);
    started = performance.now();
    const path = `/companies?page=1&pageSize=5&query=${encodeURIComponent(`id=${company.id}`)}`;
    const viaProxy = answer(await send(p.url + path, 'GET', auth));
    expect(performance.now() - started).toBeGreaterThanOrEqual(248);
    const direct = answer(await send(target.baseUrl + path, 'GET', auth));
    expect(viaProxy.status).toBe(200);
    expect(viaProxy.body).toBe(direct.body);
    expect(JSON.parse(viaProxy.body).results.map((c: { id: string }) => c.id)).toEqual([company.id]);
    // No limit configured: the upstream's headers pass through.
    expect(viaProxy.headers['x-rate-limit-limit']).toBe('1000');
    expect(viaProxy.headers['x-correlation-id']).toBeTruthy();

    const unauthorized = answer(await send(`${p.url}/companies`, 'GET', {}));
    expect(unauthorized.status).toBe(401);
    expect(p.stats()).toMatchObject({ requests: 3, forwarded: 3, answered429: 0, faults: 0, byStatus: { 200: 2, 401: 1 } });
  });

  it('answers 429 with Retry-After from its token bucket, with its own X-Rate-Limit-* headers on every answer', async () => {
    // One token every 50 s: the third request cannot have earned one.
    const p = await proxy({ target: target.baseUrl, rateLimit: { perSecond: 0.02, burst: 2, headers: true } });
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(answer(await send(`${p.url}/companies`, 'GET', auth)));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 429]);
    for (const a of answers) {
      expect(a.headers['x-rate-limit-limit']).toBe('2');
      expect(Number(a.headers['x-rate-limit-reset'])).toBeGreaterThan(Date.now() / 1000);
    }
    expect(answers.map((a) => a.headers['x-rate-limit-remaining'])).toEqual(['1', '0', '0']);
    const retryAfter = answers[2]!.headers['retry-after'];
    expect(retryAfter).toMatch(/^\d+$/);
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
    expect(JSON.parse(answers[2]!.body)).toMatchObject({ statusCode: 429 });
    expect(p.stats()).toMatchObject({ requests: 3, forwarded: 2, answered429: 1, byStatus: { 200: 2, 429: 1 } });
  });

  it('without headers: 429 and Retry-After alone, and the upstream X-Rate-Limit-* headers stripped', async () => {
    const p = await proxy({ target: target.baseUrl, rateLimit: { perSecond: 0.02, burst: 1, headers: false } });
    const first = answer(await send(`${p.url}/companies`, 'GET', auth));
    const second = answer(await send(`${p.url}/companies`, 'GET', auth));
    expect([first.status, second.status]).toEqual([200, 429]);
    expect(rateHeaders(first.headers)).toEqual([]);
    expect(rateHeaders(second.headers)).toEqual([]);
    expect(Number(second.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // The service did send its own: the proxy took them out.
    const direct = answer(await send(`${target.baseUrl}/companies`, 'GET', auth));
    expect(rateHeaders(direct.headers).length).toBe(3);
    expect(p.stats().answered429).toBe(1);
  });

  it('injects resets and 503s at the seeded rate, the same sequence for the same seed', async () => {
    const faults = { rate: 0.3, kinds: ['reset', '503'] as Array<'reset' | '503'>, seed: 20_240_613 };
    const run = async (seed: number) => {
      const p = await proxy({ target: target.baseUrl, faults: { ...faults, seed } });
      const outcomes: string[] = [];
      for (let i = 0; i < 60; i++) {
        const result = await send(`${p.url}/companies?pageSize=1`, 'GET', auth);
        if (result === 'reset') outcomes.push('reset');
        else {
          if (result.status === 503) expect(result.headers['retry-after']).toBe('1');
          outcomes.push(String(result.status));
        }
      }
      return { outcomes, stats: p.stats() };
    };
    const a = await run(faults.seed);
    const resets = a.outcomes.filter((o) => o === 'reset').length;
    const unavailable = a.outcomes.filter((o) => o === '503').length;
    expect(resets).toBeGreaterThan(0);
    expect(unavailable).toBeGreaterThan(0);
    expect(a.outcomes.filter((o) => o !== 'reset' && o !== '503' && o !== '200')).toEqual([]);
    // 30% of 60 is 18; the seeded draw lands near it.
    expect(resets + unavailable).toBeGreaterThanOrEqual(8);
    expect(resets + unavailable).toBeLessThanOrEqual(30);
    expect(a.stats).toMatchObject({ requests: 60, faults: resets + unavailable, resets, forwarded: 60 - resets - unavailable });
    expect(a.stats.byStatus['503']).toBe(unavailable);

    expect((await run(faults.seed)).outcomes).toEqual(a.outcomes);
    expect((await run(faults.seed + 1)).outcomes).not.toEqual(a.outcomes);
  });
});

describe('latency proxy streaming and shutdown', () => {
  let echo: Server;
  let echoUrl: string;
  let received: { hash: string; bytes: number } | undefined;

  beforeAll(async () => {
    // Echoes every request body chunk as it arrives (chunked), and notes what it got.
    echo = createServer((req, res) => {
      const hash = createHash('sha256');
      let bytes = 0;
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'x-echo-method': req.method ?? '', 'x-echo-path': req.url ?? '' });
      req.on('data', (chunk: Buffer) => {
        hash.update(chunk);
        bytes += chunk.length;
        res.write(chunk);
      });
      req.on('end', () => {
        received = { hash: hash.digest('hex'), bytes };
        res.end();
      });
    });
    echo.listen(0, '127.0.0.1');
    await once(echo, 'listening');
    echoUrl = `http://127.0.0.1:${(echo.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await Promise.all(proxies.map((p) => p.close()));
    echo.closeAllConnections();
    await new Promise((resolve) => echo.close(resolve));
  });

  it('streams request and response bodies byte for byte, both ways at once', async () => {
    const p = await proxy({ target: echoUrl, delayMs: 20 });
    const chunks = Array.from({ length: 64 }, () => randomBytes(64 * 1024));
    const sent = createHash('sha256');
    for (const chunk of chunks) sent.update(chunk);
    const back = createHash('sha256');
    let backBytes = 0;
    const req = request(`${p.url}/upload/here?x=1`, { method: 'PUT', headers: { 'content-type': 'application/octet-stream', 'x-custom': 'kept' }, agent: false });
    const response = once(req, 'response');
    req.write(chunks[0]);
    const [res] = (await response) as [IncomingMessage];
    expect(res.headers['x-echo-method']).toBe('PUT');
    expect(res.headers['x-echo-path']).toBe('/upload/here?x=1');
    let firstBack!: () => void;
    const echoed = new Promise<void>((resolve) => (firstBack = resolve));
    res.on('data', (chunk: Buffer) => {
      back.update(chunk);
      backBytes += chunk.length;
      firstBack();
    });
    // The first chunk comes back before the rest is sent: nothing waits for a whole body.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([echoed, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('no echo of the first chunk within 10 s')), 10_000)))]);
    clearTimeout(timer);
    expect(backBytes).toBeGreaterThan(0);
    const ended = once(res, 'end');
    for (const chunk of chunks.slice(1)) if (!req.write(chunk)) await once(req, 'drain');
    req.end();
    await ended;
    const total = chunks.length * 64 * 1024;
    expect(backBytes).toBe(total);
    expect(back.digest('hex')).toBe(sent.copy().digest('hex'));
    expect(received).toEqual({ hash: sent.digest('hex'), bytes: total });
    expect(p.stats()).toMatchObject({ requests: 1, forwarded: 1, byStatus: { 200: 1 } });
  });

  it('close() ends open connections, drops requests still waiting out their delay, and frees the port', async () => {
    const p = await proxy({ target: echoUrl, delayMs: 60_000 });
    const port = Number(new URL(p.url).port);
    const waiting = send(`${p.url}/never`, 'GET', {});
    // The request has arrived and is waiting out its delay.
    for (const deadline = Date.now() + 10_000; p.stats().requests === 0;) {
      if (Date.now() > deadline) throw new Error('the request did not reach the proxy');
      await new Promise((resolve) => setImmediate(resolve));
    }
    await p.close();
    expect(await waiting).toBe('reset');
    const again = createServer();
    again.listen(port, '127.0.0.1');
    await once(again, 'listening');
    await new Promise((resolve) => again.close(resolve));
  });
});
