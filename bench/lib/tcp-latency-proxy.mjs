// A TCP proxy that adds latency, for a database on this machine to answer as one across a
// network does (bench/main-job.mjs --db-latency-ms, in front of PostgreSQL's port). Every
// byte from the client reaches the upstream `delayMs` after it arrived, in order; the
// answers come back at once. So each round trip (a statement and its answer) takes at
// least `delayMs` more, whatever the protocol: the whole delay on the way there, rather
// than half each way, because Node's timers do not fire sooner than 1 ms.
import { createConnection, createServer } from 'node:net';

/**
 * @param {{ host?: string, port: number, delayMs: number }} options the upstream and the delay
 * @returns {Promise<{ port: number, url(databaseUrl: string): string, stats(): { connections: number, bytesDelayed: number }, setDelay(ms: number): void, close(): Promise<void> }>}
 */
export async function startTcpLatencyProxy({ host = '127.0.0.1', port, delayMs }) {
  let delay = delayMs;
  const stats = { connections: 0, bytesDelayed: 0 };
  const sockets = new Set();

  // Half-open: a client's end is passed on after its delay too, behind the bytes before it.
  const server = createServer({ allowHalfOpen: true }, (client) => {
    stats.connections += 1;
    const upstream = createConnection({ host, port });
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.setNoDelay(true);
      socket.on('close', () => sockets.delete(socket));
    }
    /** Chunks from the client waiting out their delay, oldest first: { due, chunk } or { due, end: true }. */
    const queue = [];
    let timer;
    const release = () => {
      timer = undefined;
      const now = performance.now();
      while (queue.length > 0 && queue[0].due <= now) {
        const next = queue.shift();
        if (next.end) upstream.end();
        else if (!upstream.write(next.chunk)) {
          // The upstream is slow to take it: hold the client until it is.
          client.pause();
          upstream.once('drain', () => client.resume());
        }
      }
      if (queue.length > 0) timer = setTimeout(release, queue[0].due - now);
    };
    const hold = (entry) => {
      queue.push(entry);
      if (delay <= 0) return release();
      timer ??= setTimeout(release, Math.max(0, queue[0].due - performance.now()));
    };
    client.on('data', (chunk) => {
      stats.bytesDelayed += chunk.length;
      hold({ due: performance.now() + delay, chunk });
    });
    client.on('end', () => hold({ due: performance.now() + delay, end: true }));
    // The answers at once; the upstream's end ends the client's side.
    upstream.pipe(client);
    const fail = () => {
      clearTimeout(timer);
      queue.length = 0;
      client.destroy();
      upstream.destroy();
    };
    client.on('error', fail);
    upstream.on('error', fail);
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const proxyPort = server.address().port;
  return {
    port: proxyPort,
    /** The same database URL, through the proxy. */
    url(databaseUrl) {
      const url = new URL(databaseUrl);
      url.hostname = '127.0.0.1';
      url.port = String(proxyPort);
      return url.href;
    },
    stats: () => ({ ...stats }),
    setDelay(ms) {
      delay = ms;
    },
    async close() {
      const closed = new Promise((resolve) => server.close(resolve));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}
