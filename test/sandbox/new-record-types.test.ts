// Bill credit notes, journals, payment methods, sales orders and transfers: generated in
// the public API's shapes (required fields, valid enums), consistent with the records
// they point at, deterministic per seed; and the pushable ones validated on push.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataTypeByKey } from '../../src/platforms/data-types.js';
import { generateRecords, generatedCount } from '../../src/sandbox/index.js';
import { type TestSandbox, startTestStack } from '../helpers/stack.js';
import { bearer } from './support.js';

type Json = Record<string, any>;

const ISO_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
const NEW_TYPES = ['billCreditNotes', 'journals', 'paymentMethods', 'salesOrders', 'transfers'];
const TENANT = { seed: 4242, invoices: 400 };
const all = (dataType: string, tenant = TENANT): Json[] => generateRecords(tenant, dataType, 0, generatedCount(tenant, dataType));
const cents = (n: number) => Math.round(n * 100);
const byId = (dataType: string) => new Map(all(dataType).map((r) => [r.id as string, r]));

function expectCommon(record: Json): void {
  expect(typeof record.id).toBe('string');
  expect(record.metadata).toEqual({ isDeleted: false });
  expect(record.modifiedDate).toMatch(ISO_Z);
  expect(record.sourceModifiedDate).toBe(record.modifiedDate);
}

/** Lines add up to the document's totals, to the cent. */
function expectTotals(record: Json): void {
  expect(record.lineItems.length).toBeGreaterThan(0);
  let sub = 0;
  let tax = 0;
  for (const line of record.lineItems) {
    expect(typeof line.unitAmount).toBe('number');
    expect(typeof line.quantity).toBe('number');
    expect(cents(line.subTotal)).toBe(cents(line.unitAmount) * line.quantity);
    expect(cents(line.totalAmount)).toBe(cents(line.subTotal) + cents(line.taxAmount));
    sub += cents(line.subTotal);
    tax += cents(line.taxAmount);
  }
  expect(cents(record.subTotal)).toBe(sub);
  expect(cents(record.totalTaxAmount)).toBe(tax);
  expect(cents(record.totalAmount)).toBe(sub + tax);
  expect(record.totalDiscount).toBe(0);
}

describe('generated records of the new data types', () => {
  it('exist for a small tenant, and are a pure function of the seed', () => {
    for (const type of NEW_TYPES) {
      expect(generatedCount({ seed: 1000, invoices: 12 }, type), type).toBeGreaterThan(0);
      expect(all(type), type).toEqual(all(type));
      expect(new Set(all(type).map((r) => r.id)).size, type).toBe(all(type).length);
      expect(all(type), type).not.toEqual(all(type, { seed: 4243, invoices: 400 }));
    }
  });

  it('bill credit notes: a real supplier, a valid status, totals that add up, credit left that fits the status', () => {
    const suppliers = byId('suppliers');
    const notes = all('billCreditNotes');
    expect(notes.length).toBe(40);
    const statuses = new Set<string>();
    for (const note of notes) {
      expectCommon(note);
      expect(note.supplierRef.supplierName).toBe(suppliers.get(note.supplierRef.id)?.supplierName);
      expect(['Unknown', 'Draft', 'Submitted', 'Paid', 'Void', 'PartiallyPaid']).toContain(note.status);
      expect(note.issueDate).toMatch(ISO_Z);
      expect(typeof note.discountPercentage).toBe('number');
      expectTotals(note);
      statuses.add(note.status);
      if (note.status === 'Submitted') expect(note.remainingCredit).toBe(note.totalAmount);
      else if (note.status === 'PartiallyPaid') expect(note.remainingCredit).toBeGreaterThan(0);
      else expect(note.remainingCredit).toBe(0);
      expect(note.remainingCredit).toBeLessThanOrEqual(note.totalAmount);
      if (note.status === 'Paid') expect(note.allocatedOnDate > note.issueDate).toBe(true);
      else expect(note.allocatedOnDate).toBeUndefined();
    }
    expect([...statuses].sort()).toEqual(['Draft', 'Paid', 'PartiallyPaid', 'Submitted', 'Void']);
  });

  it('journals: the ones journal entries are posted to, each set up before its first entry', () => {
    const journals = all('journals');
    expect(journals).toHaveLength(6);
    for (const journal of journals) {
      expectCommon(journal);
      for (const key of ['journalCode', 'name', 'type']) expect(typeof journal[key], key).toBe('string');
      expect(['Unknown', 'Active', 'Archived']).toContain(journal.status);
      expect(journal.hasChildren).toBe(false);
      expect(journal.createdOn).toMatch(ISO_Z);
    }
    const ids = new Set(journals.map((j) => j.id));
    const posted = new Set<string>();
    for (const entry of all('journalEntries')) {
      expect(ids.has(entry.journalRef.id)).toBe(true);
      posted.add(entry.journalRef.id);
      expect(journals.find((j) => j.id === entry.journalRef.id)!.createdOn < entry.postedOn).toBe(true);
    }
    expect(posted).toEqual(ids);
  });

  it('payment methods: a name, a public type and a status', () => {
    const methods = all('paymentMethods');
    expect(methods.length).toBeGreaterThan(0);
    for (const method of methods) {
      expectCommon(method);
      expect(typeof method.name).toBe('string');
      expect(['Unknown', 'Cash', 'Check', 'CreditCard', 'DebitCard', 'BankTransfer', 'Other']).toContain(method.type);
      expect(['Unknown', 'Active', 'Archived']).toContain(method.status);
    }
  });

  it('sales orders: a real customer, lines and totals, a status and an invoicing status that agree', () => {
    const customers = byId('customers');
    const orders = all('salesOrders');
    expect(orders.length).toBe(40);
    for (const order of orders) {
      expectCommon(order);
      expect(order.customerRef.companyName).toBe(customers.get(order.customerRef.id)?.customerName);
      expect(['Unknown', 'Draft', 'Open', 'Closed', 'Void']).toContain(order.status);
      expect(['Unknown', 'PartiallyInvoiced', 'Invoiced', 'NotInvoiced']).toContain(order.invoicingStatus);
      if (order.status === 'Closed') expect(order.invoicingStatus).toBe('Invoiced');
      if (order.status === 'Draft' || order.status === 'Void') expect(order.invoicingStatus).toBe('NotInvoiced');
      expect(order.issueDate).toMatch(ISO_Z);
      expect(order.expectedDeliveryDate > order.issueDate).toBe(true);
      expectTotals(order);
    }
  });

  it('transfers: the same amount from one bank account to another, on a date', () => {
    const accounts = byId('chartOfAccounts');
    const currency = all('company')[0]!.baseCurrency;
    const transfers = all('transfers');
    expect(transfers.length).toBe(40);
    for (const transfer of transfers) {
      expectCommon(transfer);
      expect(transfer.date).toMatch(ISO_Z);
      expect(typeof transfer.description).toBe('string');
      for (const side of [transfer.from, transfer.to]) {
        expect(Object.keys(side).sort()).toEqual(['accountRef', 'amount', 'currency']);
        const account = accounts.get(side.accountRef.id);
        expect(account?.isBankAccount).toBe(true);
        expect(side.accountRef.name).toBe(account?.name);
        expect(side.currency).toBe(currency);
      }
      expect(transfer.from.accountRef.id).not.toBe(transfer.to.accountRef.id);
      expect(transfer.from.amount).toBeGreaterThan(0);
      expect(transfer.to.amount).toBe(transfer.from.amount);
    }
  });
});

describe('pushing the new data types to a platform', () => {
  let sb: TestSandbox;
  let post: (dataType: string, body: unknown) => ReturnType<TestSandbox['call']>;
  let supplierId: string;
  let bank: [Json, Json];

  beforeAll(async () => {
    sb = await startTestStack('sandbox');
    const [tenant] = await sb.tenants('gbol', { invoices: 12, seed: 4242 });
    const headers = bearer(tenant!.tokens.accessToken!);
    post = (dataType, body) => sb.call('POST', `/platforms/gbol/tenants/${tenant!.orgId}/${dataType}`, { body, headers });
    const get = async (dataType: string) => (await sb.call('GET', `/platforms/gbol/tenants/${tenant!.orgId}/${dataType}?pageSize=100`, { headers })).body.results as Json[];
    supplierId = (await get('suppliers'))[0]!.id;
    const banks = (await get('chartOfAccounts')).filter((a) => a.isBankAccount);
    bank = [{ id: banks[0]!.id, name: banks[0]!.name }, { id: banks[1]!.id, name: banks[1]!.name }];
  });
  afterAll(async () => sb?.stop());

  it('is allowed for billCreditNotes, journals and transfers only', () => {
    expect(NEW_TYPES.filter((t) => dataTypeByKey(t)?.pushable)).toEqual(['billCreditNotes', 'journals', 'transfers']);
  });

  it('creates valid records and refuses invalid ones field by field', async () => {
    const transfer = { date: '2026-11-01T00:00:00Z', from: { accountRef: bank[0], amount: 250, currency: 'GBP' }, to: { accountRef: bank[1], amount: 250, currency: 'GBP' } };
    const created = await post('transfers', transfer);
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body).toMatchObject(transfer);
    const badTransfer = await post('transfers', { ...transfer, from: { amount: -1 }, date: 'soon' });
    expect(badTransfer.status).toBe(400);
    expect(badTransfer.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(['date', 'from.accountRef.id', 'from.amount']);

    const journal = await post('journals', { name: 'Fares', journalCode: 'FAR', status: 'Active' });
    expect(journal.status, JSON.stringify(journal.body)).toBe(200);
    const badJournal = await post('journals', { status: 'Open' });
    expect(badJournal.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(['name', 'status']);

    const note = { supplierRef: { id: supplierId }, issueDate: '2026-11-01T00:00:00Z', status: 'Submitted', subTotal: 100, totalTaxAmount: 20, totalAmount: 120, totalDiscount: 0, discountPercentage: 0, remainingCredit: 120 };
    expect((await post('billCreditNotes', note)).status).toBe(200);
    const badNote = await post('billCreditNotes', { ...note, supplierRef: { id: 'no-such-supplier' }, status: 'Open', remainingCredit: -5 });
    expect(badNote.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(['remainingCredit', 'status', 'supplierRef.id']);
  });

  it.each(['paymentMethods', 'salesOrders'])('refuses to create %s', async (dataType) => {
    expect((await post(dataType, { name: 'x' })).status).toBe(405);
  });
});
