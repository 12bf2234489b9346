// The metrics port (`--metrics-port`): GET /metrics in Prometheus's text format, and the
// same /healthz and /readyz as the API, on a listener of its own. It stays on its own port
// so that a firewall can keep it from clients (it listens on 127.0.0.1 unless told), and
// so that `ferry worker`, which serves no API, has somewhere to be probed and scraped.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { HEALTHY, type ProbeAnswer, type Readiness } from './health.js';

export interface MetricsServerOptions {
  host: string;
  port: number;
  /** The exposition: its content type and text. */
  metrics: () => Promise<{ contentType: string; text: string }>;
  readiness: Readiness;
  onError?: (err: unknown) => void;
}

export interface MetricsServer {
  /** http://host:port/metrics */
  url: string;
  close(): Promise<void>;
}

export async function startMetricsServer(options: MetricsServerOptions): Promise<MetricsServer> {
  const server = createServer((request, response) => {
    void answer(options, request, response).catch((err: unknown) => {
      options.onError?.(err);
      if (!response.headersSent) response.writeHead(500, { 'content-type': 'text/plain' });
      response.end('internal error\n');
    });
  });
  // A scraper keeps its connection open between scrapes; a stop must not wait for it.
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `http://${host}:${port}/metrics`,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}

async function answer(options: MetricsServerOptions, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const path = (request.url ?? '/').split('?')[0];
  if (request.method !== 'GET' && request.method !== 'HEAD') return send(response, 405, 'text/plain', 'GET only\n', { Allow: 'GET, HEAD' });
  if (path === '/metrics') {
    const { contentType, text } = await options.metrics();
    return send(response, 200, contentType, text);
  }
  if (path === '/healthz') return probe(response, HEALTHY);
  if (path === '/readyz') return probe(response, await options.readiness.answer());
  return send(response, 404, 'text/plain', 'not found: /metrics, /healthz and /readyz are served here\n');
}

function probe(response: ServerResponse, { status, body }: ProbeAnswer): void {
  send(response, status, 'application/json; charset=utf-8', JSON.stringify(body));
}

function send(response: ServerResponse, status: number, contentType: string, body: string, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': contentType, 'cache-control': 'no-store', 'content-length': Buffer.byteLength(body), ...headers });
  response.end(response.req.method === 'HEAD' ? undefined : body);
}
