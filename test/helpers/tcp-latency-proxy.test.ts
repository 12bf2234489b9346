// The TCP latency proxy of bench/main-job.mjs --db-latency-ms (bench/lib/tcp-latency-proxy.mjs):
// in front of an echo server it delays each round trip and passes every byte through in
// order; in front of PostgreSQL a pool's queries go through it.
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTcpLatencyProxy, type TcpLatencyProxy } from '../../bench/lib/tcp-latency-proxy.mjs';
import { describePostgres, freshDatabase } from './postgres.js';

const proxies: TcpLatencyProxy[] = [];
async function proxy(port: number, delayMs: number): Promise<TcpLatencyProxy> {
  const started = await startTcpLatencyProxy({ port, delayMs });
  proxies.push(started);
  return started;
}
afterAll(async () => {
  await Promise.all(proxies.splice(0).map((p) => p.close()));
});

/** Resolves once `socket` has received `bytes` bytes in all; answers their sha256. */
function receive(socket: Socket, bytes: number): Promise<string> {
  const hash = createHash('sha256');
  let got = 0;
  return new Promise((resolve, reject) => {
    socket.on('data', (chunk: Buffer) => {
      hash.update(chunk);
      got += chunk.length;
      if (got === bytes) resolve(hash.digest('hex'));
      if (got > bytes) reject(new Error(`got ${got} bytes, expected ${bytes}`));
    });
    socket.on('error', reject);
  });
}

describe('TCP latency proxy', () => {
  let echo: Server;
  let echoPort: number;

  beforeAll(async () => {
    echo = createServer({ allowHalfOpen: true }, (socket) => {
      socket.on('error', () => undefined); // the proxy closed under it
      socket.pipe(socket);
    });
    echo.listen(0, '127.0.0.1');
    await once(echo, 'listening');
    echoPort = (echo.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((resolve) => echo.close(resolve));
  });

  async function roundTrip(port: number): Promise<number> {
    const socket = createConnection({ host: '127.0.0.1', port });
    await once(socket, 'connect');
    try {
      const started = performance.now();
      const back = receive(socket, 5);
      socket.write('hello');
      await back;
      return performance.now() - started;
    } finally {
      socket.destroy();
    }
  }

  it('adds its delay to every round trip, and setDelay changes it', async () => {
    const p = await proxy(echoPort, 150);
    // Lower bounds only: the delay is added whatever else the machine is doing.
    expect(await roundTrip(p.port)).toBeGreaterThanOrEqual(149);
    p.setDelay(300);
    expect(await roundTrip(p.port)).toBeGreaterThanOrEqual(299);
    expect(p.stats()).toEqual({ connections: 2, bytesDelayed: 10 });
  });

  it('passes every byte through in order, then the client\'s end', async () => {
    const p = await proxy(echoPort, 5);
    const chunks = Array.from({ length: 200 }, (_, i) => randomBytes(1 + ((i * 7919) % 16_384)));
    const total = chunks.reduce((n, c) => n + c.length, 0);
    const sent = createHash('sha256');
    for (const chunk of chunks) sent.update(chunk);
    const socket = createConnection({ host: '127.0.0.1', port: p.port, allowHalfOpen: true });
    await once(socket, 'connect');
    const back = receive(socket, total);
    const ended = once(socket, 'end');
    for (const chunk of chunks) if (!socket.write(chunk)) await once(socket, 'drain');
    socket.end();
    expect(await back).toBe(sent.digest('hex'));
    // The echo ends its side once the proxy passed the client's end on.
    await ended;
    socket.destroy();
    expect(p.stats().bytesDelayed).toBe(total);
  });

  it('close() ends the connections it holds', async () => {
    const p = await proxy(echoPort, 60_000);
    const socket = createConnection({ host: '127.0.0.1', port: p.port });
    await once(socket, 'connect');
    socket.on('error', () => undefined); // a reset, as the proxy destroys its end
    socket.write('never echoed');
    const closed = new Promise((resolve) => socket.once('close', resolve));
    await p.close();
    await closed;
  });
});

describePostgres('TCP latency proxy in front of PostgreSQL', () => {
  it('carries a client\'s queries, each at least the delay later', async () => {
    const url = await freshDatabase();
    const p = await proxy(Number(new URL(url).port || 5432), 40);
    const client = new Client({ connectionString: p.url(url) });
    await client.connect();
    try {
      const started = performance.now();
      const { rows } = await client.query<{ n: number }>('SELECT 41 + 1 AS n');
      expect(performance.now() - started).toBeGreaterThanOrEqual(39);
      expect(rows).toEqual([{ n: 42 }]);
    } finally {
      await client.end();
    }
  });
});
