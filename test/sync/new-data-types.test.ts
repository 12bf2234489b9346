// Bill credit notes, journals, payment methods, sales orders and transfers end to end: a
// Xero company's sync pulls them like any other type, the service serves each at its
// public read path (transfers per connection), and the pushable ones push.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataTypeByKey } from '../../src/platforms/data-types.js';
import { integrationByKey } from '../../src/platforms/registry.js';
import { generateRecords, generatedCount } from '../../src/sandbox/index.js';
import { type Harness, startTestStack } from '../helpers/stack.js';
import { createClient, linkedCompany, readAll, type Api, type Linked } from '../helpers/sync.js';

const PLATFORM = 'gbol';
const TENANT = { seed: 77, invoices: 60 };
const COMPANY_READ = ['billCreditNotes', 'journals', 'paymentMethods', 'salesOrders'];

const generated = (dataType: string) => generateRecords(TENANT, dataType, 0, generatedCount(TENANT, dataType));

let h: Harness;
let api: Api;
let linked: Linked;
let base: string;
let connectionBase: string;

beforeAll(async () => {
  h = await startTestStack('fake-clocks');
  const apiKey = await createClient(h.api, h.adminKey, 'Ledger Ltd', 'Paid');
  api = { ...h.api, call: (method, path, options = {}) => h.api.call(method, path, { apiKey, ...options }) };
  linked = await linkedCompany(api, h.sandboxUrl, PLATFORM, TENANT.invoices, { seed: TENANT.seed });
  base = `/companies/${linked.companyId}`;
  connectionBase = `${base}/connections/${linked.connectionId}`;
  expect((await api.call('POST', `${base}/data/all`)).status).toBe(204);
  await h.drain();
});
afterAll(async () => h?.stop());

describe('new data types through the service', () => {
  it('Xero supports them all, and one sync completes each', async () => {
    const supported = integrationByKey(PLATFORM)!.dataTypes;
    for (const type of [...COMPANY_READ, 'transfers']) expect(supported).toContain(type);
    const status = (await api.call('GET', `${base}/dataStatus`)).body;
    for (const type of [...COMPANY_READ, 'transfers']) expect(status[type], type).toMatchObject({ dataType: type, currentStatus: 'Complete' });
  });

  it.each(COMPANY_READ)('%s: every record the platform has, at /data/{path}, and one by id', async (type) => {
    const path = dataTypeByKey(type)!.path;
    const records = await readAll(api, linked.companyId, path);
    const expected = generated(type);
    expect(expected.length).toBeGreaterThan(0);
    expect(records).toEqual(expected);
    const one = await api.call('GET', `${base}/data/${path}/${encodeURIComponent(expected[0]!.id as string)}`);
    expect(one.status, one.text).toBe(200);
    expect(one.body).toEqual(expected[0]);
    // Read per company in the public API, so not under the connection.
    expect((await api.call('GET', `${connectionBase}/data/${path}`)).status).toBe(404);
  });

  it('transfers: read per connection, the list and one record', async () => {
    const page = await api.call('GET', `${connectionBase}/data/transfers?pageSize=5000`);
    expect(page.status, page.text).toBe(200);
    const expected = generated('transfers');
    expect(expected.length).toBeGreaterThan(0);
    expect(page.body.results).toEqual(expected);
    expect(page.body.totalResults).toBe(expected.length);
    const one = await api.call('GET', `${connectionBase}/data/transfers/${encodeURIComponent(expected[0]!.id as string)}`);
    expect(one.status, one.text).toBe(200);
    expect(one.body).toEqual(expected[0]);
  });

  it('every journal entry\'s journalRef reads back as a synced journal', async () => {
    const entries = await readAll(api, linked.companyId, 'journalEntries');
    expect(entries.length).toBeGreaterThan(0);
    for (const id of new Set(entries.map((e) => e.journalRef.id as string))) {
      const journal = await api.call('GET', `${base}/data/journals/${encodeURIComponent(id)}`);
      expect(journal.status, journal.text).toBe(200);
      expect(journal.body.name).toBe(entries.find((e) => e.journalRef.id === id).journalRef.name);
    }
  });

  it('pushes a transfer, which the next sync of transfers lists under the connection', async () => {
    const accounts = (await readAll(api, linked.companyId, 'accounts')).filter((a) => a.isBankAccount);
    const side = (a: { id: string; name: string }) => ({ accountRef: { id: a.id, name: a.name }, amount: 75.5, currency: 'GBP' });
    const transfer = { description: 'Float top-up', date: '2026-11-02T00:00:00Z', from: side(accounts[0]), to: side(accounts[1]) };
    const push = await api.call('POST', `${connectionBase}/push/transfers`, { body: transfer });
    expect(push.status, push.text).toBeLessThan(300);
    expect(push.body).toMatchObject({ dataType: 'transfers', status: 'Success' });
    expect((await api.call('POST', `${base}/data/queue/transfers`)).status).toBe(200);
    await h.drain();
    const page = await api.call('GET', `${connectionBase}/data/transfers?pageSize=5000`);
    expect(page.body.totalResults).toBe(generated('transfers').length + 1);
    expect(page.body.results.at(-1)).toMatchObject(transfer);
  });

  it('refuses a push of a read-only type', async () => {
    for (const type of ['paymentMethods', 'salesOrders']) {
      const push = await api.call('POST', `${connectionBase}/push/${type}`, { body: { name: 'x' } });
      expect(push.status, type).toBe(400);
    }
  });
});
