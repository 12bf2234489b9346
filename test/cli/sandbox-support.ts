// Shared by the `ferry sandbox` tests: the tenants CSV read back, and a stand-in for the
// sandbox that forwards or drops each tenants call, with a `ferry serve` that goes through it.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll } from 'vitest';
import { basic } from '../helpers/service.js';
import { startTestStack, type ServeHandle } from '../helpers/stack.js';

/** Whether the tenants call numbered `call` (1, 2, …) goes through, now or once the promise settles. */
export type Decide = (call: number) => 'forward' | 'drop' | Promise<'forward' | 'drop'>;

/** The CSV's data rows as [companyName, externalId, …] (token values hold no commas or quotes). */
export function csvRows(path: string): string[][] {
  return readFileSync(path, 'utf8').trim().split('\n').slice(1).map((line) => line.split(','));
}

/**
 * A stand-in for the sandbox, in front of a real one: each POST /admin/tenants is forwarded
 * (with the admin key the real one takes) or dropped mid-request, as `decide` says by its
 * number (1, 2, …). A `ferry serve --sandbox-url` pointed here makes every `ferry sandbox`
 * command use it.
 */
async function tenantsProxy(upstream: string, adminKey: string, decide: Decide) {
  let calls = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => void (async () => {
      const call = req.method === 'POST' && req.url === '/admin/tenants' ? ++calls : 0;
      if (call && (await decide(call)) === 'drop') return void req.socket.destroy();
      const body = chunks.length ? Buffer.concat(chunks) : null;
      const answer = await fetch(upstream + req.url, { method: req.method!, headers: { authorization: basic(adminKey), 'content-type': 'application/json' }, body });
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(await answer.text());
    })().catch(() => req.socket.destroy()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls: () => calls,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

export type TenantsProxy = Awaited<ReturnType<typeof tenantsProxy>>;

export interface ProxiedServe {
  /** A second `ferry serve` whose `ferry sandbox` commands reach the sandbox through `proxy` (from the block's beforeAll on). */
  readonly proxied: ServeHandle;
  readonly proxy: TenantsProxy;
  /** Whether each tenants call goes through: forwarded until a test says otherwise. */
  decide: Decide;
}

/** For a describe block: the proxy in front of `serve()`'s sandbox and a `ferry serve` using it, started before its tests. */
export function useProxiedServe(serve: () => ServeHandle): ProxiedServe {
  let proxied: ServeHandle | undefined;
  let proxy: TenantsProxy | undefined;
  beforeAll(async () => {
    proxy = await tenantsProxy(serve().sandboxUrl, serve().adminKey, (call) => fixture.decide(call));
    proxied = await startTestStack('serve', { args: ['--sandbox-url', proxy.url] });
  });
  afterAll(async () => {
    await proxied?.stop();
    await proxy?.close();
  });
  const fixture: ProxiedServe = {
    get proxied() {
      return proxied!;
    },
    get proxy() {
      return proxy!;
    },
    decide: () => 'forward',
  };
  return fixture;
}
