// `ferry serve`'s flags, run in this process (the same runCli as the binary): maintenance
// mode, the rate limit, the caps on open event streams, the request timeout, the attachment
// quota, and a port in use. The process itself (its listening line, signals) is in
// serve.e2e.test.ts.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ferry } from '../helpers/in-process.js';
import { rawRequest } from '../helpers/raw-http.js';
import { basic, tempDir } from '../helpers/service.js';
import { openStream } from '../helpers/sse-reader.js';
import { startTestStack } from '../helpers/stack.js';
import { linkedCompany, readAll, waitFor } from '../helpers/sync.js';

describe('ferry serve', () => {
  it('--maintenance answers 503 with the error envelope', async () => {
    const maintenance = await startTestStack('serve', { dataDir: tempDir(), args: ['--maintenance'] });
    const response = await fetch(`${maintenance.listening.baseUrl}/companies`);
    expect(response.status).toBe(503);
    expect(await response.json()).toMatchObject({ statusCode: 503, service: 'PublicApi' });
    await maintenance.stop();
  });

  it('--rate-limit gives 429 with Retry-After past the limit', async () => {
    const dir = tempDir();
    const limited = await startTestStack('serve', { dataDir: dir, args: ['--rate-limit', '1'] });
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
    const capped = await startTestStack('serve', { dataDir: dir, args: ['--max-streams-per-key', '1', '--max-streams-per-account', '2', '--max-streams', '3'] });
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
    const zero = await ferry(['serve', '--max-streams-per-key', '0', '--data-dir', tempDir()]);
    expect(zero.code).toBe(2);
    expect(zero.stderr).toContain('--max-streams-per-key must be a whole number of at least 1');
  });

  it('--request-timeout: a request not in within it is a 408 and a closed connection; a bad value is exit 2', async () => {
    const dir = tempDir();
    const slow = await startTestStack('serve', { dataDir: dir, args: ['--request-timeout', '1s'] });
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

    const bad = await ferry(['serve', '--port', '0', '--data-dir', tempDir(), '--request-timeout', 'soon']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--request-timeout must be a duration such as 90s');
  });

  it('--attachment-quota caps each account\'s attachments with a 413 naming it; a size it cannot read is exit 2', async () => {
    const unreadable = await ferry(['serve', '--attachment-quota', 'lots', '--data-dir', tempDir()]);
    expect(unreadable.code).toBe(2);
    expect(unreadable.stderr).toContain('--attachment-quota must be a size such as 500MiB or 2GiB.');

    const capped = await startTestStack('serve', { args: ['--attachment-quota', '64KiB'] });
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
    const first = await startTestStack('serve', { dataDir: dir });
    const port = new URL(first.listening.baseUrl!).port;
    const clash = await ferry(['serve', '--port', port, '--data-dir', tempDir()]);
    expect(clash.code).toBe(1);
    expect(clash.stderr).toContain(`Port ${port} on 127.0.0.1 is already in use`);
    await first.stop();
  });
});
