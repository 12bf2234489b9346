// Shared by the `ferry sandbox` tests: the tenants CSV read back, and a stand-in for the
// sandbox that forwards or drops each tenants call.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { basic } from '../helpers/service.js';

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
export async function tenantsProxy(upstream: string, adminKey: string, decide: (call: number) => 'forward' | 'drop' | Promise<'forward' | 'drop'>) {
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
