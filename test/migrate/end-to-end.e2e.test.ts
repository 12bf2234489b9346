// `ferry migrate tokens` end to end: 2,000 sandbox tenants migrated by the real binary
// against a `ferry serve` child, then rerun (journal: nothing to do), rerun elsewhere (no
// journal: every row found by its ferryKey and skipped) and --no-sync. The tests of this
// file run in order and share the service. Reading the CSV from stdin runs in this process
// in stdin.test.ts.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runFerry } from '../helpers/cli.js';
import type { Tenant } from '../helpers/sync.js';
import {
  allCompanies, byRow, expectMigratedOnce, extKeys, leakedSecrets, makeTenants, readResults, secretsOf, stopCleanly, tokensCsv, UUID, writeCsv,
} from './support.js';
import { type ServeProcess, startTestStack } from '../helpers/stack.js';

const ROWS = 2000;

let stack: ServeProcess;
let tenants: Tenant[];
let input: string;
let results: string;
let firstResults: string;

beforeAll(async () => {
  stack = await startTestStack('process');
  tenants = await makeTenants(stack.sandboxUrl, ROWS, { seed: 1 });
  expect(new Set(tenants.map((t) => t.id)).size).toBe(ROWS);
  input = writeCsv(stack.dir, 'tokens.csv', tokensCsv(tenants));
  results = `${input}.results.csv`;
}, 60_000);

afterAll(async () => {
  await stopCleanly(stack);
});

async function dataStatus(companyId: string): Promise<Record<string, { currentStatus: string }>> {
  const status = await stack.api.call('GET', `/companies/${companyId}/dataStatus`);
  expect(status.status, status.text).toBe(200);
  return status.body;
}

describe('migrate tokens: 2,000 rows end to end against ferry serve', () => {
  it('migrates every row once: tagged companies, Linked connections, syncs queued, no token anywhere', async () => {
    const run = await runFerry([...stack.target(), 'migrate', 'tokens', input, '--yes'], { timeoutMs: 150_000 });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe(`${results}\n`);
    expect(run.stderr).toMatch(/Migrated 2,000 · skipped 0 · failed 0 in [\d.]+s/);
    expect(run.stderr).toContain(`Results: ${results}`);
    expect(run.stderr).toContain(`Next: ferry ${stack.target().join(' ')} sync --from-results ${results} --wait`);

    const rows = byRow(readResults(results));
    expect(rows.size).toBe(ROWS);
    firstResults = readFileSync(results, 'utf8');
    const companies = await expectMigratedOnce(stack.api, extKeys(tenants));
    tenants.forEach((tenant, i) => {
      const row = rows.get(i + 2)!;
      expect(row, `row ${i + 2}`).toMatchObject({ externalId: tenant.id, platformKey: 'gbol', status: 'migrated', step: '', httpStatus: '', error: '' });
      const company = companies.get(`ext:${tenant.id}`);
      expect(row.companyId).toBe(company.id);
      expect(row.connectionId).toBe(company.dataConnections[0].id);
      expect(row.companyId).toMatch(UUID);
    });

    // Syncs were queued (a sample; the worker is running them meanwhile).
    for (const i of [0, 1, 999, 1000, ROWS - 1]) {
      const status = await dataStatus(rows.get(i + 2)!.companyId);
      expect(Object.keys(status).length, `dataStatus of row ${i + 2}`).toBeGreaterThan(0);
    }

    const journal = readFileSync(`${results}.journal`, 'utf8');
    expect(leakedSecrets(firstResults + journal + run.stdout + run.stderr, secretsOf(tenants))).toEqual([]);
  }, 180_000);

  it('rerunning the same command finds every row done by earlier runs and creates nothing', async () => {
    const run = await runFerry([...stack.target(), 'migrate', 'tokens', input, '--yes'], { timeoutMs: 60_000 });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(`Resuming from ${results}.journal`);
    expect(run.stderr).toMatch(/Migrated 0 · skipped 0 · failed 0 · 2,000 done by earlier runs/);
    expect(readFileSync(results, 'utf8')).toBe(firstResults);
    expect((await allCompanies(stack.api)).length).toBe(ROWS);
    expect(leakedSecrets(run.stdout + run.stderr, secretsOf(tenants))).toEqual([]);
  }, 60_000);

  it('another --results (no journal, like another machine) skips every row and duplicates nothing; --json', async () => {
    const other = join(stack.dir, 'other.csv');
    const run = await runFerry([...stack.target(), '--json', 'migrate', 'tokens', input, '--yes', '--results', other], { timeoutMs: 60_000 });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toBe('');
    const summary = JSON.parse(run.stdout);
    expect(Object.keys(summary).sort()).toEqual([
      'concurrency', 'dryRun', 'failed', 'failedBySteps', 'input', 'journal', 'migrated', 'next', 'planLimitHit', 'rate', 'results', 'resumed', 'retried', 'rowsPerSecond', 'seconds', 'skipped', 'total', 'validation',
    ]);
    expect(summary.concurrency).toEqual({ final: expect.any(Number), peak: expect.any(Number) });
    expect(summary).toMatchObject({
      dryRun: false, input, results: other, journal: `${other}.journal`, total: ROWS, migrated: 0, skipped: ROWS, failed: 0, failedBySteps: {}, resumed: 0,
      planLimitHit: false, validation: { rows: ROWS, valid: ROWS, invalid: 0, inShard: ROWS, problems: [] }, next: `ferry ${stack.target().join(' ')} sync --from-results ${other} --wait`,
    });
    expect(summary.seconds).toBeGreaterThan(0);
    expect(summary.rowsPerSecond).toBeGreaterThan(0);

    const first = byRow(readResults(results));
    const again = byRow(readResults(other));
    expect(again.size).toBe(ROWS);
    for (const [row, result] of again) {
      expect(result.status, `row ${row}`).toBe('skipped');
      expect(result.companyId).toBe(first.get(row)!.companyId);
      expect(result.connectionId).toBe(first.get(row)!.connectionId);
    }
    await expectMigratedOnce(stack.api, extKeys(tenants));
    const written = readFileSync(other, 'utf8') + readFileSync(`${other}.journal`, 'utf8');
    expect(leakedSecrets(written + run.stdout + run.stderr, secretsOf(tenants))).toEqual([]);
  }, 60_000);

  it('--no-sync migrates without queueing a pull', async () => {
    const few = await makeTenants(stack.sandboxUrl, 10, { seed: 50_000 });
    const file = writeCsv(stack.dir, 'no-sync.csv', tokensCsv(few));
    const run = await runFerry([...stack.target(), 'migrate', 'tokens', file, '--yes', '--no-sync'], { timeoutMs: 60_000 });
    expect(run.code, run.stderr).toBe(0);
    const rows = [...byRow(readResults(`${file}.results.csv`)).values()];
    expect(rows.map((r) => r.status)).toEqual(Array(10).fill('migrated'));
    for (const row of rows) {
      expect(await dataStatus(row.companyId), `dataStatus of row ${row.row}`).toEqual({});
      const history = await stack.api.call('GET', `/companies/${row.companyId}/data/history`);
      expect(history.body.totalResults).toBe(0);
    }
  }, 60_000);
});
