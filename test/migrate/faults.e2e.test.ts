// `ferry migrate tokens` when the service misbehaves: a low rate limit (429s: the client
// paces and retries), 429/500/503 and broken connections injected by a proxy (before the
// service sees a request, and after it has acted — the ambiguous case, where the engine
// must find what it created by its ferryKey instead of creating it again), and a key that
// stops working mid-run (401, revoked → 403): the run stops with exit 4 and resumes.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runFerry } from '../helpers/cli.js';
import { ferry } from '../helpers/in-process.js';
import { waitFor } from '../helpers/sync.js';
import { startFaultProxy, type FaultProxy } from './fault-proxy.js';
import {
  byRow, expectMigratedOnce, extKeys, leakedSecrets, makeTenants, readResults, secretsOf, spawnFerry, stopCleanly, tokensCsv, writeCsv,
} from './support.js';
import { type ServeProcess, startTestStack } from '../helpers/stack.js';

let stack: ServeProcess | undefined;
let proxy: FaultProxy | undefined;

afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
  await stopCleanly(stack);
  stack = undefined;
});

describe('migrate tokens: faults from the service', () => {
  it('a low rate limit (ferry serve --rate-limit 20): one job paces itself; two jobs on one key get 429s and retry; every row migrated', async () => {
    stack = await startTestStack('process', { args: ['--rate-limit', '20'] });
    const tenants = await makeTenants(stack.sandboxUrl, 60, { seed: 4000 });
    const httpLines = (stderr: string) => stderr.split('\n').filter((line) => line.startsWith('[http] '));
    const tooMany = (lines: string[]) => lines.filter((line) => / → 429 /.test(line));

    // One job alone: the client keeps to the bucket (X-Rate-Limit-*), so 429s stay rare.
    const alone = writeCsv(stack.dir, 'alone.csv', tokensCsv(tenants.slice(0, 20)));
    const run = await runFerry([...stack.target(), '-v', 'migrate', 'tokens', alone, '--yes', '--concurrency', '16'], { timeoutMs: 60_000 });
    expect(run.code, run.stderr).toBe(0);
    const requests = httpLines(run.stderr);
    expect(requests.length).toBeGreaterThanOrEqual(4 * 20);
    expect(tooMany(requests).length, `429s: ${tooMany(requests).length} of ${requests.length} requests`).toBeLessThanOrEqual(Math.ceil(requests.length / 10));
    expect(leakedSecrets(run.stderr + run.stdout, secretsOf(tenants))).toEqual([]);
    expect(run.stderr).not.toContain(stack.adminKey);

    // Two shards at once on the same key share one bucket: the service answers 429, the client waits and retries.
    // Run alone, this test takes under 30 s. Beside the rest of the suite a shard has
    // needed over 60 s, each 429 making it wait for the bucket: what is checked is that they finish.
    const shared = writeCsv(stack.dir, 'shared.csv', tokensCsv(tenants.slice(20)));
    const jobs = await Promise.all(['1/2', '2/2'].map((shard) =>
      runFerry([...stack!.target(), '-v', 'migrate', 'tokens', shared, '--yes', '--shard', shard], { timeoutMs: 150_000 })));
    for (const job of jobs) expect(job.code, job.stderr).toBe(0);
    const limited = jobs.flatMap((job) => tooMany(httpLines(job.stderr)));
    expect(limited.length, 'the two jobs together went over the limit').toBeGreaterThan(0);
    const rows = [1, 2].flatMap((i) => readResults(`${shared}.shard-${i}-of-2.results.csv`));
    expect(rows.length).toBe(40);
    expect(rows.filter((r) => r.status !== 'migrated')).toEqual([]);
    await expectMigratedOnce(stack.api, extKeys(tenants));
  }, 240_000);

  it('injected 429, 500, 503 and resets, before and after the service acts: all rows migrated, no duplicates', async () => {
    stack = await startTestStack('process');
    const tenants = await makeTenants(stack.sandboxUrl, 64, { seed: 5000 });
    const input = writeCsv(stack.dir, 'tokens.csv', tokensCsv(tenants));
    proxy = await startFaultProxy(stack.baseUrl, {
      schedule: {
        'create-company': ['500-after', undefined, 'reset-after', undefined, '500-before', undefined, '503-before', 'reset-before', '429-before', undefined],
        'create-connection': ['500-after', undefined, 'reset-after', undefined, '503-before', undefined, '500-before'],
        authorize: ['500-before', undefined, '503-before', undefined, 'reset-before', undefined, '500-after', undefined, 'reset-after', undefined, undefined],
        sync: ['500-after', undefined, '503-before', undefined, 'reset-after', undefined],
        get: ['500-before', undefined, undefined, '503-before', undefined, 'reset-before', undefined],
      },
    });
    const run = await runFerry([...stack.target(stack.adminKeyFile, proxy.url), '-v', 'migrate', 'tokens', input, '--yes'], { timeoutMs: 90_000 });
    const context = `injected: ${JSON.stringify(proxy.injected)}\n${run.stderr}`;
    expect(run.code, context).toBe(0);

    // Every scheduled kind of fault happened.
    for (const fault of ['create-company 500-after', 'create-company reset-after', 'create-company 500-before', 'create-company 503-before', 'create-company reset-before',
      'create-company 429-before', 'create-connection 500-after', 'create-connection reset-after', 'authorize 500-after', 'authorize reset-after', 'sync 500-after']) {
      expect(proxy.injected[fault] ?? 0, `${fault}; ${context}`).toBeGreaterThan(0);
    }
    // The service created exactly one company per row although some creates were answered with errors.
    expect(proxy.forwarded['create-company'], context).toBe(tenants.length);
    expect(proxy.forwarded['create-connection'], context).toBe(tenants.length);
    await expectMigratedOnce(stack.api, extKeys(tenants), { context });
    const rows = byRow(readResults(`${input}.results.csv`));
    expect(rows.size).toBe(tenants.length);
    expect([...rows.values()].filter((r) => r.status !== 'migrated'), context).toEqual([]);
    expect(leakedSecrets(run.stderr + run.stdout, secretsOf(tenants))).toEqual([]);
  }, 120_000);

  it('a 401 mid-run stops the run (exit 4); rows not done resume with a working key', async () => {
    stack = await startTestStack('process');
    const tenants = await makeTenants(stack.sandboxUrl, 60, { seed: 6000 });
    const input = writeCsv(stack.dir, 'tokens.csv', tokensCsv(tenants));
    const results = join(stack.dir, 'results.csv');
    let created = 0;
    proxy = await startFaultProxy(stack.baseUrl, {
      override: (request) => {
        if (created >= 15) return '401';
        if (request.kind === 'create-company') created += 1;
        return undefined;
      },
    });
    const stopped = await runFerry([...stack.target(stack.adminKeyFile, proxy.url), 'migrate', 'tokens', input, '--yes', '--results', results], { timeoutMs: 60_000 });
    expect(stopped.code, stopped.stderr).toBe(4);
    expect(stopped.stderr).toContain('error: The service refused the key (Unauthorized: the API key is not valid (injected).); the run stopped, since every row would fail.');
    expect(stopped.stderr).toContain(`hint: Check the key (ferry --base-url ${proxy.url} --api-key-file ${stack.adminKeyFile} whoami), then run the same command again to resume.`);
    expect(stopped.stderr).toContain(`Next: ferry --base-url ${proxy.url} --api-key-file ${stack.adminKeyFile} migrate tokens ${input} --results ${results} --yes   # resumes`);
    const partial = byRow(readResults(results));
    expect(partial.size).toBeLessThan(tenants.length);
    expect([...partial.values()].filter((r) => r.status !== 'migrated')).toEqual([]);

    const resumed = await runFerry([...stack.target(), 'migrate', 'tokens', input, '--yes', '--results', results], { timeoutMs: 60_000 });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain(`${partial.size} done by earlier runs`);
    const rows = byRow(readResults(results));
    expect(rows.size).toBe(tenants.length);
    expect([...rows.values()].filter((r) => r.status !== 'migrated')).toEqual([]);
    await expectMigratedOnce(stack.api, extKeys(tenants));
  }, 90_000);

  it('a key revoked mid-run (403) stops the run (exit 4) and the client\'s other key resumes it', async () => {
    stack = await startTestStack('process');
    const client = await stack.api.call('POST', '/admin/clients', { body: { name: 'Revoked Ltd', plan: 'Paid' } });
    expect(client.status, client.text).toBe(201);
    const second = await stack.api.call('POST', `/admin/clients/${client.body.id}/apiKeys`);
    expect(second.status, second.text).toBe(201);
    const tenants = await makeTenants(stack.sandboxUrl, 40, { seed: 7000 });
    const input = writeCsv(stack.dir, 'tokens.csv', tokensCsv(tenants));

    // Hold every request after the 10th company create until the key is revoked.
    let creates = 0;
    let held = 0;
    let release!: () => void;
    const revoked = new Promise<void>((resolve) => (release = resolve));
    proxy = await startFaultProxy(stack.baseUrl, {
      gate: async (request) => {
        if (creates < 10) {
          if (request.kind === 'create-company') creates += 1;
          return;
        }
        held += 1;
        await revoked;
      },
    });
    const child = spawnFerry([...stack.target(stack.keyFile('second.key', second.body.apiKey), proxy.url), 'migrate', 'tokens', input, '--yes']);
    await waitFor('a request held after the 10th company', async () => held > 0);
    const revoke = await stack.api.call('DELETE', `/admin/clients/${client.body.id}/apiKeys/${second.body.id}`);
    expect(revoke.status, revoke.text).toBe(204);
    release();
    const stopped = await child.done;
    expect(stopped.code, stopped.stderr).toBe(4);
    expect(stopped.stderr).toContain('You are using an outdated API key or a key not associated with that resource.');
    expect(stopped.stderr).toContain('run the same command again to resume');
    const done = byRow(readResults(`${input}.results.csv`));
    expect(done.size).toBeLessThan(tenants.length);

    const firstKey = stack.keyFile('first.key', client.body.apiKey);
    const resumed = await runFerry([...stack.target(firstKey), 'migrate', 'tokens', input, '--yes'], { timeoutMs: 60_000 });
    expect(resumed.code, resumed.stderr).toBe(0);
    const rows = byRow(readResults(`${input}.results.csv`));
    expect(rows.size).toBe(tenants.length);
    expect([...rows.values()].filter((r) => r.status !== 'migrated')).toEqual([]);
    await expectMigratedOnce(stack.api, extKeys(tenants), { apiKey: client.body.apiKey });
  }, 90_000);

  it('a key refused from the start: exit 4 with a hint, no results and no journal', async () => {
    stack = await startTestStack('process');
    const input = writeCsv(stack.dir, 'tokens.csv', 'companyName,platformKey,accessToken,refreshToken,tenantId\nAcme,gbol,a,r,t\n');
    const badKey = join(stack.dir, 'bad.key');
    writeFileSync(badKey, 'not-a-key\n', { mode: 0o600 });
    for (const json of [false, true]) {
      const run = await ferry([...stack.target(badKey), ...(json ? ['--json'] : []), 'migrate', 'tokens', input, '--yes']);
      expect(run.code, run.stderr).toBe(4);
      if (json) expect(JSON.parse(run.stderr.trim())).toMatchObject({ error: { status: 401, exitCode: 4 } });
      else expect(run.stderr).toContain('hint: check the API key (--api-key-file, FERRY_API_KEY or the profile).');
      expect(run.stderr).not.toContain('not-a-key');
    }
    expect(existsSync(`${input}.results.csv`)).toBe(false);
    expect(existsSync(`${input}.results.csv.journal`)).toBe(false);
  }, 30_000);
});
