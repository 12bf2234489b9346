// The generated records' shapes where they once differed from the public API's: a journal
// entry's journalRef (an object naming a real journal), the on-account link type of bill
// payments, credit notes' discount fields, and direct costs' and incomes' payment
// allocations. Records come straight from the generators, for a seeded tenant.
import { describe, expect, it } from 'vitest';
import { generateRecords, generatedCount } from '../../src/sandbox/index.js';

type Json = Record<string, any>;

const TENANT = { seed: 4242, invoices: 400 };
const all = (dataType: string): Json[] => generateRecords(TENANT, dataType, 0, generatedCount(TENANT, dataType));
const cents = (n: number) => Math.round(n * 100);

// The public API's link types of bill payment lines.
const BILL_PAYMENT_LINK_TYPES = ['Unknown', 'Unlinked', 'Bill', 'Other', 'CreditNote', 'BillPayment', 'PaymentOnAccount', 'Refund', 'ManualJournal', 'Discount'];

describe('generated record shapes', () => {
  it('journal entries point at a journal the journals data type lists, by id and name', () => {
    const journals = new Map(all('journals').map((j) => [j.id as string, j]));
    const entries = all('journalEntries');
    expect(entries.length).toBeGreaterThan(0);
    for (const entry of entries) {
      expect(entry.journalRef).toEqual({ id: expect.any(String), name: expect.any(String) });
      const journal = journals.get(entry.journalRef.id);
      expect(journal, entry.journalRef.id).toBeDefined();
      expect(entry.journalRef.name).toBe(journal!.name);
      expect(entry.description).toBe(journal!.name);
    }
  });

  it('bill payments on account link with type PaymentOnAccount to the supplier', () => {
    const payments = all('billPayments');
    const onAccount = payments.filter((p) => p.lines.some((l: Json) => l.links.some((k: Json) => k.type !== 'Bill')));
    expect(onAccount.length).toBeGreaterThan(0);
    for (const payment of payments) {
      for (const line of payment.lines) for (const link of line.links) expect(BILL_PAYMENT_LINK_TYPES).toContain(link.type);
    }
    for (const payment of onAccount) {
      const [link] = payment.lines[0].links;
      expect(link).toEqual({ type: 'PaymentOnAccount', id: payment.supplierRef.id, amount: -payment.totalAmount });
    }
  });

  it('credit notes carry totalDiscount and discountPercentage with the other required totals', () => {
    const notes = all('creditNotes');
    expect(notes.length).toBeGreaterThan(0);
    for (const note of notes) {
      for (const key of ['totalAmount', 'totalDiscount', 'subTotal', 'totalTaxAmount', 'discountPercentage', 'remainingCredit']) {
        expect(typeof note[key], key).toBe('number');
      }
      expect(note.discountPercentage).toBeGreaterThanOrEqual(0);
      expect(note.discountPercentage).toBeLessThanOrEqual(100);
      expect(cents(note.subTotal) + cents(note.totalTaxAmount)).toBe(cents(note.totalAmount));
    }
  });

  it.each(['directCosts', 'directIncomes'])('%s carry payment allocations that pay them in full from a bank account', (dataType) => {
    const banks = new Set(all('chartOfAccounts').filter((a) => a.isBankAccount).map((a) => a.id as string));
    const records = all(dataType);
    expect(records.length).toBeGreaterThan(0);
    for (const record of records) {
      expect(Array.isArray(record.paymentAllocations), record.id).toBe(true);
      expect(record.paymentAllocations.length).toBeGreaterThan(0);
      let allocated = 0;
      for (const { payment, allocation } of record.paymentAllocations) {
        expect(typeof payment.id).toBe('string');
        expect(banks.has(payment.accountRef.id)).toBe(true);
        expect(payment.currency).toBe(record.currency);
        expect(allocation.currency).toBe(record.currency);
        expect(payment.currencyRate).toBe(record.currencyRate);
        expect(allocation.allocatedOnDate).toBe(record.issueDate);
        allocated += cents(allocation.totalAmount);
      }
      expect(allocated).toBe(cents(record.totalAmount));
    }
  });
});
