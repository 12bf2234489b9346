// The whole loop with the real worker thread (startStack, as `ferry serve` runs it):
// link a company, sync every data type, read the pages, push an invoice, resync, and
// check the wire records against API.md. Waits are conditions with deadlines.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATA_TYPES } from '../../src/platforms/data-types.js';
import { integrationByKey } from '../../src/platforms/registry.js';
import type { Stack } from '../../src/stack.js';
import { tempDir } from '../helpers/service.js';
import {
  DATA_STATUS_KEYS, ISO_Z, PULL_KEYS, PUSH_KEYS, apiClient, keysWithValues, createClient, linkedCompany, readAll, waitFor, type Api, type Linked } from '../helpers/sync.js';
import { startTestStack } from '../helpers/stack.js';
import { expectRequiredFields } from '../helpers/record-shapes.js';

const PLATFORM = 'gbol'; // Xero: every data type
const INVOICES = 1234; // two platform pages of 1000
const supported = integrationByKey(PLATFORM)!.dataTypes;

function expectPullRecord(pull: Record<string, unknown>): void {
  expect(Object.keys(pull).sort()).toEqual(keysWithValues(pull, PULL_KEYS, ['completed', 'statusDescription', 'errorMessage']));
  expect(pull.requested).toMatch(ISO_Z);
  if (pull.isCompleted) expect(pull.completed).toMatch(ISO_Z);
  expect(pull.statusDescription === undefined || typeof pull.statusDescription === 'string').toBe(true);
  expect(pull.errorMessage === undefined || typeof pull.errorMessage === 'string').toBe(true);
  expect(pull.progress).toBeGreaterThanOrEqual(0);
  expect(pull.progress).toBeLessThanOrEqual(100);
}

/** dataStatus entries: the optional fields are omitted (never null) until they have a value. */
function expectDataStatus(entry: Record<string, unknown>, dataType: string): void {
  expect(entry.dataType).toBe(dataType);
  expect(typeof entry.currentStatus).toBe('string');
  for (const [key, value] of Object.entries(entry)) {
    expect(DATA_STATUS_KEYS).toContain(key);
    expect(value).not.toBeNull();
  }
  expect('lastSuccessfulSync' in entry).toBe('latestSuccessfulSyncId' in entry);
  if (entry.currentStatus === 'Complete') expect(Object.keys(entry).sort()).toEqual([...DATA_STATUS_KEYS].sort());
}

describe('sync full loop (real worker thread)', () => {
  const dataDir = tempDir('ferry-sync-loop-');
  let stack: Stack;
  let api: Api;
  let linked: Linked;
  let company: string;
  let invoices: any[];
  let pushedId: string;

  beforeAll(async () => {
    stack = await startTestStack('threads', { dataDir, rateLimit: 0 });
    const admin = apiClient(stack.baseUrl, stack.adminKey);
    api = apiClient(stack.baseUrl, await createClient(admin, stack.adminKey, 'Loop Ltd', 'Paid'));
  });
  afterAll(async () => {
    await stack?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('links a company with tokens the platform verified', async () => {
    linked = await linkedCompany(api, stack.sandboxUrl, PLATFORM, INVOICES, { name: 'Loop Ltd' });
    company = linked.companyId;
    expect(linked.connection).toMatchObject({ integrationKey: PLATFORM, status: 'Linked', platformName: 'Xero' });
    expect(linked.connection).not.toHaveProperty('dataConnectionErrors');
    expect(linked.connection.connectionInfo).toEqual({ organisationId: linked.tenant.orgId, organisationName: linked.tenant.name });
    expect(linked.connection).not.toHaveProperty('lastSync');
  });

  it('answers 409 "not requested" before any sync, and nothing syncs by itself', async () => {
    const read = await api.call('GET', `/companies/${company}/data/invoices`);
    expect(read.status, read.text).toBe(409);
    expect(read.body.error).toContain('has not been requested');
    expect((await api.call('GET', `/companies/${company}/dataStatus`)).body).toEqual({});
  });

  it('POST /data/all queues every supported type, and each reaches Complete', async () => {
    const all = await api.call('POST', `/companies/${company}/data/all`);
    expect(all.status, all.text).toBe(204);
    expect(all.text).toBe('');
    const first = await api.call('GET', `/companies/${company}/dataStatus`);
    expect(Object.keys(first.body).sort()).toEqual([...supported].sort());
    for (const [dataType, entry] of Object.entries(first.body)) expectDataStatus(entry as Record<string, unknown>, dataType);

    const done = await waitFor('every data type Complete', async () => {
      const status = await api.call('GET', `/companies/${company}/dataStatus`);
      const entries = Object.values(status.body) as Array<{ currentStatus: string }>;
      const failed = entries.filter((e) => !['Queued', 'Fetching', 'Mapping', 'Complete'].includes(e.currentStatus));
      if (failed.length > 0) throw new Error(`pulls failed: ${JSON.stringify(failed)}`);
      return entries.length === supported.length && entries.every((e) => e.currentStatus === 'Complete') && status.body;
    }, 30_000);
    for (const [dataType, entry] of Object.entries(done)) {
      expectDataStatus(entry as Record<string, unknown>, dataType);
      expect(entry).toMatchObject({ currentStatus: 'Complete', lastSuccessfulSync: expect.stringMatching(ISO_Z) });
      expect((entry as any).latestSyncId).toBe((entry as any).latestSuccessfulSyncId);
    }
  });

  it('serves every type at its read path', async () => {
    for (const dataType of DATA_TYPES.filter((t) => supported.includes(t.key))) {
      const page = await api.call('GET', `/companies/${company}/data/${dataType.path}?pageSize=1`);
      expect(page.status, `${dataType.key}: ${page.text}`).toBe(200);
      // Company info is one record, answered as itself (the public API's shape).
      if (dataType.key === 'company') expect(page.body).toMatchObject({ id: expect.any(String), companyName: expect.any(String) });
      else expect(page.body.totalResults, dataType.key).toBeGreaterThan(0);
    }
  });

  it('reads every page of invoices: the tenant\'s count, unique ids', async () => {
    invoices = await readAll(api, company, 'invoices', { pageSize: 500 });
    expect(invoices).toHaveLength(INVOICES);
    expect(new Set(invoices.map((i) => i.id)).size).toBe(INVOICES);
    const firstPage = await api.call('GET', `/companies/${company}/data/invoices?pageSize=500`);
    expect(firstPage.body).toMatchObject({ pageNumber: 1, pageSize: 500, totalResults: INVOICES });
    expect(firstPage.body._links.next.href).toBe(`/companies/${company}/data/invoices?page=2&pageSize=500`);
  });

  it('query status=paid counts exactly the Paid records', async () => {
    const paid = invoices.filter((i) => i.status === 'Paid').length;
    expect(paid).toBeGreaterThan(0);
    const result = await api.call('GET', `/companies/${company}/data/invoices?query=${encodeURIComponent('status=paid')}&pageSize=1`);
    expect(result.status, result.text).toBe(200);
    expect(result.body.totalResults).toBe(paid);
    expect(result.body.results[0].status).toBe('Paid');
  });

  it('reads one record by id', async () => {
    const wanted = invoices[INVOICES - 1];
    const one = await api.call('GET', `/companies/${company}/data/invoices/${wanted.id}`);
    expect(one.status, one.text).toBe(200);
    expect(one.body).toEqual(wanted);
  });

  it('pushes an invoice (200 Success)', async () => {
    const template = invoices[0];
    const invoice = {
      invoiceNumber: 'FERRY-PUSH-1',
      customerRef: template.customerRef,
      issueDate: '2026-11-01T00:00:00Z',
      dueDate: '2026-12-01T00:00:00Z',
      currency: template.currency,
      lineItems: [{ description: 'Ferry crossing', unitAmount: 100, quantity: 2, subTotal: 200, taxAmount: 40, totalAmount: 240, accountRef: template.lineItems[0].accountRef }],
      subTotal: 200,
      totalTaxAmount: 40,
      totalAmount: 240,
      amountDue: 240,
      status: 'Submitted',
    };
    const push = await api.call('POST', `/companies/${company}/connections/${linked.connectionId}/push/invoices`, { body: invoice });
    expect(push.status, push.text).toBe(200);
    // The answer to a create carries the record as the platform created it (`data`).
    expect(Object.keys(push.body).sort()).toEqual([...PUSH_KEYS, 'completedOnUtc', 'changes', 'data'].sort());
    expect(push.body).toMatchObject({
      companyId: company, dataConnectionKey: linked.connectionId, dataType: 'invoices', status: 'Success', statusCode: 200,
      validation: { errors: [], warnings: [] },
    });
    expect(push.body.completedOnUtc).toMatch(ISO_Z);
    const [change] = push.body.changes;
    expect(change).toMatchObject({ type: 'Created', recordRef: { dataType: 'invoices' } });
    pushedId = change.recordRef.id;
    expect(push.body.data).toMatchObject({ id: pushedId, invoiceNumber: invoice.invoiceNumber });
    expectRequiredFields('invoices', push.body.data);
    expect(invoices.map((i) => i.id)).not.toContain(pushedId);
  });

  it('a resync brings the pushed invoice in, with no duplicates', async () => {
    const queued = await api.call('POST', `/companies/${company}/data/queue/invoices`);
    expect(queued.status, queued.text).toBe(200);
    expectPullRecord(queued.body);
    expect(queued.body).toMatchObject({ companyId: company, connectionId: linked.connectionId, dataType: 'invoices', status: 'Queued', isCompleted: false, isErrored: false });
    expect(queued.body).not.toHaveProperty('completed');

    const pull = await waitFor('the resync to complete', async () => {
      const result = await api.call('GET', `/companies/${company}/data/history/${queued.body.id}`);
      if (result.body.isErrored) throw new Error(`resync failed: ${result.text}`);
      return result.body.isCompleted && result.body;
    });
    expectPullRecord(pull);
    expect(pull).toMatchObject({ status: 'Complete', progress: 100, isErrored: false });

    const after = await readAll(api, company, 'invoices', { pageSize: 500 });
    const ids = after.map((i) => i.id);
    expect(after).toHaveLength(INVOICES + 1);
    expect(new Set(ids).size).toBe(INVOICES + 1);
    expect(ids).toContain(pushedId);
    expect(after.find((i) => i.id === pushedId)).toMatchObject({ invoiceNumber: 'FERRY-PUSH-1', totalAmount: 240, status: 'Submitted' });
    const status = await api.call('GET', `/companies/${company}/dataStatus`);
    expect(status.body.invoices).toMatchObject({ currentStatus: 'Complete', latestSyncId: queued.body.id, latestSuccessfulSyncId: queued.body.id });
  });

  it('company and connection carry lastSync; history lists every pull', async () => {
    const record = await api.call('GET', `/companies/${company}`);
    expect(record.body.lastSync).toMatch(ISO_Z);
    expect(record.body.dataConnections[0].lastSync).toMatch(ISO_Z);
    const connection = await api.call('GET', `/companies/${company}/connections/${linked.connectionId}`);
    expect(connection.body.lastSync).toBe(record.body.lastSync);

    const history = await api.call('GET', `/companies/${company}/data/history?pageSize=100`);
    expect(history.status, history.text).toBe(200);
    expect(history.body.totalResults).toBe(supported.length + 1);
    const pulls = history.body.results as Array<Record<string, unknown>>;
    for (const pull of pulls) {
      expectPullRecord(pull);
      expect(pull).toMatchObject({ companyId: company, status: 'Complete', isCompleted: true, isErrored: false, progress: 100 });
    }
    expect(pulls.map((p) => p.dataType).sort()).toEqual([...supported, 'invoices'].sort());
    // Newest first by default.
    expect(pulls[0]!.dataType).toBe('invoices');
  });
});
