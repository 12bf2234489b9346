// The main job against a target that offers only the public API: a proxy in front of a
// real `ferry serve` strips ferry's extension fields from /integrations and answers 404 to
// /admin. Tenants are made directly against the service (the real service's platforms
// are not ours to make); everything else goes through the proxy with a client's key, as
// a client migrating into the real service would run it. The service and the commands run
// in this process; public-api.e2e.test.ts has the binary in a pipeline.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ferry as ferryInProcess } from '../helpers/in-process.js';
import { startPublicApiProxy, type PublicApiProxy } from '../helpers/public-api-proxy.js';
import type { ServeHandle } from '../helpers/stack.js';
import { readAll, sampleInvoice } from '../helpers/sync.js';
import { makeTenants, readResults, secretsOf, leakedSecrets, tokensCsv, writeCsv } from '../migrate/support.js';
import { startPublicApiTarget, stopPublicApiTarget } from './public-api-support.js';

const COMPANIES = 4;
let stack: ServeHandle;
let proxy: PublicApiProxy;
let target: string[];

beforeAll(async () => {
  ({ stack, proxy, target } = await startPublicApiTarget());
});
afterAll(() => stopPublicApiTarget(proxy, stack));

const ferry = (...args: string[]) => ferryInProcess([...target, ...args]);
const adminCalls = () => proxy.requests.filter((r) => r.path.startsWith('/admin'));

describe('the main job against the public API alone', () => {
  let results: string;
  let companyIds: string[];

  it('the proxy offers what the public API offers, and no more', async () => {
    const integrations = (await (await fetch(`${proxy.url}/integrations?pageSize=1`, { headers: { authorization: `Basic ${Buffer.from(readFileSync(target[3]!, 'utf8').trim()).toString('base64')}` } })).json()) as { results: Array<Record<string, unknown>> };
    expect(integrations.results[0]).not.toHaveProperty('tokenFields');
    expect(integrations.results[0]).not.toHaveProperty('migrationRoute');
    expect(integrations.results[0]).not.toHaveProperty('dataTypes');
    expect((await fetch(`${proxy.url}/admin/sandbox`)).status).toBe(404);
    proxy.requests.length = 0; // from here on, only what the commands ask
  });

  it('migrate tokens: every row migrated, with the token fields from the bundled registry', async () => {
    const tenants = await makeTenants(stack.sandboxUrl, COMPANIES, { seed: 7000, invoices: 30 });
    const input = writeCsv(stack.dir, 'tokens.csv', tokensCsv(tenants));
    results = `${input}.results.csv`;
    const run = await ferry('migrate', 'tokens', input, '--yes');
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(new RegExp(`Migrated ${COMPANIES} · skipped 0 · failed 0`));
    const rows = readResults(results);
    expect(rows.map((r) => r.status)).toEqual(Array(COMPANIES).fill('migrated'));
    companyIds = rows.map((r) => r.companyId);
    expect(leakedSecrets(run.stdout + run.stderr + readFileSync(results, 'utf8'), secretsOf(tenants))).toEqual([]);
  });

  it('sync --from-results --wait: every data type of every company Complete', async () => {
    const run = await ferry('--json', 'sync', '--from-results', results, '--wait', '--timeout', '2m');
    expect(run.code, run.stderr).toBe(0);
    const summary = JSON.parse(run.stdout) as Array<{ companyId: string; ok: boolean; state: string; dataTypes: Record<string, string> }>;
    expect(summary.map((s) => s.companyId).sort()).toEqual([...companyIds].sort());
    for (const company of summary) {
      expect(company).toMatchObject({ ok: true, state: 'complete' });
      expect(Object.keys(company.dataTypes).length).toBeGreaterThan(5);
      expect(Object.values(company.dataTypes).every((s) => s === 'Complete')).toBe(true);
    }
  });

  it('export: the data set record for record', async () => {
    const out = join(stack.dir, 'invoices.ndjson');
    const run = await ferry('export', 'invoices', '--company', companyIds[0]!, '--out', out);
    expect(run.code, run.stderr).toBe(0);
    const lines = readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(lines).toEqual(await readAll(stack.api, companyIds[0]!, 'invoices'));
  });

  it('check: passes, and says the legacy refreshes could not be checked (the platform cannot be asked)', async () => {
    const run = await ferry('--json', 'check', companyIds[0]!);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as { passed: number; results: Array<{ verdict: string; criteria: Array<{ name: string; status: string; evidence: Record<string, any> }> }> };
    expect(report.passed).toBe(1);
    const authorization = report.results[0]!.criteria.find((c) => c.name === 'authorization')!;
    expect(authorization.status).toBe('pass');
    expect(authorization.evidence.legacyRefreshes).toEqual({ notChecked: 'the platform cannot be asked (no sandbox)' });
  });

  it('status: the connection Linked and every data set with its records', async () => {
    const run = await ferry('--json', 'status', companyIds[1]!);
    expect(run.code, run.stderr).toBe(0);
    const status = JSON.parse(run.stdout) as { connections: Array<{ status: string }>; dataSets: Array<{ dataType: string; state: string; supported: boolean; records?: number }> };
    expect(status.connections.map((c) => c.status)).toEqual(['Linked']);
    const invoices = status.dataSets.find((d) => d.dataType === 'invoices')!;
    expect(invoices).toMatchObject({ state: 'Complete', supported: true, records: 30 });
  });

  it('push: a record created through a push operation', async () => {
    const [row] = readResults(results);
    const customers = await readAll(stack.api, row!.companyId, 'customers');
    const file = join(stack.dir, 'invoice.json');
    writeFileSync(file, JSON.stringify(sampleInvoice(customers[0].id)));
    const run = await ferry('--json', 'push', 'invoices', '--company', row!.companyId, '--connection', row!.connectionId, '--file', file, '--wait');
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ summary: { total: 1, Success: 1 } });
  });

  it('none of these commands asked a ferry-only route', () => {
    expect(proxy.requests.length).toBeGreaterThan(20);
    expect(adminCalls()).toEqual([]);
  });

  it('doctor says the target is the public API alone, and what that means', async () => {
    const run = await ferry('--json', 'doctor');
    expect(run.code, run.stderr).toBe(0);
    const doctor = JSON.parse(run.stdout) as { target: { kind: string; notes: string[] } };
    expect(doctor.target.kind).toBe('public');
    expect(doctor.target.notes.join(' ')).toMatch(/legacy refreshes/);
    const piped = await ferry('doctor');
    expect(piped.stdout).toMatch(/^ok\tkind\tthe public API alone/m);
    const direct = await ferryInProcess([...stack.target(), '--json', 'doctor']);
    expect(direct.code, direct.stderr).toBe(0);
    expect(JSON.parse(direct.stdout).target.kind).toBe('ferry');
  });
});

describe('list and get commands: the same output through the public API as from ferry\'s service', () => {
  it.each([
    ['integrations', 'list'],
    ['integrations', 'list', '--route', 'managed'],
    ['integrations', 'get', 'gbol'],
    ['--json', 'integrations', 'get', 'qhyg'],
    ['companies', 'list'],
  ].map((args) => [args.join(' '), args] as const))('ferry %s', async (_name, args) => {
    const direct = await ferryInProcess([...stack.target(), ...args]);
    const viaPublic = await ferryInProcess(['--base-url', proxy.url, '--api-key-file', stack.adminKeyFile, ...args]);
    expect(direct.code, direct.stderr).toBe(0);
    expect(viaPublic.code, viaPublic.stderr).toBe(0);
    expect(viaPublic.stdout).toBe(direct.stdout);
  });
});

describe('the managed migration against the public API alone', () => {
  // Managed-only platforms take the support team's key (acting for the plan's client); the
  // platform still cannot be asked anything through the public API.
  it('runs all six steps: the callback URL and legacy refreshes are confirmed, not checked', async () => {
    const created = await ferryInProcess([...stack.target(), '--json', 'admin', 'clients', 'create', '--name', 'Managed Public Ltd', '--plan', 'Paid']);
    expect(created.code, created.stderr).toBe(0);
    const client = JSON.parse(created.stdout) as { id: string };
    const companies = join(stack.dir, 'managed.csv');
    const tenants = await ferryInProcess([...stack.target(), 'sandbox', 'tenants', 'create', '--platform', 'qhyg', '--count', '3', '--invoices', '5', '--out', companies]);
    expect(tenants.code, tenants.stderr).toBe(0);
    const support = ['--base-url', proxy.url, '--api-key-file', stack.adminKeyFile];
    const plan = join(stack.dir, 'managed', 'plan.json');
    const managed = (...args: string[]) => ferryInProcess([...support, 'managed', ...args]);
    proxy.requests.length = 0;

    const init = await managed('init', '--platform', 'qhyg', '--client', client.id, '--name', 'Managed Public Ltd', '--companies', companies, '--file', plan);
    expect(init.code, init.stderr).toBe(0);
    const steps: Array<[number, string[]]> = [
      [1, ['--app-client-id', 'app-the-client-gave-us']], [2, ['--date', '2026-12-01', '--contact', 'Jo <jo@acme.example>']], [3, []], [4, []], [5, []], [6, []],
    ];
    for (const [n, flags] of steps) {
      const run = await managed('step', String(n), '--confirm', '--file', plan, '--by', 'Sam', '--poll-ms', '50', ...flags);
      expect(run.code, `step ${n}: ${run.stderr}`).toBe(0);
    }
    const saved = JSON.parse(readFileSync(plan, 'utf8')) as { steps: Array<{ step: number; state: string; notes: string }>; outcomes: Array<{ verdict: string }> };
    expect(saved.steps.map((s) => s.state)).toEqual(Array(6).fill('done'));
    expect(saved.steps[2]!.notes).toMatch(/confirmed by Sam \(the platform cannot be asked\)/);
    expect(saved.outcomes.map((o) => o.verdict)).toEqual(['pass', 'pass', 'pass']);
    const report = JSON.parse(readFileSync(join(stack.dir, 'managed', 'plan-report', 'report.json'), 'utf8')) as { verdict: string };
    expect(report.verdict).toBe('pass');
    expect(adminCalls()).toEqual([]);
  });
});

describe('an integration the target lists and this ferry does not know', () => {
  it('is a row-level error naming the platform and --token-fields; with --token-fields the row is valid', async () => {
    const newer = await startPublicApiProxy(stack.baseUrl, { extraIntegrations: [{ key: 'zzzz', name: 'Future Ledger', sourceType: 'Accounting', enabled: true }] });
    try {
      const csv = writeCsv(stack.dir, 'future.csv', 'companyName,externalId,platformKey,apiKey,orgId\nAcme,f1,zzzz,k-1,o-1\n');
      const args = ['--base-url', newer.url, '--api-key-file', target[3]!, 'migrate', 'tokens', csv, '--dry-run'];
      const unknown = await ferryInProcess(args);
      expect(unknown.code).toBe(3);
      expect(unknown.stderr).toContain("row 2, platformKey: this ferry does not know the token fields of Future Ledger (zzzz): name the file's token columns with --token-fields a,b,c, or update ferry");
      const given = await ferryInProcess([...args, '--token-fields', 'apiKey,orgId']);
      expect(given.code, given.stderr).toBe(0);
      expect(readResults(`${csv}.dry-run.results.csv`).map((r) => r.status)).toEqual(['valid']);
    } finally {
      await newer.close();
    }
  });
});

describe('a target that is not the service', () => {
  it('an HTML page where the API should be: one clear error naming the URL, nothing written', async () => {
    const { createServer } = await import('node:http');
    const page = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html><body>Sign in</body></html>');
    });
    await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(page.address() as { port: number }).port}`;
    try {
      const csv = writeCsv(stack.dir, 'html.csv', 'companyName,externalId,platformKey,accessToken,refreshToken,tenantId\nAcme,e1,gbol,a,r,t\n');
      const run = await ferryInProcess(['--base-url', url, '--api-key-file', target[3]!, 'migrate', 'tokens', csv, '--yes']);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`error: ${url} answered GET /integrations with text/html that is not the service's JSON.`);
      expect(run.stderr).toContain('hint: Is --base-url');
      expect(() => readFileSync(`${csv}.results.csv`)).toThrow();
      expect(() => readFileSync(`${csv}.results.csv.journal`)).toThrow();
    } finally {
      page.close();
    }
  });
});
