// `ferry export` in-process against a real service and sandbox (startHarness): csv and
// json compared with the service, stdout, 409/404 messages and exit codes, Ctrl-C
// (AbortSignal) and --resume across a resync, and --state exporting only what changed.
// The 50,000-invoice round trip, its Ctrl-C and --resume, and --all-companies over it are
// in export.e2e.test.ts.
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ferry } from '../helpers/in-process.js';
import { linkedCompany, readAll, waitFor, type Linked } from '../helpers/sync.js';
import type { Harness } from '../helpers/stack.js';
import { exportCompanies, lines, SMALL, startExportHarness } from './export-support.js';

/** The expected CSV cell of a record at a dotted path (undefined/null → empty, arrays as JSON). */
function cell(record: any, path: string): string {
  let value = record;
  for (const key of path.split('.')) value = value?.[key];
  if (value === undefined || value === null) return '';
  if (Array.isArray(value)) return JSON.stringify(value);
  return String(value);
}

async function queueAndDrain(h: Harness, companyId: string, dataType: string): Promise<void> {
  const queued = await h.api.call('POST', `/companies/${companyId}/data/queue/${dataType}`);
  expect(queued.status, queued.text).toBe(200);
  await h.drain();
  const status = await h.api.call('GET', `/companies/${companyId}/dataStatus`);
  expect(status.body[dataType].currentStatus).toBe('Complete');
}

describe('ferry export against a real service', () => {
  let h: Harness;
  let remote: string[];
  let work: string;
  let small: Linked;
  let unsynced: Linked;
  let stripe: Linked;
  let smallRecords: any[];

  beforeAll(async () => {
    ({ h, work, remote } = await startExportHarness('ferry-export-'));
    ({ small, unsynced, stripe, smallRecords } = await exportCompanies(h));
  }, 180_000);
  afterAll(async () => {
    await h?.stop();
  });

  it('writes CSV with dotted columns, arrays as JSON, a stable header and _extra last', async () => {
    const out = join(work, 'small.csv');
    const result = await ferry([...remote, 'export', 'invoices', '--company', small.companyId, '--out', out, '--page-size', '120']);
    expect(result.code, result.stderr).toBe(0);
    const rows = parse(readFileSync(out, 'utf8'), { relax_column_count: false }) as string[][];
    const header = rows[0]!;
    expect(header.slice(0, 4)).toEqual(['id', 'invoiceNumber', 'customerRef.id', 'customerRef.companyName']);
    expect(header).toContain('lineItems');
    expect(header).toContain('metadata.isDeleted');
    expect(header.at(-1)).toBe('_extra');
    // Optional fields sit where the record lists them, whichever record had them first.
    expect(header.indexOf('paidOnDate')).toBe(header.indexOf('dueDate') + 1);
    expect(rows).toHaveLength(SMALL + 1);
    rows.slice(1).forEach((row, i) => {
      const record = smallRecords[i];
      header.slice(0, -1).forEach((column, c) => expect(row[c], `${column} of row ${i}`).toBe(cell(record, column)));
      expect(JSON.parse(row[header.indexOf('lineItems')]!)).toEqual(record.lineItems);
      // Every field of the record is in the header (or in _extra).
      const extra = row.at(-1) ? JSON.parse(row.at(-1)!) : {};
      for (const path of leafPaths(record)) expect(header.includes(path) || path in extra, path).toBe(true);
    });
  });

  it('writes one valid JSON document (and an empty array for no records)', async () => {
    const out = join(work, 'small.json');
    const result = await ferry([...remote, 'export', 'invoices', '--company', small.companyId, '--out', out, '--page-size', '77']);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(readFileSync(out, 'utf8'))).toEqual(smallRecords);
    const none = join(work, 'none.json');
    const empty = await ferry([...remote, 'export', 'invoices', '--company', small.companyId, '--out', none, '--query', 'amountDue<0']);
    expect(empty.code, empty.stderr).toBe(0);
    expect(readFileSync(none, 'utf8')).toBe('[]\n');
  });

  it('streams to stdout with --out - or no --out, with --query and --order-by', async () => {
    const plain = await ferry([...remote, 'export', 'invoices', '--company', small.companyId, '--page-size', '50']);
    expect(plain.code, plain.stderr).toBe(0);
    expect(lines(plain.stdout).map((l) => JSON.parse(l))).toEqual(smallRecords);
    const dash = await ferry([...remote, '-q', 'export', 'invoices', '--company', small.companyId, '--out', '-', '--format', 'ndjson',
      '--query', 'status=paid', '--order-by', '-totalAmount']);
    expect(dash.code, dash.stderr).toBe(0);
    expect(dash.stderr).toBe('');
    const expected = await readAll(h.api, small.companyId, 'invoices', { query: 'status=paid' });
    const got = lines(dash.stdout).map((l) => JSON.parse(l));
    expect(got.map((r) => r.id).sort()).toEqual(expected.map((r) => r.id).sort());
    expect(got.every((r) => r.status === 'Paid')).toBe(true);
    const amounts = got.map((r) => r.totalAmount);
    expect(amounts).toEqual([...amounts].sort((a, b) => b - a));
    // csv to stdout
    const csv = await ferry([...remote, 'export', 'invoices', '--company', small.companyId, '--format', 'csv', '--query', 'status=void']);
    expect(csv.code, csv.stderr).toBe(0);
    expect(csv.stdout.split('\n')[0]).toMatch(/^id,invoiceNumber,/);
  });

  it('says a data set is not synced yet (409) and which command to run; exit 1, no file', async () => {
    const out = join(work, 'unsynced.ndjson');
    const result = await ferry([...remote, 'export', 'invoices', '--company', unsynced.companyId, '--out', out]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('HTTP 409');
    // The sync it names reaches this service: the target flags given come with it.
    expect(result.stderr).toContain(`hint: Sync it first: ferry ${remote.join(' ')} sync ${unsynced.companyId} --data-type invoices --wait`);
    expect(readdirSync(work).filter((n) => n.includes('unsynced'))).toEqual([]);
    const json = await ferry([...remote, '--json', 'export', 'invoices', '--company', unsynced.companyId, '--out', out]);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stderr).error).toMatchObject({ exitCode: 1, hint: expect.stringContaining(` sync ${unsynced.companyId} --data-type invoices --wait`) });
  });

  it('says plainly when the platform does not support the data type (404), and an unknown data type', async () => {
    const result = await ferry([...remote, 'export', 'invoices', '--company', stripe.companyId]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('error: Datatype invoices not supported by platform(s) Stripe (HTTP 404)');
    expect(result.stdout).toBe('');
    const unknown = await ferry([...remote, 'export', 'widgets', '--company', small.companyId]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('does not know the data type widgets');
    expect(unknown.stderr).toContain('chartOfAccounts');
  });

  it('exports chartOfAccounts (read at /data/accounts) and company (read at /data/info) by their keys', async () => {
    const accounts = await readAll(h.api, small.companyId, 'accounts');
    expect(accounts.length).toBeGreaterThan(0);
    for (const name of ['chartOfAccounts', 'accounts']) {
      const result = await ferry([...remote, 'export', name, '--company', small.companyId, '--format', 'json']);
      expect(result.code, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout)).toEqual(accounts);
    }
    const info = await ferry([...remote, 'export', 'company', '--company', stripe.companyId]);
    expect(info.code, info.stderr).toBe(0);
    // The service answers company info as one record; the export writes it as a data set of one.
    expect(lines(info.stdout).map((l) => JSON.parse(l))).toEqual([(await h.api.call('GET', `/companies/${stripe.companyId}/data/info`)).body]);
    // Stripe has no chart of accounts: the service's 404 names the data type.
    const unsupported = await ferry([...remote, 'export', 'chartOfAccounts', '--company', stripe.companyId]);
    expect(unsupported.code).toBe(1);
    expect(unsupported.stderr).toContain('Datatype chartOfAccounts not supported by platform(s) Stripe');
  });

  it('on a terminal: the path on stdout, progress and the summary on stderr; --json keeps stdout for the data', async () => {
    const out = join(work, 'tty.ndjson');
    const tty = await ferry([...remote, 'export', 'invoices', '--company', small.companyId, '--out', out], { tty: true });
    expect(tty.code, tty.stderr).toBe(0);
    expect(tty.stdout).toBe(`${out}\n`);
    expect(tty.stderr).toContain(`Exported 300 invoices to ${out} (ndjson)`);
    const json = await ferry([...remote, '--json', 'export', 'invoices', '--company', small.companyId]);
    expect(json.code, json.stderr).toBe(0);
    expect(json.stderr).toBe('');
    expect(lines(json.stdout).map((l) => JSON.parse(l))).toEqual(smallRecords);
    const summary = await ferry([...remote, '--json', 'export', 'invoices', '--company', small.companyId, '--out', join(work, 'summary.csv')]);
    expect(summary.code, summary.stderr).toBe(0);
    expect(JSON.parse(summary.stdout)).toMatchObject({
      dataType: 'invoices', format: 'csv', out: join(work, 'summary.csv'), records: SMALL, resumedRecords: 0, resumed: false,
      companies: { total: 1, exported: 1, skipped: 0 }, skipped: [], extraRows: 0, restarts: 0, state: null,
    });
  });

  it('refuses bad flags with exit 2 and a clear message', async () => {
    const cases: Array<[string[], string]> = [
      [['export', 'invoices'], '--company ID, or --all-companies'],
      [['export', 'invoices', '--company', small.companyId, '--all-companies'], 'not both'],
      [['export', 'invoices', '--company', small.companyId, '--resume'], '--resume needs --out FILE'],
      [['export', 'invoices', '--company', small.companyId, '--page-size', '5001'], '--page-size must be a whole number from 1 to 5000'],
      [['export', 'invoices', '--company', small.companyId, '--page-size', '0'], '--page-size must be'],
      [['export', 'invoices', '--company', small.companyId, '--format', 'xml'], 'Allowed choices are ndjson, csv, json'],
    ];
    for (const [args, says] of cases) {
      const result = await ferry([...remote, ...args]);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr).toContain(says);
    }
    const nowhere = await ferry([...remote, 'export', 'invoices', '--company', small.companyId, '--out', join(work, 'no', 'such', 'dir.ndjson')]);
    expect(nowhere.code).toBe(2);
    expect(nowhere.stderr).toContain('does not exist');
    const existing = join(work, 'exists.ndjson');
    writeFileSync(existing, 'keep me\n');
    const refused = await ferry([...remote, 'export', 'invoices', '--company', small.companyId, '--out', existing]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('already exists');
    expect(readFileSync(existing, 'utf8')).toBe('keep me\n');
    const forced = await ferry([...remote, 'export', 'invoices', '--company', small.companyId, '--out', existing, '--force']);
    expect(forced.code).toBe(0);
    expect(lines(readFileSync(existing, 'utf8'))).toHaveLength(SMALL);
  });

  it('--resume after the data set was resynced starts the company again: no duplicates', async () => {
    const out = join(work, 'resynced.ndjson');
    const part = join(work, '.resynced.ndjson.ferry-part');
    const args = [...remote, 'export', 'invoices', '--company', small.companyId, '--page-size', '20', '--out', out];
    const controller = new AbortController();
    const running = ferry(args, { signal: controller.signal });
    await waitFor('the part file to hold a few pages', async () => existsSync(part) && statSync(part).size > 20_000, 30_000, 1);
    controller.abort('SIGINT');
    expect((await running).code).toBe(130);
    // The stop checkpoints every page written, unless the first page's second read had not
    // yet come back (a busy machine): then nothing past the company's start is claimed.
    const pagesDone = (JSON.parse(readFileSync(`${part}.json`, 'utf8')) as { company: { pagesDone: number } }).company.pagesDone;
    await queueAndDrain(h, small.companyId, 'invoices');
    const resumed = await ferry([...args, '--resume']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain(pagesDone > 0 ? 'was resynced' : 'Resuming the export');
    expect(lines(readFileSync(out, 'utf8')).map((l) => JSON.parse(l))).toEqual(await readAll(h.api, small.companyId, 'invoices'));
  }, 60_000);

  it('an interrupted stdout export exits 130', async () => {
    const controller = new AbortController();
    controller.abort('SIGINT');
    const result = await ferry([...remote, 'export', 'invoices', '--company', small.companyId], { signal: controller.signal });
    expect(result.code).toBe(130);
  });
});

describe('ferry export --state', () => {
  let h: Harness;
  let remote: string[];
  let work: string;
  let company: Linked;

  beforeAll(async () => {
    ({ h, work, remote } = await startExportHarness('ferry-export-state-'));
    company = await linkedCompany(h.api, h.sandboxUrl, 'gbol', 500, { seed: 31 });
    await queueAndDrain(h, company.companyId, 'invoices');
  }, 60_000);
  afterAll(async () => {
    await h?.stop();
  });

  const exportWithState = async (name: string, extra: string[] = []) => {
    const out = join(work, name);
    const result = await ferry([...remote, 'export', 'invoices', '--company', company.companyId, '--state', join(work, 'state.json'), '--out', out, ...extra]);
    expect(result.code, result.stderr).toBe(0);
    const text = readFileSync(out, 'utf8');
    return text === '' ? [] : lines(text).map((l) => JSON.parse(l));
  };

  it('exports everything first, nothing when nothing changed, then only what changed', async () => {
    const all = await readAll(h.api, company.companyId, 'invoices');
    const first = await exportWithState('run1.ndjson');
    expect(first).toEqual(all);
    const state = JSON.parse(readFileSync(join(work, 'state.json'), 'utf8'));
    const newest = all.map((r) => r.modifiedDate).sort().at(-1);
    expect(state.version).toBe(1);
    expect(state.bookmarks.invoices[company.companyId]).toMatchObject({ modifiedDate: newest });
    expect(state.bookmarks.invoices[company.companyId].ids).toEqual(all.filter((r) => r.modifiedDate === newest).map((r) => r.id));

    expect(await exportWithState('run2.ndjson')).toEqual([]);

    // Change the data set: a new invoice on the platform, then a resync.
    const customerId = all[0].customerRef.id;
    const pushed = await h.api.call('POST', `/companies/${company.companyId}/connections/${company.connectionId}/push/invoices`, {
      body: {
        invoiceNumber: 'STATE-1', customerRef: { id: customerId }, issueDate: '2026-11-01T00:00:00Z', dueDate: '2026-12-01T00:00:00Z', currency: 'GBP',
        lineItems: [{ description: 'Crossing', unitAmount: 50, quantity: 2, subTotal: 100, taxAmount: 20, totalAmount: 120 }],
        subTotal: 100, totalTaxAmount: 20, totalAmount: 120, amountDue: 120, status: 'Submitted',
      },
    });
    expect(pushed.status, pushed.text).toBe(200);
    expect(pushed.body.status).toBe('Success');
    await queueAndDrain(h, company.companyId, 'invoices');
    const third = await exportWithState('run3.ndjson');
    expect(third.map((r) => r.invoiceNumber)).toEqual(['STATE-1']);
    const after = JSON.parse(readFileSync(join(work, 'state.json'), 'utf8'));
    expect(after.bookmarks.invoices[company.companyId]).toMatchObject({ modifiedDate: third[0].modifiedDate, ids: [third[0].id] });

    // A second record in the same second as the bookmark is still exported (>=, not >).
    const again = await h.api.call('POST', `/companies/${company.companyId}/connections/${company.connectionId}/push/invoices`, {
      body: { invoiceNumber: 'STATE-2', customerRef: { id: customerId }, issueDate: '2026-11-01T00:00:00Z', currency: 'GBP',
        lineItems: [{ description: 'Crossing', unitAmount: 50, quantity: 2, subTotal: 100, taxAmount: 20, totalAmount: 120 }],
        subTotal: 100, totalTaxAmount: 20, totalAmount: 120, amountDue: 120, status: 'Submitted' },
    });
    expect(again.status, again.text).toBe(200);
    await queueAndDrain(h, company.companyId, 'invoices');
    const fourth = await exportWithState('run4.ndjson');
    expect(fourth.map((r) => r.invoiceNumber)).toEqual(['STATE-2']);
  });

  it('--all-companies exits 0 when the only companies skipped lack the data type (404)', async () => {
    const stripe = await linkedCompany(h.api, h.sandboxUrl, 'exgd', 5, { seed: 32, name: 'Shop Ltd' });
    const result = await ferry([...remote, '--json', 'export', 'invoices', '--all-companies', '--query', 'status=void', '--out', join(work, 'all.ndjson')]);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ companies: { total: 2, exported: 1, skipped: 1 }, skipped: [{ companyId: stripe.companyId, reason: 'unsupported' }] });
  });

  it('--all-companies with --state keeps a bookmark per company', async () => {
    const state = join(work, 'all.state.json');
    const first = await ferry([...remote, 'export', 'invoices', '--all-companies', '--state', state, '--out', join(work, 'all-1.ndjson')]);
    expect(first.code, first.stderr).toBe(0);
    const saved = JSON.parse(readFileSync(state, 'utf8'));
    expect(Object.keys(saved.bookmarks.invoices)).toEqual([company.companyId]);
    const second = await ferry([...remote, 'export', 'invoices', '--all-companies', '--state', state, '--out', join(work, 'all-2.ndjson')]);
    expect(second.code, second.stderr).toBe(0);
    expect(readFileSync(join(work, 'all-2.ndjson'), 'utf8')).toBe('');
  });

  it('combines the bookmark with --query, and refuses a state file that is not one', async () => {
    const state = join(work, 'paid.state.json');
    const out = join(work, 'paid.ndjson');
    const run = await ferry([...remote, 'export', 'invoices', '--company', company.companyId, '--query', 'status=paid || status=void', '--state', state, '--out', out]);
    expect(run.code, run.stderr).toBe(0);
    const expected = await readAll(h.api, company.companyId, 'invoices', { query: 'status=paid || status=void' });
    expect(lines(readFileSync(out, 'utf8')).map((l) => JSON.parse(l))).toEqual(expected);
    const second = await ferry([...remote, 'export', 'invoices', '--company', company.companyId, '--query', 'status=paid || status=void', '--state', state]);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toBe('');

    const bad = join(work, 'bad.json');
    writeFileSync(bad, '{"hello":1}');
    const refused = await ferry([...remote, 'export', 'invoices', '--company', company.companyId, '--state', bad]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('is not a ferry export state file');
  });
});

function leafPaths(record: any, prefix = ''): string[] {
  const paths: string[] = [];
  for (const [key, value] of Object.entries(record)) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) paths.push(...leafPaths(value, path));
    else paths.push(path);
  }
  return paths;
}
