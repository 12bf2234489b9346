// A push's `data` is the record as the platform now holds it: every field the public
// document requires of its data type, defaulted where the writer left it out (an account's
// isBankAccount, a contact's status, a credit note's remaining credit), in the answer to a
// create and to an update, sent at once or still Pending, and in the record the next sync
// reads. In-process on fake clocks.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectRequiredFields } from '../helpers/record-shapes.js';
import { startTestStack, type Harness } from '../helpers/stack.js';
import { createClient, linkedCompany, patchSandbox, readAll, type Api, type Linked } from '../helpers/sync.js';

let h: Harness;
let api: Api;
let linked: Linked;
let refs: { customerId: string; supplierId: string };

beforeAll(async () => {
  h = await startTestStack('fake-clocks');
  const key = await createClient(h.api, h.adminKey, 'Whole Records Ltd', 'Paid');
  api = { ...h.api, call: (method, path, options = {}) => h.api.call(method, path, { apiKey: key, ...options }) };
  linked = await linkedCompany(api, h.sandboxUrl, 'gbol', 2, { seed: 41 });
  for (const type of ['customers', 'suppliers']) await api.call('POST', `/companies/${linked.companyId}/data/queue/${type}`);
  await h.drain();
  refs = { customerId: (await readAll(api, linked.companyId, 'customers'))[0].id, supplierId: (await readAll(api, linked.companyId, 'suppliers'))[0].id };
});
afterAll(async () => h?.stop());

const day = '2026-11-01T00:00:00Z';
/** Records with only what a push requires, by push path, data type key and read path. */
const BARE: Array<{ path: string; dataType: string; read: string; record: () => Record<string, unknown>; defaults: Record<string, unknown> }> = [
  { path: 'accounts', dataType: 'chartOfAccounts', read: 'accounts', record: () => ({ name: 'Bare fees', type: 'Expense' }), defaults: { isBankAccount: false, status: 'Active' } },
  { path: 'customers', dataType: 'customers', read: 'customers', record: () => ({ customerName: 'Bare Customer Ltd' }), defaults: { status: 'Active' } },
  { path: 'suppliers', dataType: 'suppliers', read: 'suppliers', record: () => ({ supplierName: 'Bare Supplier Ltd' }), defaults: { status: 'Active' } },
  { path: 'items', dataType: 'items', read: 'items', record: () => ({ name: 'Bare item' }), defaults: { isBillItem: false, isInvoiceItem: false, itemStatus: 'Active', type: 'Unknown' } },
  {
    path: 'creditNotes', dataType: 'creditNotes', read: 'creditNotes', record: () => ({ customerRef: { id: refs.customerId }, issueDate: day, totalAmount: 120, totalTaxAmount: 20 }),
    defaults: { remainingCredit: 120, subTotal: 100, totalDiscount: 0, discountPercentage: 0, status: 'Unknown' },
  },
  {
    path: 'billCreditNotes', dataType: 'billCreditNotes', read: 'billCreditNotes', record: () => ({ supplierRef: { id: refs.supplierId }, issueDate: day, totalAmount: 60, status: 'Submitted' }),
    defaults: { remainingCredit: 60, subTotal: 60, totalTaxAmount: 0, totalDiscount: 0, discountPercentage: 0 },
  },
];

const pushPath = (path: string, id = '') => `/companies/${linked.companyId}/connections/${linked.connectionId}/push/${path}${id ? `/${id}` : ''}`;

describe('push answers carry the whole record', () => {
  it.each(BARE)('$path: the create\'s answer and the next sync\'s record have every required field', async ({ path, dataType, read, record, defaults }) => {
    const pushed = await api.call('POST', pushPath(path), { body: record() });
    expect(pushed.status, pushed.text).toBe(200);
    expect(pushed.body.status).toBe('Success');
    expect(pushed.body.data).toMatchObject({ ...record(), ...defaults });
    expectRequiredFields(dataType, pushed.body.data, `${path} answer`);
    await api.call('POST', `/companies/${linked.companyId}/data/queue/${dataType}`);
    await h.drain();
    const synced = await api.call('GET', `/companies/${linked.companyId}/data/${read}/${pushed.body.data.id}`);
    expect(synced.status, synced.text).toBe(200);
    expect(synced.body).toEqual(pushed.body.data);
  });

  it('an update\'s answer too', async () => {
    const created = (await api.call('POST', pushPath('customers'), { body: { customerName: 'To Rename Ltd', status: 'Archived' } })).body.data;
    const updated = await api.call('PUT', `${pushPath('customers', created.id)}?forceUpdate=true`, { body: { customerName: 'Renamed Ltd' } });
    expect(updated.body.status, updated.text).toBe('Success');
    expect(updated.body.data).toMatchObject({ id: created.id, customerName: 'Renamed Ltd', status: 'Active' });
    expectRequiredFields('customers', updated.body.data);
  });

  it('a push still Pending answers the record sent, with every required field', async () => {
    await patchSandbox(h.sandboxUrl, { pushMode: 'async', pushDelaySeconds: 60 });
    try {
      const pending = await api.call('POST', pushPath('accounts'), { body: { name: 'Pending fees', type: 'Expense' } });
      expect(pending.body.status, pending.text).toBe('Pending');
      expect(pending.body.data).toEqual({ name: 'Pending fees', type: 'Expense', isBankAccount: false, status: 'Active' });
    } finally {
      await patchSandbox(h.sandboxUrl, { pushMode: 'sync' });
    }
  });

  it('a direct cost needs its currency: the document requires one and no default would be right', async () => {
    const refused = await api.call('POST', pushPath('directCosts'), { body: { issueDate: day, totalAmount: 10 } });
    expect(refused.status).toBe(400);
    expect(refused.body.validation.errors.map((e: { itemId: string }) => e.itemId)).toEqual(['currency']);
  });
});
