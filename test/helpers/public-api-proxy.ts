// A target that offers only the public API, in front of a real ferry service (real HTTP
// on 127.0.0.1): integration records keep only the public fields (no tokenFields,
// migrationRoute or dataTypes), every /admin route and ferry's /events routes (the list and
// the live stream) answer 404 as an unknown route does, and an optional latency is added to
// every request. It records what the client asked.
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';

/** The Integration record's fields in the public API's own documents; ferry's extensions are left out. */
export const PUBLIC_INTEGRATION_FIELDS = [
  'key', 'logoUrl', 'name', 'enabled', 'sourceId', 'sourceType', 'integrationId', 'isOfflineConnector', 'isBeta', 'dataProvidedBy', 'datatypeFeatures',
];

export interface PublicApiProxy {
  url: string;
  /** Every request the proxy received: method and path (with the query). */
  requests: Array<{ method: string; path: string }>;
  close(): Promise<void>;
}

function publicIntegration(record: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).filter(([k]) => PUBLIC_INTEGRATION_FIELDS.includes(k)));
}

/** The body the public API would send: integration records stripped to their public fields (and `extra` ones listed too). */
function publicBody(path: string, body: Buffer, contentType: string | undefined, extra: Array<Record<string, unknown>>): Buffer {
  if (!/^\/integrations(\/[^/?]+)?(\?|$)/.test(path) || !contentType?.includes('json') || body.length === 0) return body;
  const parsed = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
  const stripped = Array.isArray(parsed.results)
    ? { ...parsed, results: [...(parsed.results as Array<Record<string, unknown>>).map(publicIntegration), ...extra], totalResults: Number(parsed.totalResults) + extra.length }
    : 'key' in parsed ? publicIntegration(parsed) : parsed;
  return Buffer.from(JSON.stringify(stripped));
}

function notFound(req: IncomingMessage, res: ServerResponse): void {
  const body = JSON.stringify({ statusCode: 404, service: 'PublicApi', error: `No route ${req.method} ${req.url}.`, correlationId: 'public-proxy' });
  res.writeHead(404, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

export interface PublicApiProxyOptions {
  latencyMs?: number;
  /** Integrations the target lists beyond ferry's (ones a newer service knows and this ferry does not). */
  extraIntegrations?: Array<Record<string, unknown>>;
}

export async function startPublicApiProxy(target: string, options: PublicApiProxyOptions = {}): Promise<PublicApiProxy> {
  const upstream = new URL(target);
  const requests: PublicApiProxy['requests'] = [];
  const server = createServer((req, res) => {
    const path = req.url ?? '/';
    requests.push({ method: req.method ?? 'GET', path });
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const forward = () => {
        if (/^\/(admin|events)(\/|\?|$)/.test(path)) return notFound(req, res);
        const headers = { ...req.headers, host: upstream.host };
        const out = httpRequest({ host: upstream.hostname, port: upstream.port, method: req.method, path, headers }, (answer) => {
          const body: Buffer[] = [];
          answer.on('data', (chunk: Buffer) => body.push(chunk));
          answer.on('end', () => {
            const sent = publicBody(path, Buffer.concat(body), answer.headers['content-type'], options.extraIntegrations ?? []);
            const replyHeaders = { ...answer.headers, 'content-length': String(sent.length) };
            delete replyHeaders['transfer-encoding'];
            res.writeHead(answer.statusCode ?? 502, replyHeaders);
            res.end(sent);
          });
        });
        out.on('error', (err) => {
          res.writeHead(502, { 'content-type': 'text/plain' });
          res.end(`proxy: ${err.message}`);
        });
        out.end(Buffer.concat(chunks));
      };
      if (options.latencyMs) setTimeout(forward, options.latencyMs);
      else forward();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${address.port}`,
    requests,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
