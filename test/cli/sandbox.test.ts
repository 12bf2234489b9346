// `ferry sandbox …` in this process, against a remote `ferry serve` (found through GET
// /admin/sandbox; also in this process) and on the embedded target. The binary on a
// terminal, in a small heap and stopped by Ctrl-C is in sandbox.e2e.test.ts.
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ferry } from '../helpers/in-process.js';
import { tempDir } from '../helpers/service.js';
import { integrationByKey } from '../../src/platforms/registry.js';
import { type ServeHandle, startTestStack } from '../helpers/stack.js';
import { csvRows, useProxiedServe } from './sandbox-support.js';

describe('ferry sandbox against a remote ferry serve', () => {
  const dataDir = tempDir();
  const work = tempDir();
  let serve: ServeHandle;
  let remote: string[];
  beforeAll(async () => {
    serve = await startTestStack('serve', { dataDir });
    remote = ['--base-url', serve.listening.baseUrl!, '--api-key-file', join(dataDir, 'admin.key')];
  });
  afterAll(async () => {
    await serve.stop();
  });

  it('tenants create writes a 0600 CSV with the integration token columns', async () => {
    const out = join(work, 'xero.csv');
    const result = await ferry([...remote, 'sandbox', 'tenants', 'create', '--platform', 'gbol', '--count', '3', '--invoices', '20', '--out', out]);
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
    const before = JSON.parse((await ferry([...remote, '--json', 'sandbox', 'tenants', 'list'])).stdout).length;
    const refused = await ferry([...remote, 'sandbox', 'tenants', 'create', '--platform', 'gbol', '--out', out]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('already exists');
    expect(JSON.parse((await ferry([...remote, '--json', 'sandbox', 'tenants', 'list'])).stdout)).toHaveLength(before);
    expect((await ferry([...remote, 'sandbox', 'tenants', 'create', '--platform', 'gbol', '--out', out, '--force'])).code).toBe(0);
  });

  it('lists tenants, simulates a legacy refresh and changes settings', async () => {
    const tenants = JSON.parse((await ferry([...remote, '--json', 'sandbox', 'tenants', 'list', '--platform', 'gbol'])).stdout);
    expect(tenants.length).toBeGreaterThanOrEqual(3);
    expect(JSON.stringify(tenants)).not.toContain('accessToken');
    const refreshed = await ferry([...remote, '--json', 'sandbox', 'tenants', 'legacy-refresh', tenants[0].id]);
    expect(JSON.parse(refreshed.stdout)).toMatchObject({ tenantId: tenants[0].id, outcome: 'rotated' });
    const settings = await ferry([...remote, '--json', 'sandbox', 'settings', '--latency', '5', '--push-mode', 'async']);
    expect(JSON.parse(settings.stdout)).toMatchObject({ latencyMs: 5, pushMode: 'async' });
  });

  it('explains an unknown platform and an unknown tenant', async () => {
    const unknown = await ferry([...remote, 'sandbox', 'tenants', 'create', '--platform', 'zzzz', '--out', join(work, 'z.csv')]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('Integration zzzz not found');
    expect(existsSync(join(work, 'z.csv'))).toBe(false);
    const missing = await ferry([...remote, 'sandbox', 'tenants', 'legacy-refresh', 'no-such-tenant']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('404');
  });

  it('is refused to a non-admin key', async () => {
    const created = await ferry([...remote, '--json', 'admin', 'clients', 'create', '--name', 'C', '--plan', 'Paid']);
    const key = JSON.parse(created.stdout).apiKey;
    const denied = await ferry(['--base-url', serve.listening.baseUrl!, 'sandbox', 'tenants', 'list'], { env: { FERRY_API_KEY: key } });
    expect(denied.code).toBe(4);
  });
});

describe('ferry sandbox on the embedded target', () => {
  it('creates tenants with no service running', async () => {
    const work = tempDir();
    const out = join(work, 'tokens.csv');
    const result = await ferry(['--data-dir', join(work, 'data'), 'sandbox', 'tenants', 'create', '--platform', 'qhyg', '--count', '2', '--out', out]);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('Using the embedded ferry service');
    expect(readFileSync(out, 'utf8').trim().split('\n')).toHaveLength(3);
  });
});

describe('ferry sandbox tenants create in batches, up to 100,000', () => {
  let serve: ServeHandle;
  let work: string;
  const create = (args: string[], env?: Record<string, string>) => ferry([...serve.target(), 'sandbox', 'tenants', 'create', '--platform', 'gbol', '--invoices', '1', ...args], env ? { env } : {});
  const tenantCount = async () => JSON.parse((await ferry([...serve.target(), '--json', 'sandbox', 'tenants', 'list', '--platform', 'gbol'])).stdout).length as number;
  beforeAll(async () => {
    serve = await startTestStack('serve');
    work = serve.dir;
  });
  afterAll(async () => {
    await serve.stop();
  });

  it('makes 2,500 in calls of 1,000 whose seeds run on, into a CSV that migrate tokens --dry-run takes', async () => {
    const out = join(work, 'many.csv');
    const made = await create(['--count', '2500', '--seed', '500', '--out', out, '--json']);
    expect(made.code).toBe(0);
    const rows = csvRows(out);
    expect(rows).toHaveLength(2500);
    expect(new Set(rows.map((r) => r[1])).size).toBe(2500);
    expect(statSync(out).mode & 0o777).toBe(0o600);
    // --json is a summary, whatever the count: never the tenants themselves.
    expect(JSON.parse(made.stdout)).toEqual({
      platform: 'gbol', out, count: 2500, invoices: 1, seed: 500,
      first: { id: rows[0]![1], name: rows[0]![0] }, last: { id: rows[2499]![1], name: rows[2499]![0] },
    });

    // Tenant k has seed 500 + k, as one call of 2,500 would give it: the second batch is
    // the same organisations as a call starting at seed 1,500.
    const second = join(work, 'second.csv');
    expect((await create(['--count', '1000', '--seed', '1500', '--out', second])).code).toBe(0);
    expect(csvRows(second).map((r) => r[0])).toEqual(rows.slice(1000, 2000).map((r) => r[0]));

    const dryRun = await ferry([...serve.target(), 'migrate', 'tokens', out, '--dry-run']);
    expect(dryRun.code).toBe(0);
    expect(dryRun.stderr).toContain('2,500 valid rows of 2,500');
  });

  it('replaces the file with --force only once the new one is complete', async () => {
    const out = join(work, 'many.csv');
    const before = readFileSync(out, 'utf8');
    const refused = await create(['--count', '1500', '--out', out]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('already exists');
    expect(readFileSync(out, 'utf8')).toBe(before);
    const replaced = await create(['--count', '1500', '--out', out, '--force']);
    expect(replaced.code).toBe(0);
    const rows = csvRows(out);
    expect(rows).toHaveLength(1500);
    expect(before).not.toContain(rows[0]![1]);
    expect(statSync(out).mode & 0o777).toBe(0o600);
    expect(readdirSync(work).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('refuses 0 and 100,001 before creating anything', async () => {
    const before = await tenantCount();
    for (const count of ['0', '100001']) {
      const refused = await create(['--count', count, '--out', join(work, 'refused.csv')]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('--count must be a whole number from 1 to 100000');
    }
    expect(existsSync(join(work, 'refused.csv'))).toBe(false);
    expect(await tenantCount()).toBe(before);
    const help = await ferry(['sandbox', 'tenants', 'create', '--help']);
    expect(help.stdout).toContain('1-100,000');
    expect(help.stdout).toContain('--count 2500');
  });

  describe('stopped midway', () => {
    const midway = useProxiedServe(() => serve);

    it('leaves --out as it was when the sandbox stops answering, and says how many exist', async () => {
      const out = join(work, 'kept.csv');
      writeFileSync(out, 'the old file\n', { mode: 0o600 });
      const before = await tenantCount();
      const start = midway.proxy.calls();
      midway.decide = (call) => (call - start <= 2 ? 'forward' : 'drop');
      const failed = await ferry([...midway.proxied.target(), 'sandbox', 'tenants', 'create', '--platform', 'gbol', '--invoices', '1', '--count', '5000', '--out', out, '--force']);
      expect(failed.code).toBe(1);
      expect(failed.stderr).toContain('Could not reach the sandbox platforms');
      expect(failed.stderr).toContain(`2,000 of 5,000 tenants were created (they exist in the sandbox, unused); ${out} was not written.`);
      // The list command reaches the same service: the proxied target's flags come with it.
      expect(failed.stderr).toContain(`hint: Run the same command again for a complete set; ferry ${midway.proxied.target().join(' ')} sandbox tenants list --platform gbol shows the ones already made.`);
      expect(readFileSync(out, 'utf8')).toBe('the old file\n');
      expect(readdirSync(work).filter((f) => f.endsWith('.tmp'))).toEqual([]);
      expect(await tenantCount()).toBe(before + 2000);
    });

  });
});
