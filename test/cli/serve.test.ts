// `ferry serve` as a real child process: the listening line, the admin key file, graceful
// shutdown on SIGINT/SIGTERM, maintenance mode, the rate limit and the caps on open event
// streams, and the admin commands against it.
import { statSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runFerry } from '../helpers/cli.js';
import { rawRequest } from '../helpers/raw-http.js';
import { basic, tempDir } from '../helpers/service.js';
import { openStream } from '../helpers/sse-reader.js';
import { type ServeProcess, startTestStack } from '../helpers/stack.js';
import { linkedCompany, readAll, waitFor } from '../helpers/sync.js';

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

  it('--maintenance answers 503 with the error envelope', async () => {
    const maintenance = await startTestStack('process', { dataDir: tempDir(), args: ['--maintenance'] });
    const response = await fetch(`${maintenance.listening.baseUrl}/companies`);
    expect(response.status).toBe(503);
    expect(await response.json()).toMatchObject({ statusCode: 503, service: 'PublicApi' });
    await maintenance.stop();
  });

  it('--rate-limit gives 429 with Retry-After past the limit', async () => {
    const dir = tempDir();
    const limited = await startTestStack('process', { dataDir: dir, args: ['--rate-limit', '1'] });
    const auth = { authorization: basic(readFileSync(join(dir, 'admin.key'), 'utf8').trim()) };
    const first = await fetch(`${limited.listening.baseUrl}/companies`, { headers: auth });
    const second = await fetch(`${limited.listening.baseUrl}/companies`, { headers: auth });
    expect(first.status).toBe(200);
    expect(first.headers.get('x-rate-limit-limit')).toBe('1');
    expect(second.status).toBe(429);
    expect(Number(second.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    await limited.stop();
  });

  it('--max-streams-per-key, --max-streams-per-account and --max-streams cap open event streams; 0 is refused (exit 2)', async () => {
    const dir = tempDir();
    const capped = await startTestStack('process', { dataDir: dir, args: ['--max-streams-per-key', '1', '--max-streams-per-account', '2', '--max-streams', '3'] });
    const baseUrl = capped.listening.baseUrl!;
    const adminKey = readFileSync(join(dir, 'admin.key'), 'utf8').trim();
    const readers: Array<Awaited<ReturnType<typeof openStream>>> = [];
    try {
      const made = await Promise.all([1, 2].map((n) => fetch(`${baseUrl}/admin/clients`, {
        method: 'POST', headers: { authorization: basic(adminKey), 'content-type': 'application/json' }, body: JSON.stringify({ name: `Streams ${n}`, plan: 'Paid' }),
      }).then((r) => r.json() as Promise<{ id: string; apiKey: string }>)));
      const second = await fetch(`${baseUrl}/admin/clients/${made[0]!.id}/apiKeys`, { method: 'POST', headers: { authorization: basic(adminKey) } })
        .then((r) => r.json() as Promise<{ apiKey: string }>);
      const open = async (key: string) => {
        const reader = await openStream(baseUrl, key, '/events/stream');
        readers.push(reader);
        return reader.status;
      };
      expect(await open(made[0]!.apiKey)).toBe(200);
      expect(await open(made[0]!.apiKey)).toBe(429); // the key's one
      expect(await open(second.apiKey)).toBe(200);
      expect(await open(second.apiKey)).toBe(429); // the key's, and the account's two
      expect(await open(made[1]!.apiKey)).toBe(200);
      expect(await open(adminKey)).toBe(503); // the process's three
    } finally {
      for (const reader of readers) reader.close();
      await capped.stop();
    }
    const zero = await runFerry(['serve', '--max-streams-per-key', '0', '--data-dir', tempDir()]);
    expect(zero.code).toBe(2);
    expect(zero.stderr).toContain('--max-streams-per-key must be a whole number of at least 1');
  });

  it('--request-timeout: a request not in within it is a 408 and a closed connection; a bad value is exit 2', async () => {
    const dir = tempDir();
    const slow = await startTestStack('process', { dataDir: dir, args: ['--request-timeout', '1s'] });
    const body = Buffer.from(JSON.stringify({ name: 'Slow Ltd', description: 'x'.repeat(60) }));
    const outcome = await rawRequest(slow.listening.baseUrl!, {
      method: 'POST', path: '/companies', headers: { authorization: basic(slow.adminKey), 'content-type': 'application/json' },
      body: { trickle: body, everyMs: 100 }, deadlineMs: 15_000,
    });
    expect(outcome.response?.status).toBe(408);
    expect(outcome.response?.body).toMatchObject({ statusCode: 408, service: 'PublicApi' });
    expect(outcome.closed).toBe(true);
    expect(outcome.bodyDone).toBe(false);
    await slow.stop();

    const bad = await runFerry(['serve', '--port', '0', '--data-dir', tempDir(), '--request-timeout', 'soon']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--request-timeout must be a duration such as 90s');
  });

  it('--attachment-quota caps each account\'s attachments with a 413 naming it; a size it cannot read is exit 2', async () => {
    const unreadable = await runFerry(['serve', '--attachment-quota', 'lots', '--data-dir', tempDir()]);
    expect(unreadable.code).toBe(2);
    expect(unreadable.stderr).toContain('--attachment-quota must be a size such as 500MiB or 2GiB.');

    const capped = await startTestStack('process', { args: ['--attachment-quota', '64KiB'] });
    try {
      const linked = await linkedCompany(capped.api, capped.sandboxUrl, 'gbol', 2);
      expect((await capped.api.call('POST', `/companies/${linked.companyId}/data/all`)).status).toBe(204);
      await waitFor('the invoices to sync', async () => (await capped.api.call('GET', `/companies/${linked.companyId}/dataStatus`)).body.invoices?.currentStatus === 'Complete');
      const [invoice] = await readAll(capped.api, linked.companyId, 'invoices');
      const upload = () => fetch(`${capped.baseUrl}/companies/${linked.companyId}/connections/${linked.connectionId}/push/invoices/${encodeURIComponent(invoice.id)}/attachment?fileName=scan.pdf`, {
        method: 'POST', headers: { authorization: basic(capped.adminKey), 'content-type': 'application/pdf' }, body: Buffer.alloc(40 * 1024, 1),
      });
      expect((await upload()).status).toBe(200);
      const refused = await upload();
      expect(refused.status).toBe(413);
      expect(((await refused.json()) as { error: string }).error).toMatch(/^The account's attachments would pass its quota of 65536 bytes \(64 KiB\): 40960 bytes are in use/);
    } finally {
      await capped.stop();
    }
  });

  it('a port in use is a clear error', async () => {
    const dir = tempDir();
    const first = await startTestStack('process', { dataDir: dir });
    const port = new URL(first.listening.baseUrl!).port;
    const clash = await runFerry(['serve', '--port', port, '--data-dir', tempDir()]);
    expect(clash.code).toBe(1);
    expect(clash.stderr).toContain(`Port ${port} on 127.0.0.1 is already in use`);
    await first.stop();
  });
});
