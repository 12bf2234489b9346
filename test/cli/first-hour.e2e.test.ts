// The smaller edges a new user met in the first hour, as the real binary shows them: the
// README's way to get ferry on PATH, counts as 1,200 in text and plain in --json (and a
// count of one with its noun in the singular), -q leaving only the errors and the result,
// one name (baseUrl) in the listening lines of serve and sandbox serve, check --json's hint
// pointing at the JSON, and export --format csv taking its columns from the data type's
// schema, not from its first records.
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, runFerry } from '../helpers/cli.js';
import { startFerry } from '../helpers/processes.js';
import { tempDir } from '../helpers/service.js';

let dir: string;
let dataDir: string;
let clientId: string;

beforeAll(async () => {
  dir = tempDir('ferry-first-hour-');
  dataDir = join(dir, 'data');
  const demo = await runFerry(['demo', '--data-dir', dataDir, '--companies', '4', '--invoices', '30', '--json'], { timeoutMs: 120_000 });
  expect(demo.code, demo.stderr).toBe(0);
  const { next } = JSON.parse(demo.stdout) as { next: string[] };
  clientId = /--client (\S+)/.exec(next[0]!)![1]!;
}, 150_000);

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

const asClient = (...args: string[]) => runFerry(['--data-dir', dataDir, '--client', clientId, ...args]);

/** A CSV whose every row lacks its company name: every row is a problem. */
function invalidRows(count: number): string {
  const path = join(dir, `invalid-${count}.csv`);
  const rows = Array.from({ length: count }, (_, i) => `,e${i},gbol,a,r,t`);
  writeFileSync(path, `companyName,externalId,platformKey,accessToken,refreshToken,tenantId\n${rows.join('\n')}\n`);
  return path;
}

describe('counts', () => {
  it('print as 1,200 in text and as plain numbers in --json', async () => {
    const input = invalidRows(1200);
    const text = await asClient('migrate', 'tokens', input, '--dry-run');
    expect(text.code).toBe(3);
    expect(text.stderr).toContain('1,200 of 1,200 rows are not valid (the first 50 below; all in the results file):');
    expect(text.stderr).toContain('Dry run: 0 valid rows of 1,200; nothing was written.');
    expect(text.stderr).toContain('error: 1,200 rows not valid;');
    const json = await asClient('--json', 'migrate', 'tokens', input, '--dry-run');
    expect(json.code).toBe(3);
    expect((JSON.parse(json.stdout) as { validation: { rows: unknown; invalid: unknown } }).validation).toMatchObject({ rows: 1200, invalid: 1200 });
  });
});

describe('a count of one', () => {
  it('says its noun in the singular: the template\'s one example row, dry run', async () => {
    const template = join(dir, 'template.csv');
    const shown = await runFerry(['templates', 'show', 'gbol']);
    writeFileSync(template, shown.stdout);
    const dry = await asClient('migrate', 'tokens', template, '--dry-run');
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stderr).toContain('Dry run: 1 valid row of 1; nothing was written.');
    expect(dry.stderr).toContain('  1 company would be created, 0 already exist (their rows would be resumed or skipped).');
  });
});

describe('the README', () => {
  it('says how to get ferry on PATH, and its alias line gives a ferry that runs', async () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const section = /^### `ferry` on your PATH\n([\s\S]*?)^#/m.exec(readme)?.[1] ?? '';
    expect(section).toContain('npm link');
    const alias = section.split('\n').find((l) => l.startsWith('alias ferry='))!.replace(/\s+#.*$/, '');
    // From the clone's root, as the README says; the alias takes effect on the lines after it.
    const root = fileURLToPath(new URL('../..', import.meta.url));
    // A shell with no ferry on its PATH: the alias alone must give one.
    const run = spawnSync('/bin/sh', ['-c', `${alias}\ntype ferry\nferry --version\nferry templates list`], { cwd: root, env: cleanEnv(), encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    const [type, version] = run.stdout.split('\n');
    expect(type).toMatch(/alias/);
    expect(version).toBe((JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version);
    expect(run.stdout).toContain('gbol');
  });
});

describe('-q', () => {
  it('leaves only the errors and the result: the summary lines are silenced', async () => {
    const input = invalidRows(3);
    const quiet = await asClient('-q', 'migrate', 'tokens', input, '--dry-run');
    expect(quiet.code).toBe(3);
    expect(quiet.stdout.trim()).toBe(`${input}.dry-run.results.csv`);
    const lines = quiet.stderr.trimEnd().split('\n');
    expect(lines).toEqual([
      '3 of 3 rows are not valid:',
      '  row 2, companyName: companyName is required (or companyId of an existing company)',
      '  row 3, companyName: companyName is required (or companyId of an existing company)',
      '  row 4, companyName: companyName is required (or companyId of an existing company)',
      `error: 3 rows not valid; see ${input}.dry-run.results.csv.`,
    ]);
  });
});

describe('export --format csv', () => {
  it('takes its columns from the data type\'s schema: a field the first records lack is a column, not _extra', async () => {
    const all = join(dir, 'invoices.csv');
    const run = await asClient('export', 'invoices', '--all-companies', '--format', 'csv', '--out', all);
    expect(run.code, run.stderr).toBe(0);
    const [header, ...rows] = parse(readFileSync(all, 'utf8')) as string[][];
    expect(header).toEqual(expect.arrayContaining(['companyId', 'currencyRate', 'paidOnDate', 'customerRef.id', '_extra']));
    expect(header!.at(-1)).toBe('_extra');
    expect(rows).toHaveLength(120);
    const at = (row: string[], column: string) => row[header!.indexOf(column)];
    expect(rows.filter((r) => at(r, '_extra') !== '')).toEqual([]);
    // The demo's data is random: take a company whose first record lacks one of the
    // fields (else this test could not fail). A first record holds both 5% of the time,
    // so one that lacks one is there unless all four companies' do.
    const optional = ['currencyRate', 'paidOnDate'];
    const firstOf = new Map<string, string[]>();
    for (const row of rows) if (!firstOf.has(at(row, 'companyId')!)) firstOf.set(at(row, 'companyId')!, row);
    const [companyId, first] = [...firstOf].find(([, row]) => optional.some((c) => at(row, c) === ''))!;
    const lacking = optional.filter((c) => at(first, c) === '');
    // One record a page, that company alone: the old header came from the first page alone.
    const out = join(dir, 'invoices-one.csv');
    const one = await asClient('export', 'invoices', '--company', companyId, '--format', 'csv', '--page-size', '1', '--out', out);
    expect(one.code, one.stderr).toBe(0);
    const [oneHeader, ...oneRows] = parse(readFileSync(out, 'utf8')) as string[][];
    const atOne = (row: string[], column: string) => row[oneHeader!.indexOf(column)];
    expect(oneRows[0]![oneHeader!.indexOf('id')]).toBe(at(first, 'id'));
    expect(oneHeader).toEqual(expect.arrayContaining(lacking));
    expect(oneHeader!.at(-1)).toBe('_extra');
    expect(oneRows.filter((r) => atOne(r, '_extra') !== '')).toEqual([]);
    for (const column of lacking) expect(atOne(oneRows[0]!, column)).toBe('');
  }, 60_000);
});

// After the export: its company has no data, which would make the export skip it (exit 3).
describe('check --json', () => {
  it('points at the evidence in the JSON, not "above"', async () => {
    const created = await asClient('companies', 'create', '--name', 'Nothing Migrated Ltd');
    expect(created.code, created.stderr).toBe(0);
    const check = await asClient('--json', 'check', created.stdout.trim(), '--no-sync');
    expect(check.code).toBe(3);
    const { error } = JSON.parse(check.stderr.trim().split('\n').at(-1)!) as { error: { hint: string } };
    expect(error.hint).toBe('Each criterion\'s evidence is in the JSON on stdout: results[].criteria[].evidence.');
    expect(JSON.parse(check.stdout).results[0].criteria[0].evidence).toBeDefined();
  });
});

describe('serve --json and sandbox serve --json', () => {
  it('name their address the same: baseUrl', async () => {
    const serve = await startFerry(['serve', '--port', '0', '--data-dir', join(dir, 'serve-data')]);
    const sandbox = await startFerry(['sandbox', 'serve', '--port', '0', '--data-dir', join(dir, 'sandbox-data')]);
    try {
      for (const ready of [serve.ready, sandbox.ready]) {
        expect(ready).toMatchObject({ event: 'listening', baseUrl: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/) });
      }
      expect(sandbox.ready).not.toHaveProperty('url');
    } finally {
      await serve.stop();
      await sandbox.stop();
    }
  }, 60_000);
});
