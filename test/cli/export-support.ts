// Shared by the `ferry export` tests: a stack on fake clocks with a work folder and the flags
// that point ferry at it (the admin key read from a file, as a user keeps it), the companies
// the export tests read, and an export's lines.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { tempDir } from '../helpers/service.js';
import { type Harness, startTestStack } from '../helpers/stack.js';
import { linkedCompany, readAll, type Linked } from '../helpers/sync.js';

export const SMALL = 300;

/** The lines of an export that ends with a newline. */
export function lines(text: string): string[] {
  expect(text.endsWith('\n')).toBe(true);
  return text.slice(0, -1).split('\n');
}

export interface ExportHarness {
  h: Harness;
  /** A folder of its own for the files the exports write. */
  work: string;
  /** `--base-url URL --api-key-file FILE`. */
  remote: string[];
}

export async function startExportHarness(workPrefix: string): Promise<ExportHarness> {
  const h = await startTestStack('fake-clocks');
  const work = tempDir(workPrefix);
  const keyFile = join(work, 'admin.key');
  writeFileSync(keyFile, h.adminKey, { mode: 0o600 });
  return { h, work, remote: ['--base-url', h.baseUrl, '--api-key-file', keyFile] };
}

export interface ExportCompanies {
  /** With `bigInvoices`: the first company, its invoices synced. */
  big?: Linked;
  /** SMALL invoices and the chart of accounts, synced. */
  small: Linked;
  /** Its invoices never synced (409). */
  unsynced: Linked;
  /** A platform without invoices (404), everything else synced. */
  stripe: Linked;
  smallRecords: any[];
}

/** The companies both `ferry export` files read, made and synced in one pass of the worker. */
export async function exportCompanies(h: Harness, bigInvoices?: number): Promise<ExportCompanies> {
  const big = bigInvoices === undefined ? undefined : await linkedCompany(h.api, h.sandboxUrl, 'gbol', bigInvoices, { seed: 11, name: 'Big Ltd' });
  const small = await linkedCompany(h.api, h.sandboxUrl, 'gbol', SMALL, { seed: 12, name: 'Small Ltd' });
  const unsynced = await linkedCompany(h.api, h.sandboxUrl, 'gbol', 5, { seed: 13, name: 'Unsynced Ltd' });
  const stripe = await linkedCompany(h.api, h.sandboxUrl, 'exgd', 5, { seed: 14, name: 'Shop Ltd' });
  for (const c of big ? [big, small] : [small]) expect((await h.api.call('POST', `/companies/${c.companyId}/data/queue/invoices`)).status).toBe(200);
  expect((await h.api.call('POST', `/companies/${small.companyId}/data/queue/chartOfAccounts`)).status).toBe(200);
  expect((await h.api.call('POST', `/companies/${stripe.companyId}/data/all`)).status).toBe(204);
  await h.drain();
  const smallRecords = await readAll(h.api, small.companyId, 'invoices', { pageSize: 5000 });
  expect(smallRecords).toHaveLength(SMALL);
  return { ...(big ? { big } : {}), small, unsynced, stripe, smallRecords };
}
