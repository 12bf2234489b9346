// `ferry sandbox serve` and `ferry serve --sandbox-url`, each run in this process as the
// binary would run it: the sandbox platforms on their own, judging admin keys by asking
// the service (--service-url), and the service using that sandbox for tenants, migrations
// and syncs. The tests of the first describe run in order and share the two. The real
// processes (their signals, their plain output) are in sandbox-serve.e2e.test.ts.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ferry, startSandboxInProcess } from '../helpers/in-process.js';
import { closeServer, listenOn, reservePort } from '../helpers/processes.js';
import { basic, tempDir } from '../helpers/service.js';
import { type ServeHandle, startTestStack } from '../helpers/stack.js';
import { waitFor } from '../helpers/sync.js';
import { readResults } from '../migrate/support.js';

const JUDGE_UNAVAILABLE = 'The ferry service that checks the sandbox\'s admin keys (--service-url) could not be asked. Retry shortly.';

async function sandboxAdmin(sandboxUrl: string, apiKey: string | undefined, path = '/admin/tenants'): Promise<{ status: number; headers: Headers; body: any }> {
  const response = await fetch(sandboxUrl + path, { headers: apiKey === undefined ? {} : { authorization: basic(apiKey) } });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}

describe('ferry sandbox serve beside ferry serve --sandbox-url', () => {
  const work = tempDir('ferry-sandbox-serve-');
  const sandboxData = join(work, 'sandbox');
  const serviceData = join(work, 'service');
  let servicePort: number;
  let serviceUrl: string;
  let sandbox: Awaited<ReturnType<typeof startSandboxInProcess>>;
  let serve: ServeHandle | undefined;
  let tokensFile: string;

  const startService = () => startTestStack('serve', { dataDir: serviceData, args: ['--port', String(servicePort), '--sandbox-url', sandbox.url] });

  beforeAll(async () => {
    // Each process needs the other's URL, and a port-0 process learns its own only once it
    // listens. The sandbox only asks the service when an admin request comes, so reserve the
    // service's port first, give it to the sandbox as --service-url, start the sandbox on
    // port 0, then the service on the reserved port with the sandbox's URL.
    servicePort = await reservePort();
    serviceUrl = `http://127.0.0.1:${servicePort}`;
    sandbox = await startSandboxInProcess(['--data-dir', sandboxData, '--service-url', serviceUrl]);
    serve = await startService();
  });

  afterAll(async () => {
    await serve?.stop('SIGKILL');
    await sandbox?.stop('SIGKILL');
    rmSync(work, { recursive: true, force: true });
  });

  it('prints the listening lines; the service advertises the given sandbox and starts none of its own', async () => {
    expect(sandbox.ready).toEqual({ event: 'listening', baseUrl: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/), dataDir: sandboxData });
    expect(serve!.listening).toMatchObject({ event: 'listening', baseUrl: serviceUrl, sandboxUrl: sandbox.url, dataDir: serviceData });
    expect(existsSync(join(sandboxData, 'sandbox.db'))).toBe(true);
    expect(existsSync(join(serviceData, 'sandbox.db'))).toBe(false);
    const advertised = await serve!.api.call('GET', '/admin/sandbox');
    expect(advertised.status).toBe(200);
    expect(advertised.body).toEqual({ url: sandbox.url });
    expect(sandbox.stderr()).not.toContain('admin routes are shut');
  });

  it('sandbox tenants create goes through the service to the standalone sandbox', async () => {
    tokensFile = join(work, 'tokens.csv');
    const created = await ferry([...serve!.target(), 'sandbox', 'tenants', 'create', '--platform', 'gbol', '--count', '2', '--invoices', '5', '--out', tokensFile]);
    expect(created.code, created.stderr).toBe(0);
    const rows = parse(readFileSync(tokensFile, 'utf8'), { columns: true }) as Array<{ externalId: string }>;
    expect(rows).toHaveLength(2);
    // The tenants are the standalone sandbox's, asked directly with the service's admin key.
    const listed = await sandboxAdmin(sandbox.url, serve!.adminKey, '/admin/tenants?platform=gbol');
    expect(listed.status).toBe(200);
    expect(listed.body.results.map((t: { id: string }) => t.id).sort()).toEqual(rows.map((r) => r.externalId).sort());
    const viaCli = await ferry([...serve!.target(), '--json', 'sandbox', 'tenants', 'list']);
    expect(viaCli.code, viaCli.stderr).toBe(0);
    expect(JSON.parse(viaCli.stdout)).toHaveLength(2);
  });

  it('migrates the tenants\' tokens through the service and syncs them from the standalone sandbox', async () => {
    const migrated = await ferry([...serve!.target(), 'migrate', 'tokens', tokensFile, '--yes']);
    expect(migrated.code, migrated.stderr).toBe(0);
    const results = readResults(`${tokensFile}.results.csv`);
    expect(results.map((r) => r.status)).toEqual(['migrated', 'migrated']);
    const synced = await ferry([...serve!.target(), 'sync', '--from-results', `${tokensFile}.results.csv`, '--wait', '--timeout', '60s']);
    expect(synced.code, synced.stderr).toBe(0);
    const lines = synced.stdout.trim().split('\n').map((line) => line.split('\t'));
    expect(lines.map((cells) => cells[0]).sort()).toEqual(results.map((r) => r.companyId).sort());
    for (const cells of lines) expect(cells[2]).toBe('complete');
    const invoices = await serve!.api.call('GET', `/companies/${results[0]!.companyId}/data/invoices?pageSize=10`);
    expect(invoices.status).toBe(200);
    expect(invoices.body.totalResults).toBe(5);
  });

  it('the sandbox asks the service: a client key is 403, an unknown key 401, a revoked admin key 403 at once', async () => {
    const client = await serve!.api.call('POST', '/admin/clients', { body: { name: 'Not Admin', plan: 'Paid' } });
    expect(client.status).toBe(201);
    const denied = await sandboxAdmin(sandbox.url, client.body.apiKey);
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({ error: 'forbidden' });
    expect((await sandboxAdmin(sandbox.url, 'fy_not_a_key')).status).toBe(401);
    expect((await sandboxAdmin(sandbox.url, undefined)).status).toBe(401);

    const adminId = (await serve!.api.call('GET', '/profile')).body.clientId as string;
    const extra = await serve!.api.call('POST', `/admin/clients/${adminId}/apiKeys`);
    expect(extra.status).toBe(201);
    expect((await sandboxAdmin(sandbox.url, extra.body.apiKey)).status).toBe(200);
    expect((await serve!.api.call('DELETE', `/admin/clients/${adminId}/apiKeys/${extra.body.id}`)).status).toBe(204);
    expect((await sandboxAdmin(sandbox.url, extra.body.apiKey)).status).toBe(403);
  });

  it('with the service stopped, admin requests answer 503; once it is back, they pass again', async () => {
    const stopped = await serve!.stop('SIGTERM');
    serve = undefined;
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(stopped.stdout).toContain('"event":"stopped"');

    const adminKey = readFileSync(join(serviceData, 'admin.key'), 'utf8').trim();
    const unavailable = await sandboxAdmin(sandbox.url, adminKey);
    expect(unavailable.status).toBe(503);
    expect(unavailable.headers.get('retry-after')).toBe('1');
    expect(unavailable.body).toEqual({ error: 'unavailable', message: JUDGE_UNAVAILABLE });
    await waitFor('the sandbox to say why on stderr', async () => sandbox.stderr().includes(`admin key check: ${serviceUrl}/admin/sandbox could not be asked`), 10_000);
    expect(sandbox.stderr()).not.toContain(adminKey);
    // Requests without a key are refused without asking anyone.
    expect((await sandboxAdmin(sandbox.url, undefined)).status).toBe(401);

    serve = await startService();
    expect((await sandboxAdmin(sandbox.url, adminKey)).status).toBe(200);
  });
});

describe('ferry sandbox serve on its own', () => {
  it('a port in use is a friendly error, exit 1', async () => {
    const dataDir = tempDir('ferry-sandbox-busy-');
    const busy = await listenOn(0);
    const { port } = busy.address() as { port: number };
    try {
      const result = await ferry(['sandbox', 'serve', '--port', String(port), '--data-dir', dataDir]);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`Port ${port} on 127.0.0.1 is already in use.`);
      expect(result.stderr).toContain('--port 0');
    } finally {
      await closeServer(busy);
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('refuses a URL flag that is not an absolute http(s) URL, and --sandbox-host with --sandbox-url', async () => {
    const scratch = tempDir('ferry-sandbox-flags-');
    const bad = await ferry(['sandbox', 'serve', '--service-url', 'ftp://example.com']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--service-url must be an http or https URL');
    const relative = await ferry(['serve', '--sandbox-url', 'localhost:9090/x?y=1']);
    expect(relative.code).toBe(2);
    expect(relative.stderr).toContain('--sandbox-url must be');
    const both = await ferry(['serve', '--sandbox-url', 'http://127.0.0.1:9', '--sandbox-host', '0.0.0.0', '--data-dir', join(scratch, 'data')]);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--sandbox-host and --sandbox-url do not go together');
    expect(existsSync(join(scratch, 'data'))).toBe(false);
    rmSync(scratch, { recursive: true, force: true });
  });
});
