// `ferry status COMPANY_ID`: data sets (state, last successful sync, record counts read
// at each type's path: chartOfAccounts at /data/accounts, company at /data/info),
// connections, and a Deauthorized connection flagged "reauthorization required".
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_ACCESS_TOKEN_TTL_SECONDS as TTL } from '../../src/sandbox/index.js';
import { integrationByKey } from '../../src/platforms/registry.js';
import { ferry } from '../helpers/in-process.js';
import { tempDir } from '../helpers/service.js';
import { ISO_Z, createClient, linkedCompany, sandboxCall, type Api, type Linked } from '../helpers/sync.js';
import { type Harness, startTestStack } from '../helpers/stack.js';

const PLATFORM = 'gbol';
const SUPPORTED = integrationByKey(PLATFORM)!.dataTypes;
const INVOICES = 12;

describe('ferry status', () => {
  let h: Harness;
  let api: Api;
  let remote: string[];
  let work: string;
  let linked: Linked;

  const queue = async (companyId: string, dataType: string) => {
    const result = await api.call('POST', `/companies/${companyId}/data/queue/${dataType}`);
    expect(result.status, result.text).toBe(200);
  };

  beforeAll(async () => {
    h = await startTestStack('fake-clocks');
    work = tempDir('ferry-status-cli-');
    const key = await createClient(h.api, h.adminKey, 'Status CLI Ltd', 'Paid');
    api = { ...h.api, call: (method, path, options = {}) => h.api.call(method, path, { apiKey: key, ...options }) };
    writeFileSync(join(work, 'key'), key, { mode: 0o600 });
    remote = ['--base-url', h.baseUrl, '--api-key-file', join(work, 'key')];
    linked = await linkedCompany(api, h.sandboxUrl, PLATFORM, INVOICES, { name: 'Status Co', seed: 71 });
    for (const type of ['invoices', 'chartOfAccounts', 'company']) await queue(linked.companyId, type);
    await h.drain();
  });
  afterAll(async () => {
    await h?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it('--json: every supported data set, record counts at each read path, the connection', async () => {
    const result = await ferry([...remote, '--json', 'status', linked.companyId]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toBe('');
    const status = JSON.parse(result.stdout);
    expect(status).toMatchObject({ id: linked.companyId, name: 'Status Co', lastSync: expect.stringMatching(ISO_Z) });
    expect(status.connections).toEqual([{
      id: linked.connectionId, platformKey: PLATFORM, platformName: 'Xero', status: 'Linked', reauthorizationRequired: false,
      lastSync: expect.stringMatching(ISO_Z), dataConnectionErrors: null,
    }]);
    expect(status.dataSets.map((d: any) => d.dataType).sort()).toEqual([...SUPPORTED].sort());
    const byType = Object.fromEntries(status.dataSets.map((d: any) => [d.dataType, d]));
    expect(byType.invoices).toEqual({
      dataType: 'invoices', state: 'Complete', supported: true, lastSuccessfulSync: expect.stringMatching(ISO_Z),
      latestSyncId: expect.any(String), records: INVOICES,
    });
    const accounts = (await api.call('GET', `/companies/${linked.companyId}/data/accounts?pageSize=1`)).body.totalResults;
    expect(accounts).toBeGreaterThan(0);
    expect(byType.chartOfAccounts).toMatchObject({ state: 'Complete', records: accounts });
    expect(byType.company).toMatchObject({ state: 'Complete', records: 1 });
    expect(byType.customers).toEqual({ dataType: 'customers', state: 'NotRequested', supported: true });
  });

  it('on a terminal: the company line and two tables; "not requested" spelled out', async () => {
    const result = await ferry([...remote, '--no-color', 'status', linked.companyId], { tty: true });
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines[0]).toMatch(new RegExp(`^Status Co  ${linked.companyId}  last sync `));
    expect(lines[2]).toMatch(/^CONNECTION\s+PLATFORM\s+STATUS\s+LAST SYNC\s+ERRORS$/);
    expect(lines[3]).toMatch(new RegExp(`^${linked.connectionId}\\s+Xero \\(gbol\\)\\s+Linked\\s+`));
    expect(lines[5]).toMatch(/^DATA TYPE\s+STATE\s+LAST SUCCESSFUL SYNC\s+RECORDS\s+ERROR$/);
    expect(lines.find((l) => l.startsWith('invoices '))).toMatch(new RegExp(`^invoices\\s+Complete\\s+\\S+Z\\s+${INVOICES}\\s*$`));
    expect(lines.find((l) => l.startsWith('customers '))).toMatch(/^customers\s+not requested\s+-\s*$/);
  });

  it('piped: tab-separated lines whose first column says the kind', async () => {
    const result = await ferry([...remote, 'status', linked.companyId]);
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split('\n').map((l) => l.split('\t'));
    expect(lines[0]!.slice(0, 3)).toEqual(['company', linked.companyId, 'Status Co']);
    expect(lines[1]!.slice(0, 4)).toEqual(['connection', linked.connectionId, PLATFORM, 'Linked']);
    expect(lines.filter((l) => l[0] === 'dataset')).toHaveLength(SUPPORTED.length);
    expect(lines.find((l) => l[1] === 'invoices')).toEqual(['dataset', 'invoices', 'Complete', expect.stringMatching(ISO_Z), String(INVOICES), '']);
    expect(lines.find((l) => l[1] === 'customers')).toEqual(['dataset', 'customers', 'NotRequested', '', '', '']);
  });

  it('a resync in progress keeps counting the last complete snapshot', async () => {
    await queue(linked.companyId, 'invoices');
    const status = JSON.parse((await ferry([...remote, '--json', 'status', linked.companyId])).stdout);
    expect(status.dataSets.find((d: any) => d.dataType === 'invoices')).toMatchObject({ state: 'Queued', records: INVOICES });
    await h.drain();
  });

  it('a Deauthorized connection: "reauthorization required", its errors, and the failed pull\'s message', async () => {
    const legacy = await linkedCompany(api, h.sandboxUrl, PLATFORM, 5, { name: 'Legacy Status', seed: 72 });
    expect((await sandboxCall(h.sandboxUrl, 'POST', `/admin/tenants/${legacy.tenant.id}/legacy-refresh`)).body.outcome).toBe('rotated');
    h.clock.advance(TTL + 60);
    await queue(legacy.companyId, 'invoices');
    await h.drain();

    const json = JSON.parse((await ferry([...remote, '--json', 'status', legacy.companyId])).stdout);
    expect(json.connections[0]).toMatchObject({ status: 'Deauthorized', reauthorizationRequired: true });
    expect(json.connections[0].dataConnectionErrors[0]).toMatchObject({ statusCode: '401', statusText: 'Unauthorized', errorMessage: expect.stringMatching(/^Reauthorization required/) });
    expect(json.dataSets.find((d: any) => d.dataType === 'invoices')).toMatchObject({ state: 'AuthError', error: expect.stringMatching(/^Reauthorization required/) });

    const plain = await ferry([...remote, 'status', legacy.companyId]);
    expect(plain.code).toBe(0);
    expect(plain.stdout).toContain(`connection\t${legacy.connectionId}\t${PLATFORM}\tDeauthorized (reauthorization required)\t\t401 Unauthorized: Reauthorization required`);
    expect(plain.stderr).toContain(`Xero connection ${legacy.connectionId} is Deauthorized: reauthorization required.`);
    // The command reaches the same service: the target flags this run was given.
    expect(plain.stderr).toContain(`then: ferry ${remote.join(' ')} connections authorize --company ${legacy.companyId} --connection ${legacy.connectionId} --tokens-file FILE`);
  });

  it('a company without connections, and an unknown company', async () => {
    const bare = (await api.call('POST', '/companies', { body: { name: 'Bare Co' } })).body;
    const result = await ferry([...remote, 'status', bare.id]);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(`company\t${bare.id}\tBare Co\t\n`);
    expect(result.stderr).toContain('This company has no connections');

    const unknown = await ferry([...remote, 'status', '00000000-0000-4000-8000-000000000000']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('HTTP 404');
  });
});
