// `ferry sync`: queuing for one or many companies (--from-results), --wait with its
// summary in every output mode, partial failure (AuthError after the legacy application
// refreshed), --timeout and Ctrl-C that stop waiting without cancelling anything.
// Deterministic cases run on the harness (fake clocks, the test drives the worker);
// --wait end to end runs on startStack's real worker and against `ferry serve`.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_ACCESS_TOKEN_TTL_SECONDS as TTL } from '../../src/sandbox/index.js';
import { integrationByKey } from '../../src/platforms/registry.js';
import type { Stack } from '../../src/stack.js';
import { parseDuration } from '../../src/lib/duration.js';
import { ferry, type InProcessResult } from '../helpers/in-process.js';
import { tempDir } from '../helpers/service.js';
import {
  apiClient, linkedCompany, sandboxCall, waitFor, type Api } from '../helpers/sync.js';
import { type Harness, type ServeHandle, startTestStack } from '../helpers/stack.js';
import { newClient, startClientStack, stopClientStack } from './client-stack-support.js';

const PLATFORM = 'gbol';
const SUPPORTED = integrationByKey(PLATFORM)!.dataTypes;

/** Runs ferry in-process while the test plays the worker: a pass every few ms until the command ends. */
async function whileSyncing(h: Harness, run: Promise<InProcessResult>): Promise<InProcessResult> {
  let finished = false;
  const result = run.finally(() => (finished = true));
  while (!finished) {
    await h.sync();
    await new Promise((resolve) => setTimeout(resolve, 15));
  }
  return result;
}

/** A company with a connection that was never authorized (PendingAuth). */
async function unlinkedCompany(api: Api, name: string): Promise<string> {
  const company = await api.call('POST', '/companies', { body: { name } });
  await api.call('POST', `/companies/${company.body.id}/connections`, { body: { platformKey: PLATFORM } });
  return company.body.id;
}

async function history(api: Api, companyId: string): Promise<Array<{ dataType: string; status: string }>> {
  return (await api.call('GET', `/companies/${companyId}/data/history?pageSize=100`)).body.results;
}

describe('durations', () => {
  it.each([['90s', 90_000], ['10m', 600_000], ['1h', 3_600_000], ['1h30m', 5_400_000], ['500ms', 500], ['2', 2000], ['1.5s', 1500]])('%s is %d ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });
  it.each(['', 'ten minutes', '10x', 'm10', '-5s'])('%j is not a duration', (text) => {
    expect(parseDuration(text)).toBeUndefined();
  });
});

describe('ferry sync on the harness (fake clocks, worker driven by the test)', () => {
  let h: Harness;
  let api: Api;
  let remote: string[];
  let work: string;

  beforeAll(async () => {
    h = await startTestStack('fake-clocks');
    work = tempDir('ferry-sync-cli-');
    ({ api, remote } = await newClient(h.api, h.adminKey, h.baseUrl, 'Sync CLI Ltd', work));
  });
  afterAll(async () => {
    await h?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it('without --wait queues every supported data type and prints one TSV line per company', async () => {
    const { companyId } = await linkedCompany(api, h.sandboxUrl, PLATFORM, 5, { name: 'Queue Only' });
    const result = await ferry([...remote, 'sync', companyId]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(`${companyId}\tQueue Only\tqueued\t0\t${SUPPORTED.length}\t\n`);
    expect(result.stderr).toContain(`Queued syncs for 1 of 1 company.`);
    const pulls = await history(api, companyId);
    expect(pulls.map((p) => p.dataType).sort()).toEqual([...SUPPORTED].sort());
    expect(new Set(pulls.map((p) => p.status))).toEqual(new Set(['Queued']));
    await h.drain();
  });

  it('--from-results takes the migrated and skipped rows, dedupes, and reports a company with no Linked connection', async () => {
    const a = await linkedCompany(api, h.sandboxUrl, PLATFORM, 5, { name: 'Results A', seed: 1 });
    const b = await linkedCompany(api, h.sandboxUrl, PLATFORM, 5, { name: 'Results B', seed: 2 });
    const failedRow = await linkedCompany(api, h.sandboxUrl, PLATFORM, 5, { name: 'Results Failed', seed: 3 });
    const pending = await unlinkedCompany(api, 'Results Pending');
    // A UTF-8 BOM, CRLF, a header in another case, a quoted field with a comma and a newline.
    const csv = [
      'row,externalId,companyName,platformKey,CompanyId,connectionId,Status,step,httpStatus,error,correlationId',
      `2,ext-a,Results A,gbol,${a.companyId},${a.connectionId},migrated,sync,204,,`,
      `3,ext-b,"Results B, Ltd",gbol,${b.companyId},${b.connectionId},skipped,,,,`,
      `4,ext-f,Results Failed,gbol,${failedRow.companyId},,failed,authorize,400,"The platform rejected
the tokens",0b9f`,
      '5,ext-v,Results Valid,gbol,,,valid,validate,,,',
      `6,ext-a,Results A,gbol,${a.companyId},${a.connectionId},skipped,,,,`,
      `7,ext-p,Results Pending,gbol,${pending},,migrated,sync,400,,`,
    ].join('\r\n');
    const file = join(work, 'tokens.results.csv');
    writeFileSync(file, `\uFEFF${csv}\r\n`);

    const result = await ferry([...remote, '--json', 'sync', '--from-results', file]);
    expect(result.code, result.stderr).toBe(3);
    const summary = JSON.parse(result.stdout);
    expect(summary.map((s: any) => s.companyId)).toEqual([a.companyId, b.companyId, pending]);
    expect(summary[0]).toMatchObject({ name: 'Results A', ok: true, state: 'queued' });
    expect(Object.keys(summary[0].dataTypes).sort()).toEqual([...SUPPORTED].sort());
    expect(summary[1]).toMatchObject({ ok: true, state: 'queued' });
    expect(summary[2]).toMatchObject({ companyId: pending, name: 'Results Pending', ok: false, state: 'failed', dataTypes: {} });
    expect(summary[2].error).toContain('no Linked connection (Xero PendingAuth)');
    expect(JSON.parse(result.stderr)).toMatchObject({ error: { exitCode: 3, message: expect.stringContaining('1 of 3 companies could not be queued') } });
    // The hint's command reaches the same service, as printed.
    expect(JSON.parse(result.stderr).error.hint).toContain(`The first one's connections and data sets: ferry ${remote.join(' ')} status ${pending}`);
    // The failed row's company was left alone.
    expect(await history(api, failedRow.companyId)).toEqual([]);
    await h.drain();
  });

  it('a results file without a companyId column is a usage error', async () => {
    const file = join(work, 'no-company.csv');
    writeFileSync(file, 'row,companyName,status\n2,Acme,migrated\n');
    const result = await ferry([...remote, 'sync', '--from-results', file]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('has no companyId column');
    const missing = await ferry([...remote, 'sync', '--from-results', join(work, 'nope.csv')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('ENOENT');
  });

  it('a results file with only failed rows has nothing to sync (exit 1)', async () => {
    const file = join(work, 'all-failed.csv');
    writeFileSync(file, 'row,companyId,status\n2,,failed\n3,,failed\n');
    const result = await ferry([...remote, 'sync', '--from-results', file]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('rows left out: 2 failed');
    expect(result.stderr).toContain('nothing to sync');
  });

  it.each([
    { args: ['sync'], says: 'No companies to sync' },
    { args: ['sync', 'x', '--data-type', 'widgets'], says: 'Unknown data type widgets' },
    { args: ['sync', 'x', '--timeout', '5m'], says: '--timeout only applies with --wait' },
    { args: ['sync', 'x', '--force'], says: '--force only applies with --wait or --from-results' },
    { args: ['sync', 'x', '--wait', '--timeout', 'soon'], says: '--timeout must be a duration' },
  ])('usage: $says → exit 2', async ({ args, says }) => {
    const result = await ferry([...remote, ...args]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(says);
  });

  it('--data-type --wait follows the one pull to Complete (JSON summary, exit 0)', async () => {
    const { companyId } = await linkedCompany(api, h.sandboxUrl, PLATFORM, 30, { name: 'One Type', seed: 4 });
    const result = await whileSyncing(h, ferry([...remote, '--json', 'sync', companyId, '--data-type', 'accounts', '--wait', '--poll-ms', '20']));
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual([{ companyId, name: 'One Type', ok: true, state: 'complete', dataTypes: { chartOfAccounts: 'Complete' } }]);
    expect(result.stderr).toBe('');
  });

  it('--wait on a terminal: a table with a header; piped: TSV lines and log lines on stderr', async () => {
    const { companyId } = await linkedCompany(api, h.sandboxUrl, PLATFORM, 10, { name: 'Table Co', seed: 5 });
    const tty = await whileSyncing(h, ferry([...remote, '--no-color', 'sync', companyId, '--wait', '--poll-ms', '20'], { tty: true }));
    expect(tty.code, tty.stderr).toBe(0);
    const [header, row] = tty.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^COMPANY\s+NAME\s+STATE\s+COMPLETE\s+TOTAL\s+DETAIL$/);
    expect(row).toMatch(new RegExp(`^${companyId}\\s+Table Co\\s+complete\\s+${SUPPORTED.length}\\s+${SUPPORTED.length}$`));

    const plain = await whileSyncing(h, ferry([...remote, 'sync', companyId, '--wait', '--poll-ms', '20']));
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stdout).toBe(`${companyId}\tTable Co\tcomplete\t${SUPPORTED.length}\t${SUPPORTED.length}\t\n`);
    expect(plain.stderr).toContain(`Table Co (${companyId}): complete`);
    expect(plain.stderr).toMatch(new RegExp(`companies 1/1 done · data types ${SUPPORTED.length}/${SUPPORTED.length} complete · 0 errors`));
  });

  it('a single company whose every pull fails: AuthError in the summary, exit 1 (nothing synced)', async () => {
    const linked = await linkedCompany(api, h.sandboxUrl, PLATFORM, 10, { name: 'Legacy Solo', seed: 6 });
    // The legacy application rotates the tokens away; once the access token expires, the service's refresh fails.
    expect((await sandboxCall(h.sandboxUrl, 'POST', `/admin/tenants/${linked.tenant.id}/legacy-refresh`)).body.outcome).toBe('rotated');
    h.clock.advance(TTL + 60);
    const result = await whileSyncing(h, ferry([...remote, '--json', 'sync', linked.companyId, '--data-type', 'invoices', '--wait', '--poll-ms', '20']));
    expect(result.code, result.stderr).toBe(1);
    const [summary] = JSON.parse(result.stdout);
    expect(summary).toMatchObject({ ok: false, state: 'failed', dataTypes: { invoices: 'AuthError' } });
    expect(summary.errors.invoices).toMatch(/^Reauthorization required/);
    expect(JSON.parse(result.stderr).error.message).toContain('did not sync completely');
  });

  it('--timeout expiring exits 1 with the companies per state, what was still running and the command that resumes, and cancels nothing', async () => {
    const { companyId } = await linkedCompany(api, h.sandboxUrl, PLATFORM, 5, { name: 'Slow Co', seed: 7 });
    // No worker pass runs: the pull stays Queued.
    const result = await ferry([...remote, 'sync', companyId, '--data-type', 'invoices', '--wait', '--timeout', '1s', '--poll-ms', '50']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Waiting at most 1s for 1 company (until ');
    expect(result.stderr).toContain(`error: Timed out after 1s waiting for syncs: 0 complete, 0 running, 1 queued, 0 failed; still running: Slow Co (${companyId}): invoices Queued.`);
    expect(result.stderr).toContain(`hint: The syncs were not cancelled: they carry on in the service. Resume the wait with: ferry ${remote.join(' ')} sync ${companyId} --data-type invoices --wait --timeout 1s --poll-ms 50\n`);
    expect(result.stdout).toBe(`${companyId}\tSlow Co\trunning\t0\t1\tinvoices Queued\n`);
    expect((await history(api, companyId)).map((p) => p.status)).toEqual(['Queued']);
    await h.drain();
  });

  it('Ctrl-C stops waiting (exit 130) without cancelling the syncs, and says so', async () => {
    const { companyId } = await linkedCompany(api, h.sandboxUrl, PLATFORM, 5, { name: 'Interrupted Co', seed: 8 });
    const controller = new AbortController();
    const run = ferry([...remote, 'sync', companyId, '--data-type', 'bills', '--wait', '--poll-ms', '50'], { signal: controller.signal });
    await waitFor('the pull queued', async () => (await history(api, companyId)).length === 1);
    setTimeout(() => controller.abort(), 200);
    const result = await run;
    expect(result.code).toBe(130);
    expect(result.stderr).toContain('Stopped waiting; rerun the same command to resume. The syncs were not cancelled: they carry on in the service. Companies: 0 complete, 0 running, 1 queued, 0 failed.');
    expect(result.stderr).not.toMatch(/^error:/m);
    expect(result.stderr).toContain(`Resume the wait with: ferry ${remote.join(' ')} sync ${companyId} --data-type bills --wait --poll-ms 50`);
    expect(result.stdout).toContain('running');
    expect((await history(api, companyId)).map((p) => p.status)).toEqual(['Queued']);
    await h.drain();
    expect((await history(api, companyId)).map((p) => p.status)).toEqual(['Complete']);
  });

  it('an unknown company is reported in the summary, not fatal; a bad key is fatal (exit 4)', async () => {
    const { companyId } = await linkedCompany(api, h.sandboxUrl, PLATFORM, 5, { name: 'Known Co', seed: 9 });
    const result = await ferry([...remote, 'sync', companyId, '00000000-0000-4000-8000-000000000000']);
    expect(result.code).toBe(3);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(new RegExp(`^${companyId}\tKnown Co\tqueued\t`));
    expect(lines[1]).toMatch(/^00000000-0000-4000-8000-000000000000\t\tfailed\t0\t0\t.*not found.*HTTP 404/);
    await h.drain();

    writeFileSync(join(work, 'bad.key'), 'not-a-key');
    const denied = await ferry(['--base-url', h.baseUrl, '--api-key-file', join(work, 'bad.key'), 'sync', companyId]);
    expect(denied.code).toBe(4);
  });
});

describe('ferry sync --wait with the real worker (startStack)', () => {
  const dataDir = tempDir('ferry-sync-stack-');
  const work = tempDir('ferry-sync-stack-work-');
  let stack: Stack;
  let api: Api;
  let remote: string[];

  beforeAll(async () => {
    ({ stack, api, remote } = await startClientStack('Stack Sync Ltd', dataDir, work));
  });
  afterAll(() => stopClientStack(stack, dataDir, work));

  it('waits for two companies to sync every data type (exit 0)', async () => {
    const a = await linkedCompany(api, stack.sandboxUrl, PLATFORM, 50, { name: 'Stack A', seed: 31 });
    const b = await linkedCompany(api, stack.sandboxUrl, PLATFORM, 50, { name: 'Stack B', seed: 32 });
    const result = await ferry([...remote, '--json', 'sync', a.companyId, b.companyId, '--wait', '--timeout', '60s', '--poll-ms', '50']);
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout);
    expect(summary).toHaveLength(2);
    for (const company of summary) {
      expect(company).toMatchObject({ ok: true, state: 'complete' });
      expect(Object.keys(company.dataTypes).sort()).toEqual([...SUPPORTED].sort());
      expect(new Set(Object.values(company.dataTypes))).toEqual(new Set(['Complete']));
    }
  });

  it('an AuthError after the legacy application refreshed makes exit 3, with the reason in the summary', async () => {
    const healthy = await linkedCompany(api, stack.sandboxUrl, PLATFORM, 20, { name: 'Healthy Co', seed: 33 });
    // Link with an expired access token: the service refreshes at authorization (rotating the pair);
    // the legacy application then reuses the old refresh token, which revokes the grant.
    const tenant = (await sandboxCall(stack.sandboxUrl, 'POST', '/admin/tenants', { platform: PLATFORM, count: 1, invoices: 20, seed: 34 })).body.results[0];
    const expired = (await sandboxCall(stack.sandboxUrl, 'POST', `/admin/tenants/${tenant.id}/tokens`, { state: 'expired' })).body.tokens;
    const company = (await api.call('POST', '/companies', { body: { name: 'Legacy Co' } })).body;
    const connection = (await api.call('POST', `/companies/${company.id}/connections`, { body: { platformKey: PLATFORM } })).body;
    const authorized = await api.call('PUT', `/companies/${company.id}/connections/${connection.id}/authorization`, { body: expired });
    expect(authorized.body.status, authorized.text).toBe('Linked');
    expect((await sandboxCall(stack.sandboxUrl, 'POST', `/admin/tenants/${tenant.id}/legacy-refresh`)).body.outcome).toBe('grant-revoked');

    const result = await ferry([...remote, 'sync', healthy.companyId, company.id, '--wait', '--timeout', '60s', '--poll-ms', '50']);
    expect(result.code, result.stderr).toBe(3);
    const [good, bad] = result.stdout.trimEnd().split('\n');
    expect(good).toMatch(new RegExp(`^${healthy.companyId}\tHealthy Co\tcomplete\t${SUPPORTED.length}\t${SUPPORTED.length}\t$`));
    expect(bad).toMatch(new RegExp(`^${company.id}\tLegacy Co\tfailed\t0\t${SUPPORTED.length}\tAuthError \\(all ${SUPPORTED.length} data types\\): Reauthorization required`));
    expect(result.stderr).toContain('error: 1 of 2 companies did not sync completely: Legacy Co');

    // ferry status shows why: the connection needs reauthorization.
    const status = await ferry([...remote, '--json', 'status', company.id]);
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout).connections[0]).toMatchObject({ status: 'Deauthorized', reauthorizationRequired: true });
  });
});

describe('ferry sync against ferry serve', () => {
  const dataDir = tempDir('ferry-sync-serve-');
  const work = tempDir('ferry-sync-serve-work-');
  let serve: ServeHandle;
  let remote: string[];
  let api: Api;

  beforeAll(async () => {
    serve = await startTestStack('serve', { dataDir });
    const adminKey = readFileSync(join(dataDir, 'admin.key'), 'utf8').trim();
    ({ api, remote } = await newClient(apiClient(serve.listening.baseUrl!, adminKey), adminKey, serve.listening.baseUrl!, 'Serve Sync Ltd', work));
  });
  afterAll(async () => {
    await serve?.stop();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  });

  it('sync --from-results --wait: piped output, exit 0', async () => {
    const a = await linkedCompany(api, serve.listening.sandboxUrl!, PLATFORM, 20, { name: 'Serve A', seed: 41 });
    const file = join(work, 'results.csv');
    writeFileSync(file, `row,externalId,companyName,platformKey,companyId,connectionId,status,step,httpStatus,error,correlationId\n2,x,Serve A,gbol,${a.companyId},${a.connectionId},migrated,sync,204,,\n`);
    const result = await ferry([...remote, 'sync', '--from-results', file, '--wait', '--timeout', '60s']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(`${a.companyId}\tServe A\tcomplete\t${SUPPORTED.length}\t${SUPPORTED.length}\t\n`);
    expect(result.stderr).toContain('Read 1 company from');
    // No spinner escape codes when stderr is a pipe.
    expect(result.stderr).not.toContain('\u001b[');
  });

  it('sync --wait over 20 companies prints no Node warning (ferry() rejects any)', async () => {
    const companies: string[] = [];
    for (let i = 0; i < 20; i++) companies.push((await linkedCompany(api, serve.listening.sandboxUrl!, PLATFORM, 2, { name: `Serve ${i}`, seed: 500 + i })).companyId);
    const result = await ferry([...remote, 'sync', ...companies, '--wait', '--timeout', '120s', '--poll-ms', '50']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trimEnd().split('\n')).toHaveLength(20);
  });
});
