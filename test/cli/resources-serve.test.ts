// The resource commands against a real `ferry serve` (both in this process): exit codes
// from the service's statuses (402 → 5, 401/403 → 4, 404 → 1), --yes without a terminal,
// and token authorization with real sandbox tokens from a file and stdin.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ferry } from '../helpers/in-process.js';
import { basic, tempDir } from '../helpers/service.js';
import { type ServeHandle, startTestStack } from '../helpers/stack.js';

describe('resource commands against ferry serve', () => {
  const dataDir = tempDir();
  const work = tempDir('ferry-resources-serve-');
  let serve: ServeHandle;
  let baseUrl: string;
  let admin: string[];

  beforeAll(async () => {
    serve = await startTestStack('serve', { dataDir });
    baseUrl = serve.listening.baseUrl!;
    admin = ['--base-url', baseUrl, '--api-key-file', join(dataDir, 'admin.key')];
  });
  afterAll(async () => {
    await serve.stop();
  });

  async function newClient(name: string, plan: 'Free' | 'Paid'): Promise<{ id: string; apiKey: string }> {
    const created = await ferry([...admin, 'admin', 'clients', 'create', '--name', name, '--plan', plan, '--json']);
    expect(created.code, created.stderr).toBe(0);
    return JSON.parse(created.stdout);
  }

  /** `ferry` as a client: the key only in FERRY_API_KEY, never on the command line. */
  const as = (apiKey: string, args: string[], input?: string) =>
    ferry(['--base-url', baseUrl, ...args], { env: { FERRY_API_KEY: apiKey }, ...(input !== undefined ? { stdin: input } : {}) });

  it("a Free client's 51st company: 402 → exit 5 with the service's item", async () => {
    const free = await newClient('Free Trial', 'Free');
    for (let batch = 0; batch < 5; batch++) {
      await Promise.all(Array.from({ length: 10 }, async (_, i) => {
        const response = await fetch(`${baseUrl}/companies`, {
          method: 'POST',
          headers: { authorization: basic(free.apiKey), 'content-type': 'application/json' },
          body: JSON.stringify({ name: `Free Co ${batch * 10 + i + 1}` }),
        });
        expect(response.status).toBe(200);
      }));
    }
    const refused = await as(free.apiKey, ['companies', 'create', '--name', 'Fifty-one']);
    expect(refused.code).toBe(5);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toContain('CompanyValidationException: Company limit exceeded (HTTP 402');
    expect(refused.stderr).toContain('  - Company: Company limit exceeded. Learn more at');

    const json = await as(free.apiKey, ['--json', 'companies', 'create', '--name', 'Fifty-one']);
    expect(json.code).toBe(5);
    expect(JSON.parse(json.stderr).error).toMatchObject({ status: 402, exitCode: 5, validation: [{ itemId: 'Company', validatorName: 'CreateCompany' }] });

    // The 50 are all there, across pages.
    const all = await as(free.apiKey, ['--json', 'companies', 'list', '--all', '--page-size', '20']);
    expect(all.code).toBe(0);
    expect(JSON.parse(all.stdout)).toHaveLength(50);
    const piped = await as(free.apiKey, ['companies', 'list', '--all', '--page-size', '20']);
    expect(piped.stdout.trim().split('\n')).toHaveLength(50);
    const page = await as(free.apiKey, ['--json', 'companies', 'list', '--page-size', '20', '--page', '3']);
    expect(JSON.parse(page.stdout)).toMatchObject({ pageNumber: 3, totalResults: 50, results: expect.any(Array) });
  });

  it('a wrong key (401), a revoked key and a key of another account (403) exit 4; an unknown id exits 1', async () => {
    const wrong = await as('fy_wrong_key', ['companies', 'list']);
    expect(wrong.code).toBe(4);
    expect(wrong.stderr).toContain('HTTP 401');

    const paid = await newClient('Revoked', 'Paid');
    const key = JSON.parse((await ferry([...admin, 'admin', 'keys', 'create', paid.id, '--json'])).stdout);
    const companyId = (await as(key.apiKey, ['companies', 'create', '--name', 'Owned'])).stdout.trim();
    expect((await as(key.apiKey, ['companies', 'get', companyId])).code).toBe(0);
    expect((await ferry([...admin, 'admin', 'keys', 'revoke', paid.id, key.id])).code).toBe(0);
    const revoked = await as(key.apiKey, ['--json', 'companies', 'get', companyId]);
    expect(revoked.code).toBe(4);
    expect(JSON.parse(revoked.stderr).error).toMatchObject({ status: 403, exitCode: 4 });

    const keyFile = join(work, 'revoked.key');
    writeFileSync(keyFile, `${key.apiKey}\n`, { mode: 0o600 });
    const viaFile = await ferry(['--base-url', baseUrl, '--api-key-file', keyFile, 'connections', 'list', '--company', companyId]);
    expect(viaFile.code).toBe(4);
    expect(viaFile.stderr).not.toContain(key.apiKey);

    const other = await newClient('Other', 'Paid');
    const foreign = await as(other.apiKey, ['companies', 'delete', companyId, '--yes']);
    expect(foreign.code).toBe(4);
    expect(foreign.stderr).toContain('HTTP 403');

    const missing = await as(other.apiKey, ['companies', 'get', '00000000-0000-4000-8000-000000000000']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('not found');
  });

  it('company → connection → authorize (stdin and file) with sandbox tokens → Linked; deletes need --yes', async () => {
    const client = await newClient('Loop', 'Paid');
    const tokensCsv = join(work, 'xero.csv');
    const tenants = await ferry([...admin, 'sandbox', 'tenants', 'create', '--platform', 'gbol', '--count', '2', '--invoices', '5', '--out', tokensCsv]);
    expect(tenants.code, tenants.stderr).toBe(0);
    const rows = parse(readFileSync(tokensCsv, 'utf8'), { columns: true }) as Array<Record<string, string>>;
    const tokensOf = (row: Record<string, string>) => {
      const { accessToken, refreshToken, tenantId, expiresAt } = row;
      return JSON.stringify({ accessToken, refreshToken, tenantId, expiresAt });
    };
    const secrets = rows.flatMap((r) => [r.accessToken!, r.refreshToken!]);

    const companyId = (await as(client.apiKey, ['companies', 'create', '--name', 'Loop Ltd', '--tag', 'crm=42'])).stdout.trim();
    const first = (await as(client.apiKey, ['connections', 'create', '--company', companyId, '--platform', 'gbol'])).stdout.trim();
    const second = (await as(client.apiKey, ['connections', 'create', '--company', companyId, '--platform', 'gbol'])).stdout.trim();

    const fromStdin = await as(client.apiKey, ['connections', 'authorize', '--company', companyId, '--connection', first, '--tokens-file', '-'], tokensOf(rows[0]!));
    expect(fromStdin.code, fromStdin.stderr).toBe(0);
    expect(fromStdin.stderr).toContain(`ferry --base-url ${baseUrl} sync ${companyId}`);

    const file = join(work, 'second.json');
    writeFileSync(file, tokensOf(rows[1]!), { mode: 0o600 });
    const fromFile = await as(client.apiKey, ['--json', 'connections', 'authorize', '--company', companyId, second, '--tokens-file', file]);
    expect(fromFile.code, fromFile.stderr).toBe(0);
    expect(JSON.parse(fromFile.stdout)).toMatchObject({ id: second, status: 'Linked' });

    const bad = await as(client.apiKey, ['connections', 'authorize', '--company', companyId, first, '--tokens-file', '-'], '{"accessToken":"x"}');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('refreshToken: refreshToken is required for Xero');
    expect(bad.stderr).toContain('ferry integrations get gbol');

    const company = JSON.parse((await as(client.apiKey, ['--json', 'companies', 'get', companyId])).stdout);
    expect(company.tags).toEqual({ crm: '42' });
    expect(company.dataConnections.map((c: { status: string }) => c.status)).toEqual(['Linked', 'Linked']);
    const listed = await as(client.apiKey, ['connections', 'list', '--company', companyId]);
    expect(listed.stdout.trim().split('\n').map((l) => l.split('\t')[3])).toEqual(['Linked', 'Linked']);

    for (const output of [fromStdin, fromFile, bad, listed]) {
      for (const secret of secrets) expect(output.stdout + output.stderr).not.toContain(secret);
    }

    // No terminal (stdin and stdout are pipes): --yes is required, and nothing is deleted.
    const refused = await as(client.apiKey, ['connections', 'delete', '--company', companyId, second]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--yes');
    expect((await as(client.apiKey, ['connections', 'delete', '--company', companyId, second, '--yes'])).code).toBe(0);
    expect((await as(client.apiKey, ['connections', 'unlink', '--company', companyId, first])).code).toBe(0);
    const refusedCompany = await as(client.apiKey, ['companies', 'delete', companyId]);
    expect(refusedCompany.code).toBe(2);
    expect(refusedCompany.stderr).toContain('Refusing without --yes');
    const deleted = await as(client.apiKey, ['companies', 'delete', companyId, '--yes']);
    expect(deleted.code).toBe(0);
    expect(deleted.stderr).toContain(`Deleted company ${companyId}.`);
    expect((await as(client.apiKey, ['companies', 'get', companyId])).code).toBe(1);
  });

  it('integrations list and get against the remote service', async () => {
    const client = await newClient('Integrations', 'Paid');
    const list = await as(client.apiKey, ['integrations', 'list', '--route', 'self-service']);
    expect(list.code).toBe(0);
    expect(list.stdout.split('\n').filter(Boolean).every((l) => l.split('\t')[3] === 'self-service')).toBe(true);
    const get = await as(client.apiKey, ['--json', 'integrations', 'get', 'akxx']);
    expect(JSON.parse(get.stdout)).toMatchObject({ key: 'akxx', name: 'Oracle NetSuite', tokenFields: expect.arrayContaining([{ name: 'accountId', required: true, description: expect.any(String) }]) });
  });

  it('admin clients list, admin keys list and whoami: the accounts, key ids never keys, and who the key acts for', async () => {
    const client = await newClient('Listed Ltd', 'Free');
    const clients = await ferry([...admin, '--json', 'admin', 'clients', 'list', '--query', 'plan=Free']);
    expect(clients.code, clients.stderr).toBe(0);
    const listed = JSON.parse(clients.stdout) as Array<{ id: string; name: string; plan: string }>;
    expect(listed.find((c) => c.id === client.id)).toMatchObject({ name: 'Listed Ltd', plan: 'Free' });
    expect(listed.every((c) => c.plan === 'Free')).toBe(true);

    const second = JSON.parse((await ferry([...admin, 'admin', 'keys', 'create', client.id, '--json'])).stdout) as { id: string; apiKey: string };
    const keys = await ferry([...admin, 'admin', 'keys', 'list', client.id]);
    expect(keys.code, keys.stderr).toBe(0);
    const rows = keys.stdout.trim().split('\n').map((line) => line.split('\t'));
    expect(rows).toHaveLength(2);
    expect(rows.map((r) => r[0])).toContain(second.id);
    expect(keys.stdout).not.toContain(client.apiKey);
    expect(keys.stdout).not.toContain(second.apiKey);

    const me = await as(second.apiKey, ['--json', 'whoami']);
    expect(me.code, me.stderr).toBe(0);
    expect(JSON.parse(me.stdout)).toMatchObject({ baseUrl, embedded: false, name: 'Listed Ltd', clientId: client.id, plan: 'Free', isAdmin: false });
    const piped = await as(second.apiKey, ['whoami']);
    expect(piped.stdout).toContain('Listed Ltd');
    expect(piped.stdout + piped.stderr).not.toContain(second.apiKey);
  });
});
