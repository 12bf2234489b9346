// `ferry migrate tokens` refusing a file that is wrong as a whole, as the real binary
// prints it: one error about the header (not one per row), a hint for a file written with
// another delimiter, an empty file called empty and a binary one called binary. Each is
// exit 2 (a bad input file), says nothing was written, and leaves no results file.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runFerry } from '../helpers/cli.js';
import { type ServeHandle, startTestStack } from '../helpers/stack.js';
import { stopCleanly } from './support.js';

const H = ['companyName', 'externalId', 'platformKey', 'accessToken', 'refreshToken', 'tenantId'];
const rows = (count: number, delimiter = ',') => Array.from({ length: count }, (_, i) => [`Co ${i}`, `e${i}`, 'gbol', 'a', 'r', 't'].join(delimiter));
const csv = (header: string[], body: string[], delimiter = ',') => `${[header.join(delimiter), ...body].join('\n')}\n`;

/** Bytes that look like nothing: a fixed pseudo-random sequence, so a failure can be replayed. */
function noise(length: number, seed: number): Buffer {
  const bytes = Buffer.alloc(length);
  let state = seed;
  for (let i = 0; i < length; i++) {
    state = (state * 1103515245 + 12345) >>> 0;
    bytes[i] = state >>> 24;
  }
  return bytes;
}

let stack: ServeHandle;

beforeAll(async () => {
  stack = await startTestStack('serve');
});

afterAll(async () => {
  await stopCleanly(stack);
});

async function migrate(name: string, content: string | Buffer, ...args: string[]) {
  const input = join(stack.dir, name);
  writeFileSync(input, content);
  const run = await runFerry([...stack.target(), 'migrate', 'tokens', input, '--yes', ...args]);
  expect(run.code, run.stderr).toBe(2);
  expect(run.stdout).toBe('');
  // Refused before any write: no results, no journal, and the progress line says so.
  expect(existsSync(`${input}.results.csv`)).toBe(false);
  expect(existsSync(`${input}.results.csv.journal`)).toBe(false);
  expect(run.stderr).toContain('Nothing was written.');
  expect(run.stderr).not.toContain('Stopped.');
  expect(run.stderr.match(/^error: /gm)).toHaveLength(1);
  return run.stderr;
}

describe('migrate tokens: a file wrong as a whole is one error, exit 2', () => {
  it('a misspelt column in a header of 3,000 rows is one error with "did you mean", and creates nothing', async () => {
    const before = (await stack.api.call('GET', '/companies?pageSize=1')).body as { totalResults: number };
    const header = H.map((c) => (c === 'refreshToken' ? 'refresh_tok' : c));
    const stderr = await migrate('misspelt.csv', csv(header, rows(3000)));
    expect(stderr).toContain('error: The header has a column ferry does not know: refresh_tok (did you mean refreshToken?).');
    expect(stderr).not.toMatch(/row \d+/);
    expect(stderr).not.toContain('not valid');
    const after = (await stack.api.call('GET', '/companies?pageSize=1')).body as { totalResults: number };
    expect(after.totalResults).toBe(before.totalResults);
  });

  it('every unknown column is named; one with no near column gets no guess', async () => {
    const stderr = await migrate('two-unknown.csv', csv([...H, 'acess_token2', 'colour'], rows(2).map((r) => `${r},x,y`)));
    expect(stderr).toContain('error: The header has 2 columns ferry does not know: acess_token2 (did you mean accessToken?), colour.');
    expect(stderr).toContain('hint: Rename or remove it');
  });

  it('a file without a header line is told so, and its first row (tokens) is never repeated', async () => {
    const first = ['Acme Ltd', 'e1', 'gbol', 'at_first_row_secret_123', 'rt_first_row_secret_456', 'tenant-1'].join(',');
    const stderr = await migrate('no-header.csv', `${first}\n${rows(2).join('\n')}\n`);
    expect(stderr).toContain('error: The first line is not a header: none of its 6 cells is a column ferry knows');
    expect(stderr).toContain('hint: Add a header line');
    for (const cell of ['at_first_row_secret_123', 'rt_first_row_secret_456', 'Acme Ltd', 'tenant-1']) expect(stderr).not.toContain(cell);
  });

  it('a ";"-delimited file gets the --delimiter hint, and so does a tab-delimited one', async () => {
    const semi = await migrate('semicolons.csv', csv(H, rows(3, ';'), ';'));
    expect(semi).toContain('error: The header is one column holding 6 names: the file looks ";"-delimited.');
    expect(semi).toContain("hint: Give --delimiter ';'.");
    const tabs = await migrate('tabs.csv', csv(H, rows(3, '\t'), '\t'));
    expect(tabs).toContain('the file looks tab-delimited.');
    expect(tabs).toContain('hint: Give --delimiter tab.');
  });

  it('an empty file says it is empty', async () => {
    for (const [name, content] of [['empty.csv', ''], ['blank-lines.csv', '\n\n\r\n']] as const) {
      const stderr = await migrate(name, content);
      expect(stderr).toContain('error: The file is empty: it needs a header row and at least one row.');
      expect(stderr).toContain('hint: ferry templates show KEY prints the header');
    }
  });

  it('a binary file is called binary, not blamed on Latin-1, in either encoding', async () => {
    // A spreadsheet saved as .xlsx is a zip: "PK\3\4…".
    const xlsx = Buffer.concat([Buffer.from('PK\x03\x04\x14\x00\x06\x00', 'latin1'), noise(4000, 1)]);
    for (const encoding of ['utf8', 'latin1']) {
      const stderr = await migrate(`sheet-${encoding}.xlsx`, xlsx, '--encoding', encoding);
      expect(stderr).toContain('error: The file is binary, not a CSV (byte 0x03 at offset 2 of its first line)');
      expect(stderr).toContain('hint: Save it as CSV (UTF-8)');
      expect(stderr).not.toContain('Latin-1');
    }
    // A text first line, then noise with NUL bytes: still binary, not Latin-1.
    const tail = await migrate('tail.csv', Buffer.concat([Buffer.from(`${H.join(',')}\n`), Buffer.alloc(8), noise(4000, 2)]));
    expect(tail).toContain('error: The file is binary, not a CSV (NUL bytes, then a byte that is not UTF-8');
    expect(tail).not.toContain('Latin-1');
  });
});
