// A service whose CPU is not on this machine's cores, as far as a bench can have one: the
// answers of a real `ferry serve` to a fixed set of GET requests, recorded once and then
// served from memory (a lookup and a write, nothing computed). The remote bench puts the
// latency proxy in front of it to measure a client alone, without the service's work
// competing with the client for the same two cores.
// A request is matched by its path and its query parameters in any order, `page` missing
// counting as page 1 (as the service reads it). Anything not recorded answers 404 and is
// counted, so a client that asks for something else shows in the figures instead of
// passing unnoticed.
import { createServer } from 'node:http';

/** The key a request is recorded and looked up under. */
function keyOf(url) {
  const parsed = new URL(url, 'http://replay');
  const params = [...parsed.searchParams];
  if (!parsed.searchParams.has('page') && parsed.pathname.includes('/data/')) params.push(['page', '1']);
  return `${parsed.pathname}?${params.map(([k, v]) => `${k}=${v}`).sort().join('&')}`;
}

/**
 * Records `paths` (path and query, e.g. `/companies/ID/data/invoices?page=1&pageSize=1000`)
 * from `target` with `headers`, then serves them on 127.0.0.1.
 * @returns {Promise<{ url: string, bytes: number, unknown: () => number, close: () => Promise<void> }>}
 */
export async function startReplayServer(target, paths, headers) {
  const recorded = new Map();
  let bytes = 0;
  for (const path of paths) {
    const response = await fetch(target + path, { headers });
    if (response.status !== 200) throw new Error(`recording ${path}: HTTP ${response.status}`);
    const body = Buffer.from(await response.arrayBuffer());
    recorded.set(keyOf(path), { body, type: response.headers.get('content-type') ?? 'application/json' });
    bytes += body.length;
  }
  let unknown = 0;
  const server = createServer((req, res) => {
    const answer = req.method === 'GET' ? recorded.get(keyOf(req.url ?? '/')) : undefined;
    if (!answer) {
      unknown += 1;
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not recorded"}');
      return;
    }
    res.writeHead(200, { 'content-type': answer.type, 'content-length': answer.body.length }).end(answer.body);
  });
  server.keepAliveTimeout = 30_000;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    bytes,
    unknown: () => unknown,
    close: () => new Promise((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}
