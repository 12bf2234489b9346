// `ferry sandbox …` as real child processes, against a remote `ferry serve` (found through
// GET /admin/sandbox) and on the embedded target.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runFerry } from '../helpers/cli.js';
import { tempDir } from '../helpers/service.js';
import { integrationByKey } from '../../src/platforms/registry.js';
import { type ServeProcess, startTestStack } from '../helpers/stack.js';

describe('ferry sandbox against a remote ferry serve', () => {
  const dataDir = tempDir();
  const work = tempDir();
  let serve: ServeProcess;
  let remote: string[];
  beforeAll(async () => {
    serve = await startTestStack('process', { dataDir });
    remote = ['--base-url', serve.listening.baseUrl!, '--api-key-file', join(dataDir, 'admin.key')];
  });
  afterAll(async () => {
    await serve.stop();
  });

  it('tenants create writes a 0600 CSV with the integration token columns', async () => {
    const out = join(work, 'xero.csv');
    const result = await runFerry([...remote, 'sandbox', 'tenants', 'create', '--platform', 'gbol', '--count', '3', '--invoices', '20', '--out', out]);
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toBe(out);
    expect(statSync(out).mode & 0o777).toBe(0o600);
    const [header, ...rows] = readFileSync(out, 'utf8').trim().split('\n');
    const tokenFields = integrationByKey('gbol')!.tokenFields.map((f) => f.name);
    expect(header!.split(',')).toEqual(['companyName', 'externalId', 'platformKey', ...tokenFields]);
    expect(rows).toHaveLength(3);
    // Tokens are the file's content, never the command's output.
    const accessToken = rows[0]!.split(',')[3]!;
    expect(result.stdout + result.stderr).not.toContain(accessToken);
  });

  it('refuses to replace the CSV without --force, before creating anything', async () => {
    const out = join(work, 'xero.csv');
    const before = JSON.parse((await runFerry([...remote, '--json', 'sandbox', 'tenants', 'list'])).stdout).length;
    const refused = await runFerry([...remote, 'sandbox', 'tenants', 'create', '--platform', 'gbol', '--out', out]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('already exists');
    expect(JSON.parse((await runFerry([...remote, '--json', 'sandbox', 'tenants', 'list'])).stdout)).toHaveLength(before);
    expect((await runFerry([...remote, 'sandbox', 'tenants', 'create', '--platform', 'gbol', '--out', out, '--force'])).code).toBe(0);
  });

  it('lists tenants, simulates a legacy refresh and changes settings', async () => {
    const tenants = JSON.parse((await runFerry([...remote, '--json', 'sandbox', 'tenants', 'list', '--platform', 'gbol'])).stdout);
    expect(tenants.length).toBeGreaterThanOrEqual(3);
    expect(JSON.stringify(tenants)).not.toContain('accessToken');
    const refreshed = await runFerry([...remote, '--json', 'sandbox', 'tenants', 'legacy-refresh', tenants[0].id]);
    expect(JSON.parse(refreshed.stdout)).toMatchObject({ tenantId: tenants[0].id, outcome: 'rotated' });
    const settings = await runFerry([...remote, '--json', 'sandbox', 'settings', '--latency', '5', '--push-mode', 'async']);
    expect(JSON.parse(settings.stdout)).toMatchObject({ latencyMs: 5, pushMode: 'async' });
  });

  it('explains an unknown platform and an unknown tenant', async () => {
    const unknown = await runFerry([...remote, 'sandbox', 'tenants', 'create', '--platform', 'zzzz', '--out', join(work, 'z.csv')]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('Integration zzzz not found');
    expect(existsSync(join(work, 'z.csv'))).toBe(false);
    const missing = await runFerry([...remote, 'sandbox', 'tenants', 'legacy-refresh', 'no-such-tenant']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('404');
  });

  it('is refused to a non-admin key', async () => {
    const created = await runFerry([...remote, '--json', 'admin', 'clients', 'create', '--name', 'C', '--plan', 'Paid']);
    const key = JSON.parse(created.stdout).apiKey;
    const denied = await runFerry(['--base-url', serve.listening.baseUrl!, 'sandbox', 'tenants', 'list'], { env: { FERRY_API_KEY: key } });
    expect(denied.code).toBe(4);
  });
});

describe('ferry sandbox on the embedded target', () => {
  it('creates tenants with no service running', async () => {
    const work = tempDir();
    const out = join(work, 'tokens.csv');
    const result = await runFerry(['--data-dir', join(work, 'data'), 'sandbox', 'tenants', 'create', '--platform', 'qhyg', '--count', '2', '--out', out]);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('Using the embedded ferry service');
    expect(readFileSync(out, 'utf8').trim().split('\n')).toHaveLength(3);
  });
});
