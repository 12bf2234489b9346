// `ferry migrate tokens` and the plan's company limit (a Free client holds 50 companies:
// the dry run reports the headroom, the run fails the rows beyond it at the company step
// with 402 and goes on with rows whose company exists, exit 5), two shards of one file
// run in parallel, and --fail-fast; against `ferry serve`, all in this process.
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { ferry } from '../helpers/in-process.js';
import {
  allCompanies, byRow, expectMigratedOnce, extKeys, makeTenants, readResults, stopCleanly, tokensCsv, writeCsv,
} from './support.js';
import { type ServeHandle, startTestStack } from '../helpers/stack.js';

let stack: ServeHandle | undefined;

afterEach(async () => {
  await stopCleanly(stack);
  stack = undefined;
});

describe('migrate tokens: the Free plan\'s company limit', () => {
  it('dry run reports the headroom (exit 5); the run migrates 50, fails 10 at company with 402, rows with existing companies go on', async () => {
    stack = await startTestStack('serve');
    const created = await ferry([...stack.target(), '--json', 'admin', 'clients', 'create', '--name', 'Free Trial Ltd', '--plan', 'Free']);
    expect(created.code, created.stderr).toBe(0);
    const { apiKey, plan } = JSON.parse(created.stdout) as { apiKey: string; plan: string };
    expect(plan).toBe('Free');
    const freeKey = stack.keyFile('free.key', apiKey);

    // Two companies the client already has: their rows (companyId column) come last, after the limit is hit.
    const existing: string[] = [];
    for (const name of ['Existing One', 'Existing Two']) {
      const company = await stack.api.call('POST', '/companies', { apiKey, body: { name } });
      expect(company.status, company.text).toBe(200);
      existing.push(company.body.id);
    }
    const tenants = await makeTenants(stack.sandboxUrl, 60, { seed: 8000 });
    const header = 'companyName,companyId,externalId,platformKey,accessToken,refreshToken,tenantId';
    const rows = tenants.map((t, i) => {
      const companyId = i >= 58 ? existing[i - 58]! : '';
      return [i >= 58 ? '' : t.name, companyId, t.id, 'gbol', t.tokens.accessToken, t.tokens.refreshToken, t.tokens.tenantId].join(',');
    });
    const input = writeCsv(stack.dir, 'free.csv', `${[header, ...rows].join('\n')}\n`);

    // Dry run: 58 to create, 48 allowed.
    const dry = await ferry([...stack.target(freeKey), 'migrate', 'tokens', input, '--dry-run']);
    expect(dry.code, dry.stderr).toBe(5);
    expect(dry.stderr).toContain('58 companies would be created, 2 already exist');
    expect(dry.stderr).toContain('The Free plan allows 48 more companies: 10 rows would fail at the company step.');
    expect(dry.stderr).toContain('hint: Upgrade the plan, or migrate those rows into existing companies (companyId column).');
    const dryJson = await ferry([...stack.target(freeKey), '--json', 'migrate', 'tokens', input, '--dry-run']);
    expect(dryJson.code).toBe(5);
    expect(JSON.parse(dryJson.stdout)).toMatchObject({ dryRun: true, planLimitHit: true, dryRunReport: { existing: 2, toCreate: 58, plan: 'Free', headroom: 48 } });
    // A shard that fits: enough, exit 0.
    const fits = await ferry([...stack.target(freeKey), 'migrate', 'tokens', input, '--dry-run', '--shard', '1/6', '--results', `${input}.fits.csv`]);
    expect(fits.code, fits.stderr).toBe(0);
    expect(fits.stderr).toContain('The Free plan allows 48 more companies: enough.');
    expect((await allCompanies(stack.api, apiKey)).length).toBe(2);

    const run = await ferry([...stack.target(freeKey), 'migrate', 'tokens', input, '--yes']);
    expect(run.code, run.stderr).toBe(5);
    expect(run.stderr).toMatch(/Migrated 50 · skipped 0 · failed 10 \(company 10\)/);
    expect(run.stderr).toContain('error: The plan\'s company limit stopped some rows.');
    const results = [...byRow(readResults(`${input}.results.csv`)).values()];
    expect(results.length).toBe(60);
    const failed = results.filter((r) => r.status === 'failed');
    expect(failed.length).toBe(10);
    // Rows the service refused carry its answer and correlation id; rows after the first
    // refusal are not sent at all, and say which row hit the limit (no correlation id).
    const refused = failed.filter((r) => r.error.includes('CompanyValidationException'));
    expect(refused.length).toBeGreaterThan(0);
    for (const row of failed) {
      expect(row, `row ${row.row}`).toMatchObject({ step: 'company', httpStatus: '402', companyId: '', connectionId: '' });
      if (refused.includes(row)) {
        expect(row.error).toContain('CompanyValidationException: Company limit exceeded');
        expect(row.error).toContain('the plan\'s company limit is reached; rows with existing companies go on');
        expect(row.correlationId).not.toBe('');
      } else {
        expect(row.error).toMatch(/The plan's company limit was reached at row \d+/);
        expect(row.correlationId).toBe('');
      }
    }
    const withCompanyId = results.filter((r) => Number(r.row) >= 60).sort((a, b) => Number(a.row) - Number(b.row));
    expect(withCompanyId.map((r) => [r.status, r.companyId])).toEqual([['migrated', existing[0]], ['migrated', existing[1]]]);
    expect(results.filter((r) => r.status === 'migrated').length).toBe(50);

    const companies = await allCompanies(stack.api, apiKey);
    expect(companies.length).toBe(50);
    expect(companies.filter((c) => c.dataConnections.length === 1 && c.dataConnections[0].status === 'Linked').length).toBe(50);
  }, 90_000);
});

describe('migrate tokens: shards and --fail-fast', () => {
  it('two shards of one file in parallel: every row exactly once, no overlap, separate results', async () => {
    stack = await startTestStack('serve');
    const tenants = await makeTenants(stack.sandboxUrl, 100, { seed: 9000 });
    const input = writeCsv(stack.dir, 'tokens.csv', tokensCsv(tenants));
    const [one, two] = await Promise.all([1, 2].map((i) => ferry([...stack!.target(), 'migrate', 'tokens', input, '--yes', '--no-sync', '--shard', `${i}/2`])));
    expect(one!.code, one!.stderr).toBe(0);
    expect(two!.code, two!.stderr).toBe(0);
    for (const run of [one!, two!]) expect(run.stderr).toMatch(/Migrated 50 · skipped 0 · failed 0/);

    const first = byRow(readResults(`${input}.shard-1-of-2.results.csv`));
    const second = byRow(readResults(`${input}.shard-2-of-2.results.csv`));
    expect(one!.stdout.trim()).toBe(`${input}.shard-1-of-2.results.csv`);
    // Shard 1 takes the 1st, 3rd, 5th … row; shard 2 the others.
    expect([...first.keys()].sort((a, b) => a - b)).toEqual(tenants.map((_, i) => i + 2).filter((row) => row % 2 === 0));
    expect([...second.keys()].sort((a, b) => a - b)).toEqual(tenants.map((_, i) => i + 2).filter((row) => row % 2 === 1));
    expect([...first.values(), ...second.values()].every((r) => r.status === 'migrated')).toBe(true);
    expect(readFileSync(`${input}.shard-1-of-2.results.csv.journal`, 'utf8')).toContain('"shard":"1/2"');
    await expectMigratedOnce(stack.api, extKeys(tenants));
  }, 60_000);

  it('--fail-fast stops after the first failed row (exit 3); a rerun goes on from there', async () => {
    stack = await startTestStack('serve');
    const tenants = await makeTenants(stack.sandboxUrl, 20, { seed: 10_000 });
    // Row 6's access token is one the platform never issued: authorize fails with 400.
    tenants[4]!.tokens.accessToken = 'at_never_issued_by_the_platform';
    const input = writeCsv(stack.dir, 'tokens.csv', tokensCsv(tenants));
    const results = `${input}.results.csv`;
    const run = await ferry([...stack.target(), 'migrate', 'tokens', input, '--yes', '--fail-fast', '--concurrency', '1']);
    expect(run.code, run.stderr).toBe(3);
    expect(run.stderr).toMatch(/Migrated 4 · skipped 0 · failed 1 \(authorize 1\)/);
    expect(run.stderr).toContain(`error: 1 row failed; see ${results}.`);
    const rows = byRow(readResults(results));
    expect([...rows.keys()].sort((a, b) => a - b)).toEqual([2, 3, 4, 5, 6]);
    expect(rows.get(6)).toMatchObject({ status: 'failed', step: 'authorize', httpStatus: '400' });
    expect(rows.get(6)!.companyId).not.toBe('');
    expect(rows.get(6)!.connectionId).not.toBe('');
    expect(rows.get(6)!.error).not.toContain('at_never_issued_by_the_platform');

    // The rerun, without --fail-fast, skips the rows done, tries the failed row 6 again (its
    // tokens are still bad, so it fails again) and does the rest.
    const rerun = await ferry([...stack.target(), 'migrate', 'tokens', input, '--yes']);
    expect(rerun.code, rerun.stderr).toBe(3);
    expect(rerun.stderr).toContain('4 done by earlier runs · 1 retried');
    expect(rerun.stderr).toMatch(/Migrated 15 · skipped 0 · failed 1 \(authorize 1\)/);
    const all = byRow(readResults(results));
    expect(all.size).toBe(20);
    expect([...all.values()].filter((r) => r.status !== 'migrated').map((r) => r.row)).toEqual(['6']);
    // The connection of the failed row is left PendingAuth (it was never Linked); the others are Linked.
    const companies = await allCompanies(stack.api);
    expect(companies.length).toBe(20);
    expect(companies.filter((c) => c.dataConnections[0]?.status === 'PendingAuth').map((c) => c.tags.ferryKey)).toEqual([`ext:${tenants[4]!.id}`]);
  }, 60_000);
});
