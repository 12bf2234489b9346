// `ferry check`: the end-to-end check on a real stack (service, worker, sandbox): a healthy
// company passes with evidence for each criterion in every output mode; a company whose
// grant the legacy application revoked fails with "reauthorization required"; unknown
// companies, --no-sync and --timeout. --no-sync with a newer sync still queued runs on the
// harness, whose worker runs only when the test says.
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/client/client.js';
import { checkCompany } from '../../src/ops/check/engine.js';
import { integrationByKey } from '../../src/platforms/registry.js';
import type { Stack } from '../../src/stack.js';
import { ferry } from '../helpers/in-process.js';
import { tempDir } from '../helpers/service.js';
import { apiClient, linkedCompany, sandboxCall, type Api } from '../helpers/sync.js';
import { interactive, keyFile } from '../managed/helpers.js';
import { startTestStack, type Harness } from '../helpers/stack.js';

const SUPPORTED = integrationByKey('gbol')!.dataTypes;

describe('ferry check (in-process, real stack)', () => {
  const work = tempDir('ferry-check-');
  let stack: Stack;
  let api: Api;
  let target: string[];
  const check = (args: string[], options: { tty?: boolean; env?: Record<string, string> } = {}) => ferry([...target, 'check', '--poll-ms', '50', ...args], options);

  beforeAll(async () => {
    stack = await startTestStack('threads', { dataDir: join(work, 'data'), rateLimit: 0 });
    api = apiClient(stack.baseUrl, stack.adminKey);
    target = ['--base-url', stack.baseUrl, '--api-key-file', keyFile(work, stack.adminKey)];
  });
  afterAll(async () => {
    await stack?.close();
    rmSync(work, { recursive: true, force: true });
  });

  it('a platform whose data types this ferry does not know fails the sync criterion instead of passing on nothing', async () => {
    const { companyId } = await linkedCompany(api, stack.sandboxUrl, 'gbol', 2, { name: 'Unknown Types Ltd' });
    const client = new ApiClient({ baseUrl: stack.baseUrl, apiKey: stack.adminKey });
    try {
      const result = await checkCompany({ companyId }, { sync: true, timeoutMs: 30_000, pollMs: 50, signal: new AbortController().signal }, {
        client, integration: async () => ({ key: 'gbol', name: 'Xero', dataTypes: [] }),
      });
      expect(result.verdict).toBe('fail');
      expect(result.criteria.find((c) => c.name === 'sync')).toMatchObject({ status: 'fail', summary: 'this ferry does not know which data types gbol supports (update ferry)' });
      expect(result.reasons).toContain('sync: this ferry does not know which data types gbol supports (update ferry)');
    } finally {
      await client.close();
    }
  });

  it('passes a healthy company, with evidence for each criterion, in every output mode', async () => {
    const { companyId, connectionId } = await linkedCompany(api, stack.sandboxUrl, 'gbol', 5, { name: 'Healthy & Co' });
    const json = await check([companyId, '--json']);
    expect(json.code, json.stderr).toBe(0);
    const doc = JSON.parse(json.stdout);
    expect(doc).toMatchObject({ passed: 1, failed: 0 });
    // The adaptive limit's window (one company: it never grew) and requests a second.
    expect(doc.concurrency).toEqual({ final: 4, peak: 4 });
    expect(doc.rate).toBeGreaterThan(0);
    const pinned = JSON.parse((await check([companyId, '--json', '--no-sync', '--concurrency', '2', '--max-rate', '50'])).stdout);
    expect(pinned).toMatchObject({ passed: 1, concurrency: { final: 2, peak: 2 } });
    const [result] = doc.results;
    expect(result).toMatchObject({ companyId, companyName: 'Healthy & Co', connectionId, platformKey: 'gbol', verdict: 'pass', reasons: [] });
    expect(result.criteria.map((c: { name: string; status: string }) => `${c.name}:${c.status}`)).toEqual(['connection:pass', 'sync:pass', 'authorization:pass', 'reads:pass']);
    const [connection, sync, authorization, reads] = result.criteria;
    expect(connection.evidence).toMatchObject({ connectionId, status: 'Linked', platform: 'gbol' });
    expect(Object.keys(sync.evidence.dataTypes).sort()).toEqual([...SUPPORTED].sort());
    expect(Object.values(sync.evidence.dataTypes).every((t: any) => t.status === 'Complete' && t.pullId && t.attempts >= 1)).toBe(true);
    expect(sync.evidence).toMatchObject({ complete: SUPPORTED.length, total: SUPPORTED.length });
    expect(sync.summary).toMatch(new RegExp(`^${SUPPORTED.length}/${SUPPORTED.length} data types Complete after a fresh sync`));
    expect(authorization.evidence).toMatchObject({ status: 'Linked', authErrors: [], legacyRefreshes: { notChecked: 'no tenant id (externalId) for this company' } });
    expect(reads.evidence.dataTypes.chartOfAccounts).toMatchObject({ path: '/data/accounts', httpStatus: 200 });
    expect(reads.evidence.dataTypes.company).toMatchObject({ path: '/data/info', httpStatus: 200 });
    expect(reads.evidence.dataTypes.invoices).toMatchObject({ httpStatus: 200, records: 5 });
    expect(result.syncSeconds).toBeGreaterThanOrEqual(0);

    // A terminal (spinner on stderr): the fake one of the prompt tests, with no questions to answer.
    const tty = await interactive([...target, 'check', '--poll-ms', '50', companyId], []);
    expect(tty.code).toBe(0);
    expect(tty.stdout).toMatch(new RegExp(`^✓ PASS {2}Healthy & Co \\(${companyId}\\)`, 'm'));
    expect(tty.stdout).toMatch(/^ {4}✓ sync {10}\d+\/\d+ data types Complete after a fresh sync/m);
    const words = await interactive([...target, 'check', '--poll-ms', '50', companyId], [], { env: { NO_COLOR: '1' } });
    expect(words.stdout).toMatch(/^pass {4}PASS/m);
    expect(words.stdout).toMatch(/^ {4}pass {4}reads/m);

    const plain = await check([companyId, '--no-sync']);
    expect(plain.code).toBe(0);
    const lines = plain.stdout.trim().split('\n');
    expect(lines[0]).toMatch(new RegExp(`^company\t${companyId}\tHealthy & Co\tpass\t[\\d.]+\t$`));
    expect(lines.slice(1).map((l) => l.split('\t').slice(0, 4).join(' '))).toEqual(['connection', 'sync', 'authorization', 'reads'].map((n) => `criterion ${companyId} ${n} pass`));
    expect(lines[2]).toMatch(/--no-sync: none queued/);
  });

  it('fails with "reauthorization required" when the legacy application\'s refresh revoked the grant', async () => {
    // The service refreshes an expired token as it links; the legacy application then presents
    // its (now used) refresh token: the platform takes that as theft and revokes the grant.
    const tenant = (await sandboxCall(stack.sandboxUrl, 'POST', '/admin/tenants', { platform: 'gbol', count: 1, invoices: 5 })).body.results[0];
    const expired = await sandboxCall(stack.sandboxUrl, 'POST', `/admin/tenants/${tenant.id}/tokens`, { state: 'expired' });
    const company = await api.call('POST', '/companies', { body: { name: 'Revoked Ltd', tags: { ferryKey: `ext:${tenant.id}` } } });
    const connection = await api.call('POST', `/companies/${company.body.id}/connections`, { body: { platformKey: 'gbol' } });
    const linked = await api.call('PUT', `/companies/${company.body.id}/connections/${connection.body.id}/authorization`, { body: expired.body.tokens });
    expect(linked.body.status).toBe('Linked');
    const legacy = await sandboxCall(stack.sandboxUrl, 'POST', `/admin/tenants/${tenant.id}/legacy-refresh`, {});
    expect(legacy.body.outcome).toBe('grant-revoked');

    const result = await check([company.body.id, '--json']);
    expect(result.code).toBe(3);
    const [r] = JSON.parse(result.stdout).results;
    expect(r.verdict).toBe('fail');
    expect(r.reasons.some((x: string) => /^reauthorization required: /.test(x))).toBe(true);
    expect(r.reasons).toContainEqual(expect.stringMatching(/^reauthorization required: the legacy application refreshed the token at .*Z, after the connection was migrated at /));
    const byName = Object.fromEntries(r.criteria.map((c: { name: string }) => [c.name, c]));
    expect(byName.sync.status).toBe('fail');
    expect(Object.values(byName.sync.evidence.dataTypes).some((t: any) => t.status === 'AuthError')).toBe(true);
    expect(byName.authorization).toMatchObject({ status: 'fail', evidence: { status: 'Deauthorized', legacyRefreshes: { tenantId: tenant.id, refreshes: [{ outcome: 'grant-revoked' }] } } });
    expect(JSON.parse(result.stderr).error).toMatchObject({ exitCode: 3, message: expect.stringMatching(/1 of 1 company failed the end-to-end check \(Revoked Ltd: reauthorization required/) });

    // Checked again: the connection itself is now Deauthorized.
    const again = await check([company.body.id]);
    expect(again.code).toBe(3);
    expect(again.stdout).toMatch(/criterion\t.*\tconnection\tfail\tDeauthorized, not Linked/);
    expect(again.stdout).toMatch(/criterion\t.*\tsync\tskipped\tnot run: the connection is not Linked/);
    expect(again.stderr).toMatch(/error: 1 of 1 company failed the end-to-end check \(Revoked Ltd: reauthorization required/);
    // No token in any output.
    for (const value of Object.values(expired.body.tokens as Record<string, string>).filter((v) => v.length > 20)) {
      expect(result.stdout + result.stderr + again.stdout + again.stderr).not.toContain(value);
    }
  });

  it('unknown companies fail, no companies is a usage error, --no-sync judges the data as it is, --timeout bounds the wait', async () => {
    const unknown = randomUUID();
    const missing = await check([unknown]);
    expect(missing.code).toBe(3);
    expect(missing.stdout).toContain(`company\t${unknown}\t\tfail\t`);
    expect(missing.stdout).toMatch(/not found/);

    const none = await check([]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/No companies to check/);

    const { companyId } = await linkedCompany(api, stack.sandboxUrl, 'gbol', 5, { name: 'Never Synced' });
    const stale = await check([companyId, '--no-sync', '--json']);
    expect(stale.code).toBe(3);
    const [r] = JSON.parse(stale.stdout).results;
    expect(r.criteria.find((c: { name: string }) => c.name === 'sync')).toMatchObject({ status: 'fail', summary: expect.stringMatching(/^0\/\d+ data types Complete; not Complete: invoices NotRequested/) });
    expect(r.criteria.find((c: { name: string }) => c.name === 'reads')).toMatchObject({ status: 'fail', summary: expect.stringMatching(/HTTP 409/) });

    const slow = await check([companyId, '--timeout', '1ms', '--json']);
    expect(slow.code).toBe(3);
    const [t] = JSON.parse(slow.stdout).results;
    expect(t.criteria.find((c: { name: string }) => c.name === 'sync').summary).toMatch(/^timed out after 1ms; still running: /);
  });
});

describe('ferry check --no-sync judges the data sets that exist (harness: pulls run when the test says)', () => {
  const work = tempDir('ferry-check-harness-');
  let h: Harness;
  let target: string[];

  beforeAll(async () => {
    h = await startTestStack('fake-clocks');
    target = ['--base-url', h.baseUrl, '--api-key-file', keyFile(work, h.adminKey)];
  });
  afterAll(async () => {
    await h?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it('a data set read once counts as Complete while a newer pull waits behind a backlog; one never read does not', async () => {
    const { companyId } = await linkedCompany(h.api, h.sandboxUrl, 'gbol', 5, { name: 'Backlogged Ltd' });
    expect((await h.api.call('POST', `/companies/${companyId}/data/all`)).status).toBe(204);
    await h.drain();
    // A newer sync is queued and no worker runs it: every data type's latest pull is Queued.
    expect((await h.api.call('POST', `/companies/${companyId}/data/all`)).status).toBe(204);
    const status = (await h.api.call('GET', `/companies/${companyId}/dataStatus`)).body;
    expect(new Set(Object.values(status).map((s: any) => s.currentStatus))).toEqual(new Set(['Queued']));

    const result = await ferry([...target, '--json', 'check', companyId, '--no-sync']);
    expect(result.code, result.stderr).toBe(0);
    const [r] = JSON.parse(result.stdout).results;
    const sync = r.criteria.find((c: { name: string }) => c.name === 'sync');
    expect(sync).toMatchObject({ status: 'pass', evidence: { complete: SUPPORTED.length, total: SUPPORTED.length } });
    expect(sync.summary).toBe(`${SUPPORTED.length}/${SUPPORTED.length} data types Complete (read by the latest successful sync; a newer pull under way for ${SUPPORTED.length} data types; --no-sync: none queued)`);
    expect(sync.evidence.dataTypes.invoices).toMatchObject({ status: 'Queued', read: true, lastSuccessfulSync: expect.any(String) });
    expect(r.criteria.map((c: { name: string; status: string }) => `${c.name}:${c.status}`)).toEqual(['connection:pass', 'sync:pass', 'authorization:pass', 'reads:pass']);
    await h.drain();

    // Never read: a pull queued and not run yet is no data set.
    const unread = await linkedCompany(h.api, h.sandboxUrl, 'gbol', 5, { name: 'Unread Ltd', seed: 9 });
    expect((await h.api.call('POST', `/companies/${unread.companyId}/data/all`)).status).toBe(204);
    const failed = await ferry([...target, '--json', 'check', unread.companyId, '--no-sync']);
    expect(failed.code).toBe(3);
    expect(JSON.parse(failed.stdout).results[0].criteria.find((c: { name: string }) => c.name === 'sync'))
      .toMatchObject({ status: 'fail', summary: expect.stringMatching(new RegExp(`^0/${SUPPORTED.length} data types Complete; not Complete: invoices Queued`)) });
    await h.drain();
  });
});
