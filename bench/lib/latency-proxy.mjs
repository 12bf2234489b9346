// A latency-and-limit proxy for tests and benches: real HTTP on 127.0.0.1 in front of a
// real service, so that a client on this machine meets what it meets across the internet:
// a delay on every request, a token-bucket rate limit answering 429 with Retry-After (with
// or without the X-Rate-Limit-* headers), and faults at a seeded rate (a connection reset
// with no answer, or a 503 with Retry-After: 1). Method, path, headers and bodies go
// through untouched, streamed both ways; only hop-by-hop headers are dropped, and with a
// rate limit the upstream's own X-Rate-Limit-* headers are replaced by the proxy's (or
// removed), so the client sees one limit: this one.
// Plain JavaScript so that both the benches (node bench/*.mjs) and the tests (through
// latency-proxy.d.mts) use it as it is.
import { Agent, createServer, request as httpRequest } from 'node:http';
import { pipeline } from 'node:stream';

/**
 * @typedef {object} RateLimitOptions
 * @property {number} perSecond  tokens added per second (may be a fraction)
 * @property {number} [burst]  the bucket's size (default: perSecond, as the service's bucket)
 * @property {boolean} headers  send X-Rate-Limit-Limit/-Remaining/-Reset on every answer
 *
 * @typedef {object} FaultOptions
 * @property {number} rate  share of admitted requests that fail (0..1)
 * @property {Array<'reset' | '503'>} kinds  the faults to pick from, evenly
 * @property {number} seed  seeds the PRNG: the same seed gives the same sequence of faults
 *
 * @typedef {object} LatencyProxyOptions
 * @property {string} target  the upstream's base URL, e.g. http://127.0.0.1:PORT
 * @property {number} [delayMs]  added before each request is handled (default 0)
 * @property {RateLimitOptions} [rateLimit]
 * @property {FaultOptions} [faults]
 *
 * @typedef {object} LatencyProxyStats
 * @property {number} requests  requests received
 * @property {number} answered429  requests refused by the proxy's bucket
 * @property {number} faults  faults injected (resets and 503s)
 * @property {number} resets  of those, connections reset without an answer
 * @property {number} forwarded  requests passed on to the upstream
 * @property {Record<string, number>} byStatus  answers sent, by status code (the proxy's own included)
 * @property {number | undefined} firstAt  Date.now() when the first request arrived
 * @property {number | undefined} lastAt  Date.now() when the last answer ended (or the last reset)
 *
 * @typedef {object} LatencyProxy
 * @property {string} url  http://127.0.0.1:PORT
 * @property {() => LatencyProxyStats} stats
 * @property {(ms: number) => void} setDelay  the delay for requests arriving from now on
 * @property {() => Promise<void>} close  stops listening, ends every connection, frees the port
 */

const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-connection', 'upgrade', 'te', 'trailer'];
const RATE_HEADER = /^x-rate-limit-/i;

/** mulberry32: a small, fast, seeded PRNG in [0, 1). */
function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The token bucket of the public API: Limit is the bucket's size, Remaining whole tokens left, Reset Unix seconds when full. */
function bucket({ perSecond, burst = perSecond }) {
  if (!(perSecond > 0) || !(burst >= 1)) throw new Error('rateLimit needs perSecond > 0 and burst >= 1');
  let tokens = burst;
  let at = Date.now();
  return () => {
    const now = Date.now();
    tokens = Math.min(burst, tokens + ((now - at) / 1000) * perSecond);
    at = now;
    const allowed = tokens >= 1;
    if (allowed) tokens -= 1;
    return {
      allowed,
      retryAfter: Math.max(1, Math.ceil((1 - tokens) / perSecond)),
      headers: {
        'X-Rate-Limit-Limit': String(burst),
        'X-Rate-Limit-Remaining': String(Math.floor(tokens)),
        'X-Rate-Limit-Reset': String(Math.ceil(now / 1000 + (burst - tokens) / perSecond)),
      },
    };
  };
}

/**
 * Starts the proxy on 127.0.0.1, port 0.
 * @param {LatencyProxyOptions} options
 * @returns {Promise<LatencyProxy>}
 */
export async function startLatencyProxy(options) {
  const upstream = new URL(options.target);
  let delayMs = options.delayMs ?? 0;
  const take = options.rateLimit ? bucket(options.rateLimit) : undefined;
  const sendRateHeaders = Boolean(options.rateLimit?.headers);
  const faults = options.faults;
  if (faults && (!(faults.rate >= 0 && faults.rate <= 1) || faults.kinds.length === 0)) throw new Error('faults need a rate in [0, 1] and at least one kind');
  const random = faults ? prng(faults.seed) : undefined;
  const agent = new Agent({ keepAlive: true, maxSockets: Infinity });
  const timers = new Set();
  let closed = false;
  /** @type {LatencyProxyStats} */
  const counts = { requests: 0, answered429: 0, faults: 0, resets: 0, forwarded: 0, byStatus: {}, firstAt: undefined, lastAt: undefined };
  const answered = (status) => {
    counts.byStatus[status] = (counts.byStatus[status] ?? 0) + 1;
    counts.lastAt = Date.now();
  };

  /** An answer of the proxy's own (429, 503, 502), in the error envelope the service uses. */
  function reply(req, res, status, headers, error) {
    const body = JSON.stringify({ statusCode: status, service: 'LatencyProxy', error, correlationId: 'latency-proxy' });
    req.resume(); // the request body is not wanted; let it drain
    res.writeHead(status, { ...headers, 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
    res.end(body);
    answered(status);
  }

  function forward(req, res, rateHeaders) {
    const headers = { ...req.headers, host: upstream.host };
    for (const name of HOP_BY_HOP) delete headers[name];
    const out = httpRequest({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers, agent });
    counts.forwarded += 1;
    // The client went away (or broke the upload): stop the upstream request too.
    req.on('error', () => out.destroy());
    res.on('close', () => {
      if (!res.writableFinished) out.destroy();
    });
    out.on('response', (answer) => {
      const replyHeaders = { ...answer.headers };
      // Framing is the proxy's own on each side; node re-chunks or uses content-length.
      for (const name of [...HOP_BY_HOP, 'transfer-encoding']) delete replyHeaders[name];
      if (take) for (const name of Object.keys(replyHeaders)) if (RATE_HEADER.test(name)) delete replyHeaders[name];
      res.writeHead(answer.statusCode ?? 502, { ...replyHeaders, ...rateHeaders });
      // A body that breaks upstream breaks downstream too (pipeline destroys res), so the
      // client never takes a cut body for a whole one.
      pipeline(answer, res, (err) => {
        if (!err) answered(answer.statusCode ?? 502);
      });
    });
    out.on('error', (err) => {
      if (!res.headersSent && !res.destroyed) reply(req, res, 502, rateHeaders, `latency proxy: the upstream failed (${err.code ?? err.message})`);
      else res.destroy();
    });
    req.pipe(out);
  }

  function handle(req, res) {
    if (closed || req.destroyed || res.destroyed) return;
    const decision = take?.();
    const rateHeaders = decision && sendRateHeaders ? decision.headers : {};
    if (decision && !decision.allowed) {
      counts.answered429 += 1;
      return reply(req, res, 429, { ...rateHeaders, 'Retry-After': String(decision.retryAfter) }, 'Rate limit exceeded. Retry later.');
    }
    if (random && random() < faults.rate) {
      const kind = faults.kinds[Math.floor(random() * faults.kinds.length)];
      counts.faults += 1;
      if (kind === 'reset') {
        counts.resets += 1;
        counts.lastAt = Date.now();
        // An RST, not a clean close: what a dropped connection looks like to the client.
        return req.socket.resetAndDestroy();
      }
      return reply(req, res, 503, { ...rateHeaders, 'Retry-After': '1' }, 'Service unavailable (injected fault). Retry later.');
    }
    forward(req, res, rateHeaders);
  }

  const server = createServer((req, res) => {
    counts.requests += 1;
    counts.firstAt ??= Date.now();
    if (delayMs <= 0) return handle(req, res);
    const timer = setTimeout(() => {
      timers.delete(timer);
      handle(req, res);
    }, delayMs);
    timers.add(timer);
  });
  // Longer than a client's idle keep-alive, so the proxy is not the one closing idle sockets under it.
  server.keepAliveTimeout = 30_000;
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());

  return {
    url: `http://127.0.0.1:${port}`,
    stats: () => ({ ...counts, byStatus: { ...counts.byStatus } }),
    setDelay(ms) {
      delayMs = ms;
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      const stopped = new Promise((resolve) => server.close(() => resolve(undefined)));
      server.closeAllConnections();
      agent.destroy();
      await stopped;
    },
  };
}
