// `ferry export` in-process against a real service and sandbox (startHarness), over 50,000
// invoices (heavy: syncing and exporting them is the most CPU of any export test): the
// round trip compared record for record with the service, --all-companies with skipped
// companies, and Ctrl-C (AbortSignal) leaving nothing under the final name, then --resume.
// The rest of `ferry export` is in export.test.ts.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ferry } from '../helpers/in-process.js';
import { readAll, waitFor, type Linked } from '../helpers/sync.js';
import type { Harness } from '../helpers/stack.js';
import { exportCompanies, lines, startExportHarness } from './export-support.js';

const BIG = 50_000;

describe('ferry export against a real service', () => {
  let h: Harness;
  let remote: string[];
  let work: string;
  let big: Linked;
  let small: Linked;
  let unsynced: Linked;
  let stripe: Linked;
  let bigExpected: string[];

  beforeAll(async () => {
    ({ h, work, remote } = await startExportHarness('ferry-export-'));
    const companies = await exportCompanies(h, BIG);
    ({ small, unsynced, stripe } = companies);
    big = companies.big!;
    bigExpected = (await readAll(h.api, big.companyId, 'invoices', { pageSize: 5000 })).map((r) => JSON.stringify(r));
    expect(bigExpected).toHaveLength(BIG);
  }, 180_000);
  afterAll(async () => {
    await h?.stop();
  });

  it('exports 50,000 invoices to ndjson, record for record the service\'s, atomically', async () => {
    const out = join(work, 'big.ndjson');
    const result = await ferry([...remote, 'export', 'invoices', '--company', big.companyId, '--out', out]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(`${out}\n`);
    expect(result.stderr).toContain(`Exported 50,000 invoices to ${out} (ndjson)`);
    const written = lines(readFileSync(out, 'utf8'));
    expect(written).toHaveLength(BIG);
    for (let i = 0; i < BIG; i++) if (written[i] !== bigExpected[i]) expect(written[i]).toBe(bigExpected[i]);
    expect(new Set(written.map((l) => JSON.parse(l).id)).size).toBe(BIG);
    // Only the final file is left: no part file, checkpoint or lock.
    expect(readdirSync(work).filter((name) => name.includes('big.ndjson'))).toEqual(['big.ndjson']);
  }, 120_000);

  it('--all-companies: every record gets its companyId; 409 companies are reported and skipped → exit 3', async () => {
    const out = join(work, 'all.ndjson');
    const result = await ferry([...remote, 'export', 'invoices', '--all-companies', '--query', 'status=void', '--out', out]);
    expect(result.code, result.stderr).toBe(3);
    // One line per way of skipping, not per company; the ids not synced go to a file `sync` reads.
    expect(result.stderr).toContain('Skipped 1 company without this data set (unsupported by the platform, or deleted).');
    expect(result.stderr).toContain(`1 company was skipped because the invoices data set is not synced yet (their ids: ${out}.not-synced.csv)`);
    expect(result.stderr).toContain(`sync --from-results ${out}.not-synced.csv --data-type invoices --wait`);
    expect(readFileSync(`${out}.not-synced.csv`, 'utf8')).toBe(`companyId,name,reason\n${unsynced.companyId},Unsynced Ltd,notSynced\n`);
    const records = lines(readFileSync(out, 'utf8')).map((l) => JSON.parse(l));
    const expected = [
      ...(await readAll(h.api, big.companyId, 'invoices', { query: 'status=void' })).map((r) => ({ companyId: big.companyId, ...r })),
      ...(await readAll(h.api, small.companyId, 'invoices', { query: 'status=void' })).map((r) => ({ companyId: small.companyId, ...r })),
    ];
    expect(records).toEqual(expected);
    expect(Object.keys(records[0])[0]).toBe('companyId');

    const summary = await ferry([...remote, '--json', 'export', 'invoices', '--all-companies', '--query', 'status=void', '--format', 'csv', '--out', join(work, 'all.csv')]);
    expect(summary.code).toBe(3);
    const body = JSON.parse(summary.stdout);
    expect(body).toMatchObject({ dataType: 'invoices', format: 'csv', records: expected.length, companies: { total: 4, exported: 2, skipped: 2 } });
    expect(body.skipped.map((s: any) => [s.companyId, s.reason, s.status]).sort()).toEqual([
      [stripe.companyId, 'unsupported', 404], [unsynced.companyId, 'notSynced', 409],
    ].sort());
    const rows = parse(readFileSync(join(work, 'all.csv'), 'utf8')) as string[][];
    expect(rows[0]![0]).toBe('companyId');
    expect(rows.slice(1).map((r) => `${r[0]} ${r[1]}`)).toEqual(expected.map((r) => `${r.companyId} ${r.id}`));
    expect(JSON.parse(summary.stderr.split('\n').filter(Boolean).at(-1)!).error.exitCode).toBe(3);
  }, 60_000);

  it('Ctrl-C leaves nothing under the final name; --resume completes it identical to a fresh export', async () => {
    const out = join(work, 'interrupted.ndjson');
    const part = join(work, '.interrupted.ndjson.ferry-part');
    const args = [...remote, 'export', 'invoices', '--company', big.companyId, '--page-size', '500', '--out', out];
    const controller = new AbortController();
    const running = ferry(args, { signal: controller.signal });
    await waitFor('the part file to hold a few pages', async () => existsSync(part) && statSync(part).size > 2_000_000, 30_000, 2);
    controller.abort('SIGINT');
    const stopped = await running;
    expect(stopped.code).toBe(130);
    // The person's own Ctrl-C: a plain line saying how to go on, not an error.
    expect(stopped.stderr).toMatch(/^Stopped after [\d,]+ records? written; rerun the same command with --resume to continue \(the partial export is kept beside /m);
    expect(stopped.stderr).not.toMatch(/^error:/m);
    expect(existsSync(out)).toBe(false);
    const checkpoint = JSON.parse(readFileSync(`${part}.json`, 'utf8'));
    expect(checkpoint.company.pagesDone).toBeGreaterThan(0);
    expect(checkpoint.company.pagesDone).toBeLessThan(BIG / 500);

    const resumed = await ferry([...args, '--resume']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain('Resuming the export');
    const written = lines(readFileSync(out, 'utf8'));
    expect(written).toHaveLength(BIG);
    expect(written.join('\n') === bigExpected.join('\n')).toBe(true);
    expect(existsSync(part)).toBe(false);
    expect(existsSync(`${part}.json`)).toBe(false);
  }, 120_000);

  it('--resume with other arguments is refused (exit 2) and keeps the partial export', async () => {
    const out = join(work, 'mismatch.json');
    const part = join(work, '.mismatch.json.ferry-part');
    const args = [...remote, 'export', 'invoices', '--company', big.companyId, '--page-size', '500', '--out', out];
    const controller = new AbortController();
    const running = ferry(args, { signal: controller.signal });
    await waitFor('the part file to hold a few pages', async () => existsSync(part) && statSync(part).size > 1_000_000, 30_000, 2);
    controller.abort('SIGINT');
    expect((await running).code).toBe(130);
    const other = await ferry([...args.slice(0, -2), '--page-size', '1000', '--out', out, '--resume']);
    expect(other.code).toBe(2);
    expect(other.stderr).toContain('different arguments (--page-size)');
    expect(existsSync(part)).toBe(true);
    // Without --resume the leftover is discarded and the export starts over.
    const fresh = await ferry([...args.slice(0, -2), '--page-size', '1000', '--out', out]);
    expect(fresh.code, fresh.stderr).toBe(0);
    expect(fresh.stderr).toContain('Discarding an interrupted export');
    expect((JSON.parse(readFileSync(out, 'utf8')) as unknown[]).map((r) => JSON.stringify(r))).toEqual(bigExpected);
  }, 120_000);
});
