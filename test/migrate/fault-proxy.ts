// A small HTTP proxy in front of a real service that injects faults on a script: the
// n-th distinct request of each kind gets schedule[kind][n % length], and a request seen
// before (a retry: same method, path and body) always goes through untouched, so every
// run makes progress and injects the same number of each fault whatever the interleaving.
//   before-*: the service never sees the request (429, 500, 503, a reset connection);
//   after-*: the service handles it, then the client gets 500 or a reset connection
//            instead of the answer (the ambiguous case: did it happen or not?).
import { createHash, randomUUID } from 'node:crypto';
import { Agent, createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Fault = '429-before' | '500-before' | '503-before' | 'reset-before' | '500-after' | 'reset-after' | '401';
export type Kind = 'create-company' | 'create-connection' | 'authorize' | 'sync' | 'get' | 'other';

export interface ProxyRequest {
  method: string;
  path: string;
  body: string;
  kind: Kind;
}

export interface FaultProxyOptions {
  /** Per kind, the faults in turn (undefined: pass through). */
  schedule?: Partial<Record<Kind, Array<Fault | undefined>>>;
  /** Decides a fault for every request (after the schedule), e.g. "401 from now on". */
  override?: (request: ProxyRequest) => Fault | undefined;
  /** Awaited before a request is forwarded (to hold requests while the test acts). */
  gate?: (request: ProxyRequest) => Promise<void> | void;
}

export interface FaultProxy {
  url: string;
  /** Faults injected, by `kind fault`. */
  injected: Record<string, number>;
  /** Requests forwarded to the service, by kind. */
  forwarded: Record<Kind, number>;
  close(): Promise<void>;
}

export function kindOf(method: string, path: string): Kind {
  const bare = path.split('?')[0]!;
  if (method === 'POST' && bare === '/companies') return 'create-company';
  if (method === 'POST' && /^\/companies\/[^/]+\/connections$/.test(bare)) return 'create-connection';
  if (method === 'PUT' && bare.endsWith('/authorization')) return 'authorize';
  if (method === 'POST' && bare.endsWith('/data/all')) return 'sync';
  if (method === 'GET') return 'get';
  return 'other';
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function envelope(res: ServerResponse, status: number, error: string, headers: Record<string, string> = {}): void {
  const correlationId = randomUUID();
  res.writeHead(status, { 'content-type': 'application/json', 'x-correlation-id': correlationId, ...headers });
  res.end(JSON.stringify({ statusCode: status, service: 'PublicApi', error, correlationId }));
}

export async function startFaultProxy(target: string, options: FaultProxyOptions): Promise<FaultProxy> {
  const upstream = new URL(target);
  const agent = new Agent({ keepAlive: true, maxSockets: 32 });
  const seen = new Set<string>();
  const counters: Partial<Record<Kind, number>> = {};
  const injected: Record<string, number> = {};
  const forwarded: Record<Kind, number> = { 'create-company': 0, 'create-connection': 0, authorize: 0, sync: 0, get: 0, other: 0 };

  const forward = (req: IncomingMessage, body: Buffer) =>
    new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }>((resolve, reject) => {
      const out = httpRequest({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: { ...req.headers, host: upstream.host }, agent }, (res) => {
        void readBody(res).then((b) => resolve({ status: res.statusCode ?? 502, headers: res.headers, body: b }), reject);
      });
      out.on('error', reject);
      out.end(body);
    });

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const body = await readBody(req);
    const method = req.method ?? 'GET';
    const path = req.url ?? '/';
    const request: ProxyRequest = { method, path, body: body.toString('utf8'), kind: kindOf(method, path) };
    const identity = createHash('sha256').update(`${method} ${path}\n`).update(body).digest('hex');
    let fault: Fault | undefined;
    if (!seen.has(identity)) {
      seen.add(identity);
      const schedule = options.schedule?.[request.kind];
      if (schedule && schedule.length > 0) {
        const n = counters[request.kind] ?? 0;
        counters[request.kind] = n + 1;
        fault = schedule[n % schedule.length];
      }
    }
    fault = options.override?.(request) ?? fault;
    if (fault) injected[`${request.kind} ${fault}`] = (injected[`${request.kind} ${fault}`] ?? 0) + 1;

    switch (fault) {
      case 'reset-before':
        req.socket.destroy();
        return;
      case '429-before':
        envelope(res, 429, 'Rate limit exceeded (injected).', { 'retry-after': '0' });
        return;
      case '500-before':
        envelope(res, 500, 'Internal error (injected before the service).');
        return;
      case '503-before':
        envelope(res, 503, 'Service unavailable (injected).');
        return;
      case '401':
        envelope(res, 401, 'Unauthorized: the API key is not valid (injected).');
        return;
      default:
        break;
    }
    await options.gate?.(request);
    const answer = await forward(req, body);
    forwarded[request.kind] += 1;
    if (fault === 'reset-after') {
      req.socket.destroy();
      return;
    }
    if (fault === '500-after') {
      envelope(res, 500, 'Internal error (injected after the service answered).');
      return;
    }
    const headers = { ...answer.headers };
    delete headers['transfer-encoding'];
    delete headers.connection;
    headers['content-length'] = String(answer.body.length);
    res.writeHead(answer.status, headers);
    res.end(answer.body);
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) envelope(res, 502, 'Bad gateway (test proxy).');
      else res.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    injected,
    forwarded,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}
