// `ferry migrate tokens FILE --retry-failed`, with the real CLI against a `ferry serve`:
// after a run with a bad row, the user fixes the row in the file; rerunning the same
// command is refused (the input changed) with a hint naming --retry-failed, and the
// command ferry prints runs only the rows not migrated, merging their outcome into the
// same results file.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { printedAfter, runFerry, runPrinted } from '../helpers/cli.js';
import { type ServeHandle, startTestStack } from '../helpers/stack.js';
import { byRow, makeTenants, readResults, stopCleanly, tokensCsv, writeCsv } from './support.js';

let stack: ServeHandle;

beforeAll(async () => {
  stack = await startTestStack('serve');
});

afterAll(async () => {
  await stopCleanly(stack);
});

describe('migrate tokens --retry-failed', () => {
  it('reruns only the fixed row of an edited file and merges it into the same results', async () => {
    const tenants = await makeTenants(stack.sandboxUrl, 4, { seed: 71_000 });
    const good = tokensCsv(tenants);
    // Row 3 (the second tenant) lost its refresh token on the way into the file.
    const broken = good.replace(tenants[1]!.tokens.refreshToken!, '');
    const file = writeCsv(stack.dir, 'p.csv', broken);
    const results = join(stack.dir, 'p.csv.results.csv');

    const first = await runFerry([...stack.target(), 'migrate', 'tokens', file, '--yes']);
    expect(first.code, first.stderr).toBe(3);
    const before = byRow(readResults(results));
    expect([...before.values()].map((r) => r.status)).toEqual(['migrated', 'failed', 'migrated', 'migrated']);
    expect(before.get(3)!.step).toBe('validate');

    writeFileSync(file, good);
    const same = await runFerry([...stack.target(), 'migrate', 'tokens', file, '--yes']);
    expect(same.code, same.stderr).toBe(2);
    expect(same.stderr).toContain('--retry-failed');
    expect(same.stderr).not.toContain('Stopped.');

    // The command the first run printed for this case, pasted into a shell as it is.
    const printed = printedAfter(first.stderr, 'Then:');
    expect(printed).toContain('--retry-failed');
    const retry = await runPrinted(printed);
    expect(retry.code, retry.stderr).toBe(0);
    expect(retry.stderr).toContain('3 done by earlier runs');
    expect(retry.stderr).toContain('1 retried');
    const after = byRow(readResults(results));
    expect([...after.values()].map((r) => r.status)).toEqual(['migrated', 'migrated', 'migrated', 'migrated']);
    for (const row of [2, 4, 5]) expect(after.get(row)!.companyId).toBe(before.get(row)!.companyId);
    expect(after.get(3)!.externalId).toBe(tenants[1]!.id);

    // Nothing left to retry: the journal now holds the edited file, so a plain rerun resumes.
    const again = await runFerry([...stack.target(), 'migrate', 'tokens', file, '--yes']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain('4 done by earlier runs');
    expect(readFileSync(results, 'utf8').trim().split('\n')).toHaveLength(5);
  }, 120_000);

  it('refuses --retry-failed with nothing to retry, and with --dry-run', async () => {
    const file = writeCsv(stack.dir, 'none.csv', tokensCsv(await makeTenants(stack.sandboxUrl, 1, { seed: 72_000 })));
    const nothing = await runFerry([...stack.target(), 'migrate', 'tokens', file, '--retry-failed', '--yes']);
    expect(nothing.code, nothing.stderr).toBe(2);
    expect(nothing.stderr).toContain('Nothing to retry');
    const dry = await runFerry([...stack.target(), 'migrate', 'tokens', file, '--retry-failed', '--dry-run']);
    expect(dry.code, dry.stderr).toBe(2);
    expect(dry.stderr).toContain('--retry-failed and --dry-run');
  }, 60_000);
});
