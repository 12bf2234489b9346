// `ferry serve` as a real child process: the listening line, the admin key file, the admin
// commands against it, and graceful shutdown on SIGINT/SIGTERM. Its flags are tested in
// this process in serve.test.ts.
import { statSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runFerry } from '../helpers/cli.js';
import { basic, tempDir } from '../helpers/service.js';
import { type ServeProcess, startTestStack } from '../helpers/stack.js';

describe('ferry serve', () => {
  const dataDir = tempDir();
  let serve: ServeProcess | undefined;
  afterAll(async () => {
    await serve?.stop('SIGKILL');
  });

  it('prints the listening line, creates admin.key 0600 and serves the API', async () => {
    serve = await startTestStack('process', { dataDir });
    expect(serve.listening).toMatchObject({ event: 'listening', dataDir });
    expect(serve.listening.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const keyFile = join(dataDir, 'admin.key');
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    const response = await fetch(`${serve.listening.baseUrl}/companies`, { headers: { authorization: basic(readFileSync(keyFile, 'utf8').trim()) } });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-correlation-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('admin commands work against it with --base-url and --api-key-file', async () => {
    const baseUrl = serve!.listening.baseUrl!;
    const keyFile = join(dataDir, 'admin.key');
    const created = await runFerry(['--base-url', baseUrl, '--api-key-file', keyFile, 'admin', 'clients', 'create', '--name', 'Acme', '--plan', 'Free']);
    expect(created.code).toBe(0);
    const apiKey = created.stdout.trim();
    expect(apiKey).toMatch(/^fy_/);
    expect(created.stderr).not.toContain(apiKey);
    const profile = await fetch(`${baseUrl}/profile`, { headers: { authorization: basic(apiKey) } });
    expect(await profile.json()).toMatchObject({ name: 'Acme', plan: 'Free', isAdmin: false });

    const list = await runFerry(['--base-url', baseUrl, '--api-key-file', keyFile, 'admin', 'clients', 'list', '--json']);
    const clients = JSON.parse(list.stdout) as Array<{ id: string; name: string }>;
    const acme = clients.find((c) => c.name === 'Acme')!;

    const key = JSON.parse((await runFerry(['--base-url', baseUrl, '--api-key-file', keyFile, 'admin', 'keys', 'create', acme.id, '--json'])).stdout);
    expect((await fetch(`${baseUrl}/companies`, { headers: { authorization: basic(key.apiKey) } })).status).toBe(200);
    const revoked = await runFerry(['--base-url', baseUrl, '--api-key-file', keyFile, 'admin', 'keys', 'revoke', acme.id, key.id]);
    expect(revoked.code).toBe(0);
    expect((await fetch(`${baseUrl}/companies`, { headers: { authorization: basic(key.apiKey) } })).status).toBe(403);

    // The client's own key on an admin command: 403 → exit code 4, JSON error on stderr.
    const clientKeyFile = join(dataDir, 'client.key');
    writeFileSync(clientKeyFile, apiKey);
    const denied = await runFerry(['--base-url', baseUrl, '--api-key-file', clientKeyFile, '--json', 'admin', 'clients', 'list']);
    expect(denied.code).toBe(4);
    expect(JSON.parse(denied.stderr).error).toMatchObject({ status: 403, exitCode: 4 });
  });

  it('stops gracefully on SIGTERM with exit 0', async () => {
    const result = await serve!.stop('SIGTERM');
    serve = undefined;
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('"event":"stopped"');
  });

  it('stops gracefully on SIGINT with exit 0 and keeps the data for the next start', async () => {
    const again = await startTestStack('process', { dataDir });
    const key = readFileSync(join(dataDir, 'admin.key'), 'utf8').trim();
    const clients = (await (await fetch(`${again.listening.baseUrl}/admin/clients`, { headers: { authorization: basic(key) } })).json()) as any;
    expect(clients.results.map((c: { name: string }) => c.name)).toContain('Acme');
    expect((await again.stop('SIGINT')).code).toBe(0);
  });
});
