// A proxy in front of a real service (real HTTP on 127.0.0.1, port 0) that lets a test
// decide, request by request, when a data page is forwarded: hold page 2 until page 3 has
// been answered (pages out of order, with no timing involved), run a resync while page 5
// waits, or answer a page with an error of the test's choosing. It records the order in
// which data pages arrived and were answered.
import { Agent, createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';

export interface ProxiedRequest {
  method: string;
  /** Path and query string as the client sent them. */
  path: string;
  /** For GET …/data/{type}: the `page` parameter (1 when absent); undefined for other paths. */
  page?: number;
}

/** What to do with a request: forward it (after the promise, if any), or answer it with `status`. */
export type Decision = void | undefined | { status: number; retryAfter?: number };

export interface PageProxyOptions {
  /** Called as each request arrives; the request is forwarded once it resolves. */
  before?: (request: ProxiedRequest, proxy: PageProxy) => Decision | Promise<Decision>;
}

export interface PageProxy {
  url: string;
  /** Data pages in the order their requests arrived. */
  arrived: number[];
  /** Data pages in the order their answers were complete. */
  answered: number[];
  /** Resolves once data page `page` has been answered (`times` times). */
  whenAnswered(page: number, times?: number): Promise<void>;
  close(): Promise<void>;
}

const DATA_PAGE = /^\/companies\/[^/]+\/data\/(?!all|queue|history)[^/?]+(\?|$)/;

export async function startPageProxy(target: string, options: PageProxyOptions = {}): Promise<PageProxy> {
  const upstream = new URL(target);
  const agent = new Agent({ keepAlive: true });
  const arrived: number[] = [];
  const answered: number[] = [];
  const waiters: Array<{ page: number; times: number; resolve: () => void }> = [];
  const count = (page: number) => answered.filter((p) => p === page).length;
  const settleWaiters = () => {
    for (let i = waiters.length - 1; i >= 0; i--) {
      const w = waiters[i]!;
      if (count(w.page) >= w.times) {
        waiters.splice(i, 1);
        w.resolve();
      }
    }
  };

  const forward = (req: IncomingMessage, res: ServerResponse, body: Buffer, page: number | undefined) => {
    const headers = { ...req.headers, host: upstream.host };
    delete headers.connection;
    const out = httpRequest({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers, agent }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
      answer.on('end', () => {
        if (page === undefined) return;
        answered.push(page);
        settleWaiters();
      });
    });
    out.on('error', (err) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`proxy: ${err.message}`);
    });
    out.end(body);
  };

  const server = createServer((req, res) => {
    const path = req.url ?? '/';
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      let page: number | undefined;
      if (req.method === 'GET' && DATA_PAGE.test(path)) {
        page = Number(new URL(path, 'http://proxy').searchParams.get('page') ?? 1);
        arrived.push(page);
      }
      Promise.resolve(options.before?.({ method: req.method ?? 'GET', path, ...(page !== undefined ? { page } : {}) }, proxy)).then((decision) => {
        if (!decision) return forward(req, res, Buffer.concat(chunks), page);
        const text = JSON.stringify({ statusCode: decision.status, service: 'PageProxy', error: `Injected ${decision.status}.` });
        res.writeHead(decision.status, {
          'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text),
          ...(decision.retryAfter !== undefined ? { 'retry-after': String(decision.retryAfter) } : {}),
        });
        res.end(text);
      }, (err: Error) => {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(`proxy hook failed: ${err.message}`);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const proxy: PageProxy = {
    url: `http://127.0.0.1:${port}`,
    arrived,
    answered,
    whenAnswered: (page, times = 1) => new Promise<void>((resolve) => {
      waiters.push({ page, times, resolve });
      settleWaiters();
    }),
    close: () => new Promise<void>((resolve) => {
      agent.destroy();
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
  return proxy;
}
