// docs/operations.md's procedures, run as written against `ferry serve` (in this process,
// as the binary runs it): the admin key rotated with `whoami`, `admin keys list`, `create`
// and `revoke`; a data dir left with a revoked admin key gets a new one at its next start;
// and the three lines of the README's service section (`--metrics-port`, /metrics, /readyz).
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ferry } from '../helpers/in-process.js';
import { callApi, tempDir } from '../helpers/service.js';
import { startTestStack } from '../helpers/stack.js';
import { getJson, scrape, total } from '../helpers/observability.js';

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const RUNBOOK = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8');

describe('the runbook', () => {
  it('rotates the admin key with the commands it gives, and a data dir left with a revoked key gets a new one', async () => {
    expect(RUNBOOK).toContain('ferry admin keys create ADMIN_CLIENT_ID --api-key-file admin.key > new.key');
    const dataDir = join(tempDir('ferry-runbook-'), 'data');
    const serve = await startTestStack('serve', { dataDir, args: ['--log-format', 'off'] });
    const env = { FERRY_BASE_URL: serve.baseUrl };
    let running = serve;
    try {
      const old = serve.adminKey;
      const who = await ferry(['whoami', '--json', '--api-key-file', serve.adminKeyFile], { env });
      const adminId = JSON.parse(who.stdout).clientId as string;
      const listed = await ferry(['admin', 'keys', 'list', adminId, '--json', '--api-key-file', serve.adminKeyFile], { env });
      const oldIds = (JSON.parse(listed.stdout) as Array<{ id: string; revoked: string | null }>).filter((k) => !k.revoked).map((k) => k.id);
      expect(oldIds).toHaveLength(1);
      const created = await ferry(['admin', 'keys', 'create', adminId, '--api-key-file', serve.adminKeyFile], { env });
      expect(created.code, created.stderr).toBe(0);
      const fresh = created.stdout.trim();
      writeFileSync(serve.adminKeyFile, `${fresh}\n`, { mode: 0o600 });
      for (const id of oldIds) expect((await ferry(['admin', 'keys', 'revoke', adminId, id, '--api-key-file', serve.adminKeyFile], { env })).code).toBe(0);
      expect((await callApi(serve.baseUrl, old, 'GET', '/admin/clients')).status).toBe(403);
      expect((await callApi(serve.baseUrl, fresh, 'GET', '/admin/clients')).status).toBe(200);
      // The embedded target and the next start read the new key from admin.key.
      await serve.stop();
      running = await startTestStack('serve', { dataDir, args: ['--log-format', 'off'] });
      expect(running.adminKey).toBe(fresh);
      // An admin.key whose key was revoked: the start writes a new key of the account there.
      writeFileSync(join(dataDir, 'admin.key'), `${old}\n`);
      await running.stop();
      running = await startTestStack('serve', { dataDir, args: ['--log-format', 'off'] });
      expect(running.adminKey).not.toBe(old);
      expect(readFileSync(join(dataDir, 'admin.key'), 'utf8').trim()).toBe(running.adminKey);
      expect((await callApi(running.baseUrl, running.adminKey, 'GET', '/admin/clients')).status).toBe(200);
    } finally {
      await running.stop();
      rmSync(dirname(dataDir), { recursive: true, force: true });
    }
  });
});

describe('the README\'s service section', () => {
  it('shows --metrics-port, /metrics and /readyz in three lines that work as written', async () => {
    const lines = README.split('\n');
    const at = lines.findIndex((line) => line.startsWith('ferry serve --metrics-port 9464'));
    expect(at).toBeGreaterThan(0);
    expect(lines[at + 1]).toMatch(/^curl -s http:\/\/127\.0\.0\.1:9464\/metrics/);
    expect(lines[at + 2]).toMatch(/^curl -s http:\/\/127\.0\.0\.1:8080\/readyz/);
    // The same, on ports the test owns.
    const serve = await startTestStack('serve', { args: ['--metrics-port', '0', '--log-format', 'off'] });
    try {
      const { samples } = await scrape(serve.listening.metricsUrl!);
      expect(samples.some((s) => s.name === 'ferry_http_requests_total' || s.name === 'process_cpu_seconds_total')).toBe(true);
      expect(total(samples, 'ferry_database_unreachable')).toBe(0);
      expect(await getJson(`${serve.baseUrl}/readyz`)).toMatchObject({ status: 200, body: { status: 'ready' } });
    } finally {
      await serve.stop();
    }
  });
});
