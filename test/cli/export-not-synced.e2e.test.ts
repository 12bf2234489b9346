// `ferry export --all-companies` when some companies' data set is not synced yet, with the
// real CLI against a `ferry serve`: one summary line (not a line per company), their ids in
// OUT.not-synced.csv, and a hint whose command, pasted into a shell, syncs exactly them so
// the export then succeeds.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { printedAfter, runFerry, runPrinted } from '../helpers/cli.js';
import { type ServeHandle, startTestStack } from '../helpers/stack.js';
import { byRow, makeTenants, readResults, stopCleanly, tokensCsv, writeCsv } from '../migrate/support.js';

let stack: ServeHandle;

beforeAll(async () => {
  stack = await startTestStack('serve');
});

afterAll(async () => {
  await stopCleanly(stack);
});

describe('export --all-companies with companies not synced', () => {
  it('sums them up in one line, lists them in a file, and prints a sync command that runs as printed', async () => {
    const tenants = await makeTenants(stack.sandboxUrl, 3, { seed: 73_000, invoices: 4 });
    const input = writeCsv(stack.dir, 'few.csv', tokensCsv(tenants));
    const migrated = await runFerry([...stack.target(), 'migrate', 'tokens', input, '--no-sync', '--yes']);
    expect(migrated.code, migrated.stderr).toBe(0);
    const ids = [...byRow(readResults(`${input}.results.csv`)).values()].map((r) => r.companyId).sort();

    const out = join(stack.dir, 'invoices.ndjson');
    const first = await runFerry([...stack.target(), 'export', 'invoices', '--all-companies', '--out', out]);
    expect(first.code, first.stderr).toBe(3);
    const listPath = `${out}.not-synced.csv`;
    expect(first.stderr).toContain(`3 companies were skipped because the invoices data set is not synced yet (their ids: ${listPath})`);
    for (const id of ids) expect(first.stderr).not.toContain(id);
    const listed = parse(readFileSync(listPath, 'utf8'), { columns: true }) as Array<{ companyId: string; reason: string }>;
    expect(listed.map((r) => r.companyId).sort()).toEqual(ids);
    expect(new Set(listed.map((r) => r.reason))).toEqual(new Set(['notSynced']));

    // In --json too, no skipped company's words name a command without the target's flags: the one command is the hint's.
    const json = await runFerry([...stack.target(), '--json', 'export', 'invoices', '--all-companies', '--out', join(stack.dir, 'json.ndjson')]);
    expect(json.code, json.stderr).toBe(3);
    const sayings = `${json.stdout}\n${json.stderr}`;
    expect(sayings).toContain('--from-results');
    for (const line of sayings.split('ferry ').slice(1)) {
      if (line.startsWith('sync')) for (const flag of stack.target()) expect(line).toContain(flag);
    }

    const hint = printedAfter(first.stderr, 'then export again:');
    expect(hint).toContain('--from-results');
    expect(hint).not.toContain('…');
    const synced = await runPrinted(hint, { timeoutMs: 90_000 });
    expect(synced.code, synced.stderr).toBe(0);

    const again = await runFerry([...stack.target(), 'export', 'invoices', '--all-companies', '--out', out, '--force']);
    expect(again.code, again.stderr).toBe(0);
    expect(readFileSync(out, 'utf8').trim().split('\n')).toHaveLength(12);
  }, 120_000);
});
