// Invoices and the other documents with line items (bills, credit notes, purchase
// orders, direct costs and incomes). Arithmetic is done in whole cents: a line's total
// is its subtotal plus tax, a document's totals are the sums of its lines, so every
// amount is exact to 2 dp and the totals always add up.
import {
  BANK_ACCOUNTS, DAY_SPAN, EXPENSE_ACCOUNTS, INCOME_ACCOUNTS, NOTES, PRODUCTS, accountRef, amount, baseCurrency, contactIdentity, customerCount,
  isoDay, itemCount, itemIdentity, supplierCount, CURRENCIES, type Ref, type TenantSeed,
} from './catalog.js';
import { chance, int, pick, recordRng, uuidFrom, type Rng } from './prng.js';

export type InvoiceStatus = 'Unknown' | 'Draft' | 'Submitted' | 'PartiallyPaid' | 'Paid' | 'Void';

export interface LineItem {
  description: string;
  unitAmount: number;
  quantity: number;
  subTotal: number;
  taxAmount: number;
  totalAmount: number;
  accountRef: Ref;
  itemRef?: Ref;
}

/** The Invoice record of API.md, field for field. (A type alias, so it is also a plain JSON record.) */
export type Invoice = {
  id: string;
  invoiceNumber: string;
  customerRef: { id: string; companyName: string };
  issueDate: string;
  dueDate: string;
  paidOnDate?: string;
  currency: string;
  currencyRate?: number;
  lineItems: LineItem[];
  subTotal: number;
  totalTaxAmount: number;
  totalAmount: number;
  amountDue: number;
  status: InvoiceStatus;
  note?: string;
  metadata: { isDeleted: boolean };
  modifiedDate: string;
  sourceModifiedDate: string;
};

type Json = Record<string, unknown>;

const TAX_PERCENTS = [20, 20, 20, 5, 0];
const TERMS_DAYS = [14, 30, 30, 60];

/** What every line-item document shares, drawn in a fixed order from the record's stream. */
interface Document {
  rng: Rng;
  id: string;
  issueDay: number;
  terms: number;
  currency: string;
  currencyRate?: number;
  lineItems: LineItem[];
  subCents: number;
  taxCents: number;
}

function document(tenant: TenantSeed, type: string, index: number, accounts: readonly number[]): Document {
  const rng = recordRng(tenant.seed, type, index);
  const id = uuidFrom(rng);
  const issueDay = int(rng, 0, DAY_SPAN - 1);
  const terms = pick(rng, TERMS_DAYS);
  const base = baseCurrency(tenant.seed);
  // One document in ten is in a foreign currency, with the rate to the base currency.
  const foreign = chance(rng, 0.1) ? pick(rng, CURRENCIES.filter((c) => c !== base)) : undefined;
  const currencyRate = foreign ? Math.round((0.5 + rng()) * 10_000) / 10_000 : undefined;
  const lineItems: LineItem[] = [];
  let subCents = 0;
  let taxCents = 0;
  const lineCount = int(rng, 1, 4);
  for (let n = 0; n < lineCount; n++) {
    const item = chance(rng, 0.5) ? itemIdentity(tenant.seed, int(rng, 0, itemCount(tenant.seed) - 1)) : undefined;
    const description = item ? item.name : pick(rng, PRODUCTS);
    const quantity = int(rng, 1, 20);
    const unitCents = int(rng, 250, 75_000);
    const lineSub = quantity * unitCents;
    const lineTax = Math.round((lineSub * pick(rng, TAX_PERCENTS)) / 100);
    const line: LineItem = {
      description,
      unitAmount: amount(unitCents),
      quantity,
      subTotal: amount(lineSub),
      taxAmount: amount(lineTax),
      totalAmount: amount(lineSub + lineTax),
      accountRef: accountRef(tenant.seed, pick(rng, accounts)),
    };
    if (item) line.itemRef = { id: item.id, name: item.name };
    lineItems.push(line);
    subCents += lineSub;
    taxCents += lineTax;
  }
  const doc: Document = { rng, id, issueDay, terms, currency: foreign ?? base, lineItems, subCents, taxCents };
  if (currencyRate !== undefined) doc.currencyRate = currencyRate;
  return doc;
}

function weighted<T extends string>(rng: Rng, weights: ReadonlyArray<readonly [T, number]>): T {
  let r = rng();
  for (const [value, weight] of weights) {
    if (r < weight) return value;
    r -= weight;
  }
  return (weights[weights.length - 1] as readonly [T, number])[0];
}

/** Modified a few days after the last thing that happened to the document, at some time of day. */
function modified(rng: Rng, lastDay: number): { modifiedDate: string; sourceModifiedDate: string } {
  const stamp = isoDay(lastDay + int(rng, 0, 7), int(rng, 0, 86_399));
  return { modifiedDate: stamp, sourceModifiedDate: stamp };
}

/** What is still owed: nothing once paid or void, part of it when partly paid. */
function amountDueCents(rng: Rng, status: string, totalCents: number): number {
  if (status === 'Paid' || status === 'Void') return 0;
  return status === 'PartiallyPaid' ? int(rng, 1, totalCents - 1) : totalCents;
}

const INVOICE_STATUSES = [['Paid', 0.5], ['Submitted', 0.25], ['PartiallyPaid', 0.1], ['Draft', 0.1], ['Void', 0.05]] as const;

export function invoice(tenant: TenantSeed, index: number): Invoice {
  const d = document(tenant, 'invoices', index, INCOME_ACCOUNTS);
  const { rng } = d;
  const customer = contactIdentity(tenant.seed, 'customers', int(rng, 0, customerCount(tenant.seed) - 1));
  const status = weighted(rng, INVOICE_STATUSES);
  const totalCents = d.subCents + d.taxCents;
  const dueCents = amountDueCents(rng, status, totalCents);
  const paidOnDay = status === 'Paid' ? d.issueDay + int(rng, 1, d.terms + 20) : undefined;
  const note = chance(rng, 0.3) ? pick(rng, NOTES) : undefined;
  const record: Invoice = {
    id: d.id,
    invoiceNumber: `INV-${String(index + 1).padStart(6, '0')}`,
    customerRef: { id: customer.id, companyName: customer.name },
    issueDate: isoDay(d.issueDay),
    dueDate: isoDay(d.issueDay + d.terms),
    currency: d.currency,
    lineItems: d.lineItems,
    subTotal: amount(d.subCents),
    totalTaxAmount: amount(d.taxCents),
    totalAmount: amount(totalCents),
    amountDue: amount(dueCents),
    status,
    metadata: { isDeleted: false },
    ...modified(rng, paidOnDay ?? d.issueDay),
  };
  if (paidOnDay !== undefined) record.paidOnDate = isoDay(paidOnDay);
  if (d.currencyRate !== undefined) record.currencyRate = d.currencyRate;
  if (note !== undefined) record.note = note;
  return orderLike(record, INVOICE_ORDER);
}

// Keys in the order API.md lists them, so optional fields set late still read naturally.
const INVOICE_ORDER = ['id', 'invoiceNumber', 'customerRef', 'issueDate', 'dueDate', 'paidOnDate', 'currency', 'currencyRate', 'lineItems',
  'subTotal', 'totalTaxAmount', 'totalAmount', 'amountDue', 'status', 'note', 'metadata', 'modifiedDate', 'sourceModifiedDate'];

function orderLike<T extends object>(record: T, order: readonly string[]): T {
  const source = record as Json;
  const out: Json = {};
  for (const key of order) if (source[key] !== undefined) out[key] = source[key];
  return out as T;
}

/** Common tail of the other documents: currency, lines and totals. */
function money(d: Document): Json {
  const out: Json = { currency: d.currency };
  if (d.currencyRate !== undefined) out.currencyRate = d.currencyRate;
  out.lineItems = d.lineItems;
  out.subTotal = amount(d.subCents);
  return out;
}

const BILL_STATUSES = [['Paid', 0.5], ['Open', 0.3], ['PartiallyPaid', 0.1], ['Draft', 0.05], ['Void', 0.05]] as const;

export function bill(tenant: TenantSeed, index: number): Json {
  const d = document(tenant, 'bills', index, EXPENSE_ACCOUNTS);
  const { rng } = d;
  const supplier = contactIdentity(tenant.seed, 'suppliers', int(rng, 0, supplierCount(tenant.seed) - 1));
  const status = weighted(rng, BILL_STATUSES);
  const totalCents = d.subCents + d.taxCents;
  const dueCents = amountDueCents(rng, status, totalCents);
  const record: Json = {
    id: d.id,
    reference: `${pick(rng, ['PI', 'SUP', 'BILL'])}-${int(rng, 10_000, 99_999)}`,
    supplierRef: { id: supplier.id, supplierName: supplier.name },
    issueDate: isoDay(d.issueDay),
    dueDate: isoDay(d.issueDay + d.terms),
    ...money(d),
    taxAmount: amount(d.taxCents),
    totalAmount: amount(totalCents),
    amountDue: amount(dueCents),
    status,
    metadata: { isDeleted: false },
  };
  return { ...record, ...modified(rng, d.issueDay + (status === 'Paid' ? d.terms : 0)) };
}

/** A credit note's amounts, `remainingCents` of it not yet used. */
function creditAmounts(d: Document, totalCents: number, remainingCents: number): Json {
  return {
    ...money(d),
    totalTaxAmount: amount(d.taxCents),
    totalAmount: amount(totalCents),
    // Lines are never discounted here.
    totalDiscount: 0,
    discountPercentage: 0,
    remainingCredit: amount(remainingCents),
  };
}

const CREDIT_STATUSES = [['Submitted', 0.5], ['Paid', 0.35], ['Draft', 0.1], ['Void', 0.05]] as const;

export function creditNote(tenant: TenantSeed, index: number): Json {
  const d = document(tenant, 'creditNotes', index, INCOME_ACCOUNTS);
  const { rng } = d;
  const customer = contactIdentity(tenant.seed, 'customers', int(rng, 0, customerCount(tenant.seed) - 1));
  const status = weighted(rng, CREDIT_STATUSES);
  const totalCents = d.subCents + d.taxCents;
  return {
    id: d.id,
    creditNoteNumber: `CN-${String(index + 1).padStart(5, '0')}`,
    customerRef: { id: customer.id, companyName: customer.name },
    issueDate: isoDay(d.issueDay),
    ...creditAmounts(d, totalCents, status === 'Submitted' ? totalCents : 0),
    status,
    metadata: { isDeleted: false },
    ...modified(rng, d.issueDay),
  };
}

const BILL_CREDIT_STATUSES = [['Paid', 0.4], ['Submitted', 0.35], ['PartiallyPaid', 0.1], ['Draft', 0.1], ['Void', 0.05]] as const;

/** Credit a supplier has given the business, used up (Paid) against its bills over time. */
export function billCreditNote(tenant: TenantSeed, index: number): Json {
  const d = document(tenant, 'billCreditNotes', index, EXPENSE_ACCOUNTS);
  const { rng } = d;
  const supplier = contactIdentity(tenant.seed, 'suppliers', int(rng, 0, supplierCount(tenant.seed) - 1));
  const status = weighted(rng, BILL_CREDIT_STATUSES);
  const totalCents = d.subCents + d.taxCents;
  // Unused credit: all of it once issued, some of it when partly used, none when used up, void or draft.
  const remainingCents = status === 'Submitted' ? totalCents : status === 'PartiallyPaid' ? int(rng, 1, totalCents - 1) : 0;
  const allocatedDay = status === 'Paid' ? d.issueDay + int(rng, 1, 45) : undefined;
  const record: Json = {
    id: d.id,
    billCreditNoteNumber: `SCN-${String(index + 1).padStart(5, '0')}`,
    supplierRef: { id: supplier.id, supplierName: supplier.name },
    issueDate: isoDay(d.issueDay),
    ...creditAmounts(d, totalCents, remainingCents),
    status,
  };
  if (allocatedDay !== undefined) record.allocatedOnDate = isoDay(allocatedDay);
  return { ...record, metadata: { isDeleted: false }, ...modified(rng, allocatedDay ?? d.issueDay) };
}

const SALES_ORDER_STATUSES = [['Closed', 0.45], ['Open', 0.3], ['Draft', 0.15], ['Void', 0.1]] as const;

export function salesOrder(tenant: TenantSeed, index: number): Json {
  const d = document(tenant, 'salesOrders', index, INCOME_ACCOUNTS);
  const { rng } = d;
  const customer = contactIdentity(tenant.seed, 'customers', int(rng, 0, customerCount(tenant.seed) - 1));
  const status = weighted(rng, SALES_ORDER_STATUSES);
  // A closed order has been invoiced in full; an open one may have been in part; the rest not at all.
  const invoicingStatus = status === 'Closed' ? 'Invoiced' : status === 'Open' && chance(rng, 0.4) ? 'PartiallyInvoiced' : 'NotInvoiced';
  return {
    id: d.id,
    salesOrderNumber: `SO-${String(index + 1).padStart(6, '0')}`,
    customerRef: { id: customer.id, companyName: customer.name },
    issueDate: isoDay(d.issueDay),
    expectedDeliveryDate: isoDay(d.issueDay + int(rng, 3, 30)),
    status,
    invoicingStatus,
    ...money(d),
    totalDiscount: 0,
    totalTaxAmount: amount(d.taxCents),
    totalAmount: amount(d.subCents + d.taxCents),
    metadata: { isDeleted: false },
    ...modified(rng, d.issueDay),
  };
}

const PO_STATUSES = [['Closed', 0.5], ['Open', 0.3], ['Draft', 0.15], ['Void', 0.05]] as const;

export function purchaseOrder(tenant: TenantSeed, index: number): Json {
  const d = document(tenant, 'purchaseOrders', index, EXPENSE_ACCOUNTS);
  const { rng } = d;
  const supplier = contactIdentity(tenant.seed, 'suppliers', int(rng, 0, supplierCount(tenant.seed) - 1));
  return {
    id: d.id,
    purchaseOrderNumber: `PO-${String(index + 1).padStart(5, '0')}`,
    supplierRef: { id: supplier.id, supplierName: supplier.name },
    issueDate: isoDay(d.issueDay),
    expectedDeliveryDate: isoDay(d.issueDay + int(rng, 3, 30)),
    ...money(d),
    totalTaxAmount: amount(d.taxCents),
    totalAmount: amount(d.subCents + d.taxCents),
    status: weighted(rng, PO_STATUSES),
    metadata: { isDeleted: false },
    ...modified(rng, d.issueDay),
  };
}

/** A direct cost (spend money) or direct income (receive money): paid at once, no invoice or bill. */
export function directTransaction(tenant: TenantSeed, kind: 'directCosts' | 'directIncomes', index: number): Json {
  const cost = kind === 'directCosts';
  const d = document(tenant, kind, index, cost ? EXPENSE_ACCOUNTS : INCOME_ACCOUNTS);
  const { rng } = d;
  const contactType = cost ? 'suppliers' : 'customers';
  const contact = contactIdentity(tenant.seed, contactType, int(rng, 0, (cost ? supplierCount : customerCount)(tenant.seed) - 1));
  const total = amount(d.subCents + d.taxCents);
  const paidOn = isoDay(d.issueDay);
  // Paid in full, in the document's currency, from (or into) the first bank account on the day it was recorded.
  const rate = d.currencyRate === undefined ? {} : { currencyRate: d.currencyRate };
  const payment = { id: uuidFrom(recordRng(tenant.seed, `${kind}/payment`, index)), accountRef: accountRef(tenant.seed, BANK_ACCOUNTS[0] as number), currency: d.currency, ...rate, paidOnDate: paidOn, totalAmount: total };
  return {
    id: d.id,
    reference: `${cost ? 'SPEND' : 'RECV'}-${String(index + 1).padStart(5, '0')}`,
    contactRef: { id: contact.id, dataType: contactType },
    issueDate: paidOn,
    ...money(d),
    taxAmount: amount(d.taxCents),
    totalAmount: total,
    paymentAllocations: [{ payment, allocation: { currency: d.currency, ...rate, allocatedOnDate: paidOn, totalAmount: total } }],
    metadata: { isDeleted: false },
    ...modified(rng, d.issueDay),
  };
}
