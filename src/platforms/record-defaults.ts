// The fields the public accounting document requires of each pushable data type's record,
// and the value a created or updated record takes for one its writer left out: what the
// platform then holds, and so what a push answers and a later sync reads. Amounts follow
// from the record's others where they can (a credit note's remaining credit is its total
// until allocated); a status the writer did not give is Unknown for a document and Active
// for a ledger entity (an account, a contact, an item) a platform creates ready for use.
import type { DataTypeKey } from './data-types.js';

type Json = Record<string, unknown>;
/** A required field's value for a record that lacks it. */
type Fill = (record: Json) => unknown;

const number = (record: Json, ...fields: string[]): number | undefined => {
  for (const field of fields) if (typeof record[field] === 'number') return record[field] as number;
  return undefined;
};
const total = (r: Json) => number(r, 'totalAmount') ?? 0;
const tax = (r: Json) => number(r, 'totalTaxAmount', 'taxAmount') ?? 0;
/** The lines before tax: the total less its tax. */
const net = (r: Json) => Math.round((total(r) - tax(r)) * 100) / 100;
const constant = (value: unknown): Fill => () => value;

const DOCUMENT_CREDIT: Record<string, Fill> = {
  discountPercentage: constant(0), remainingCredit: total, status: constant('Unknown'), subTotal: net,
  totalAmount: constant(0), totalDiscount: constant(0), totalTaxAmount: tax,
};
const DIRECT: Record<string, Fill> = {
  lineItems: constant([]), paymentAllocations: constant([]), subTotal: net, taxAmount: tax, totalAmount: constant(0),
};

const REQUIRED: Partial<Record<DataTypeKey, Record<string, Fill>>> = {
  chartOfAccounts: { isBankAccount: constant(false), status: constant('Active'), type: constant('Unknown') },
  billCreditNotes: DOCUMENT_CREDIT,
  creditNotes: DOCUMENT_CREDIT,
  bills: { status: constant('Unknown'), subTotal: net, taxAmount: tax, totalAmount: constant(0) },
  invoices: { amountDue: total, status: constant('Unknown'), totalAmount: constant(0), totalTaxAmount: tax },
  customers: { status: constant('Active') },
  suppliers: { status: constant('Active') },
  directCosts: DIRECT,
  directIncomes: DIRECT,
  items: { isBillItem: constant(false), isInvoiceItem: constant(false), itemStatus: constant('Active'), type: constant('Unknown') },
};

/**
 * The record with every field its data type requires (the push checks require those with
 * no sensible value, such as dates and a direct cost's currency, before it is sent).
 */
export function withRequiredFields<T extends Json>(dataType: string, record: T): T {
  const fills = REQUIRED[dataType as DataTypeKey];
  if (!fills) return record;
  const complete: Json = { ...record };
  for (const [field, fill] of Object.entries(fills)) if (complete[field] === undefined || complete[field] === null) complete[field] = fill(complete);
  return complete as T;
}
