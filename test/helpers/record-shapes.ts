// The fields the public accounting document requires of each data type's records, written
// here as the project's own data (the accounting SDK has no response schemas to check
// against): every record a read answers, and the `data` of every push answer, has them.
import { expect } from 'vitest';

/** Required fields by data type key (the chart of accounts is read at /data/accounts). */
export const REQUIRED_FIELDS: Record<string, string[]> = {
  chartOfAccounts: ['isBankAccount', 'status', 'type'],
  billCreditNotes: ['discountPercentage', 'remainingCredit', 'status', 'subTotal', 'totalAmount', 'totalDiscount', 'totalTaxAmount'],
  billPayments: ['date'],
  bills: ['issueDate', 'status', 'subTotal', 'taxAmount', 'totalAmount'],
  creditNotes: ['discountPercentage', 'remainingCredit', 'status', 'subTotal', 'totalAmount', 'totalDiscount', 'totalTaxAmount'],
  customers: ['status'],
  directCosts: ['currency', 'issueDate', 'lineItems', 'paymentAllocations', 'subTotal', 'taxAmount', 'totalAmount'],
  directIncomes: ['currency', 'issueDate', 'lineItems', 'paymentAllocations', 'subTotal', 'taxAmount', 'totalAmount'],
  invoices: ['amountDue', 'issueDate', 'status', 'totalAmount', 'totalTaxAmount'],
  items: ['isBillItem', 'isInvoiceItem', 'itemStatus', 'type'],
  payments: ['date'],
  suppliers: ['status'],
};

/** Fails naming each field the document requires of the data type that `record` lacks (or holds as null). */
export function expectRequiredFields(dataType: string, record: Record<string, unknown>, what = dataType): void {
  const missing = (REQUIRED_FIELDS[dataType] ?? []).filter((field) => record[field] === undefined || record[field] === null);
  expect(missing, `${what} ${String(record.id ?? '')} lacks required fields`).toEqual([]);
}
