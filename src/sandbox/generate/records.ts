// Every data type's generator: how many records a tenant has and record i of it, a pure
// function of (tenant seed, data type, i). Contacts, accounts and items are small lists;
// transactional types scale with the tenant's invoice volume.
import type { DataTypeKey } from '../../platforms/data-types.js';
import {
  ACCOUNTS, BANK_ACCOUNTS, DAY_SPAN, EXPENSE_ACCOUNTS, TAX_RATES, accountRef, address, amount, bankAccountRef, baseCurrency,
  companyName, contactIdentity, customerCount, emailFor, isoDay, itemCount, itemIdentity, personName, phone, supplierCount,
  type AccountDef, type TenantSeed,
} from './catalog.js';
import { bill, billCreditNote, creditNote, directTransaction, invoice, purchaseOrder, salesOrder } from './invoices.js';
import { JOURNALS, journal, journalRef, paymentMethod, paymentMethodCount, transfer } from './ledger.js';
import { chance, int, pick, recordRng, uuidFrom, type Rng } from './prng.js';

type Json = Record<string, unknown>;

interface Generator {
  count(tenant: TenantSeed): number;
  record(tenant: TenantSeed, index: number): Json;
}

function stamps(rng: Rng, day = int(rng, 0, DAY_SPAN - 1)): Json {
  const stamp = isoDay(day, int(rng, 0, 86_399));
  return { metadata: { isDeleted: false }, modifiedDate: stamp, sourceModifiedDate: stamp };
}

function contact(tenant: TenantSeed, type: 'customers' | 'suppliers', index: number): Json {
  const { id, name, rng } = contactIdentity(tenant.seed, type, index);
  const person = personName(rng);
  const record: Json = {
    id,
    [type === 'customers' ? 'customerName' : 'supplierName']: name,
    contactName: person,
    emailAddress: emailFor(person, rng),
    phone: phone(rng),
    defaultCurrency: baseCurrency(tenant.seed),
    addresses: [address(rng, 'Billing')],
  };
  if (chance(rng, 0.5)) record.taxNumber = `GB${int(rng, 100_000_000, 999_999_999)}`;
  record.status = chance(rng, 0.9) ? 'Active' : 'Archived';
  return { ...record, ...stamps(rng) };
}

function account(tenant: TenantSeed, index: number): Json {
  const rng = recordRng(tenant.seed, 'chartOfAccounts', index);
  const def = ACCOUNTS[index] as AccountDef;
  return {
    id: uuidFrom(rng),
    nominalCode: def.nominalCode,
    name: def.name,
    description: def.name,
    type: def.type,
    fullyQualifiedCategory: def.category,
    currency: baseCurrency(tenant.seed),
    currentBalance: amount(int(rng, 0, 5_000_000)),
    isBankAccount: def.bank === true,
    status: 'Active',
    ...stamps(rng),
  };
}

/**
 * Payment i settles invoice 2i or 2i+1 (the first with money received), so payments
 * agree with the invoices they link to; with neither paid, it is a payment on account.
 */
function settlement(tenant: TenantSeed, kind: 'payments' | 'billPayments', index: number): Json {
  const rng = recordRng(tenant.seed, kind, index);
  const id = uuidFrom(rng);
  const sales = kind === 'payments';
  const docs = [2 * index, 2 * index + 1].map((j) => (sales ? invoice(tenant, j) : bill(tenant, j)) as Json);
  const paidCents = (d: Json) => (d.status === 'Void' ? 0 : Math.round(((d.totalAmount as number) - (d.amountDue as number)) * 100));
  const settled = docs.find((d) => paidCents(d) > 0);
  const contactRef = sales ? 'customerRef' : 'supplierRef';
  const head: Json = { id, [contactRef]: (settled ?? (docs[0] as Json))[contactRef], accountRef: accountRef(tenant.seed, BANK_ACCOUNTS[int(rng, 0, 1)] as number) };
  if (settled) {
    const cents = paidCents(settled);
    const record: Json = { ...head, totalAmount: amount(cents), currency: settled.currency };
    if (settled.currencyRate !== undefined) record.currencyRate = settled.currencyRate;
    record.date = (settled.paidOnDate ?? settled.modifiedDate) as string;
    record.reference = `${sales ? 'RCPT' : 'PMT'}-${String(index + 1).padStart(6, '0')}`;
    record.lines = [{ amount: amount(cents), links: [{ type: sales ? 'Invoice' : 'Bill', id: settled.id, amount: amount(-cents) }] }];
    // Recorded when the document it settles last changed.
    return { ...record, metadata: { isDeleted: false }, modifiedDate: settled.modifiedDate, sourceModifiedDate: settled.modifiedDate };
  }
  const cents = int(rng, 1_000, 100_000);
  const day = int(rng, 0, DAY_SPAN - 1);
  // The public link type of money on account, for payments and bill payments alike.
  const onAccount = { type: 'PaymentOnAccount', id: (head[contactRef] as { id: string }).id, amount: amount(-cents) };
  return {
    ...head,
    totalAmount: amount(cents),
    currency: baseCurrency(tenant.seed),
    date: isoDay(day),
    reference: `${sales ? 'RCPT' : 'PMT'}-${String(index + 1).padStart(6, '0')}`,
    lines: [{ amount: amount(cents), links: [onAccount] }],
    ...stamps(rng, day),
  };
}

function journalEntry(tenant: TenantSeed, index: number): Json {
  const rng = recordRng(tenant.seed, 'journalEntries', index);
  const id = uuidFrom(rng);
  const day = int(rng, 0, DAY_SPAN - 1);
  // The journal the entry is posted to; its name describes the entry.
  const posted = int(rng, 0, JOURNALS.length - 1);
  const description = (JOURNALS[posted] as (typeof JOURNALS)[number]).name;
  const cents = int(rng, 1_000, 500_000);
  const currency = baseCurrency(tenant.seed);
  // Balanced: the debit and the credit net to zero.
  const debit = accountRef(tenant.seed, pick(rng, EXPENSE_ACCOUNTS));
  const credit = accountRef(tenant.seed, pick(rng, BANK_ACCOUNTS));
  return {
    id,
    journalRef: journalRef(tenant.seed, posted),
    description,
    postedOn: isoDay(day),
    createdOn: isoDay(day),
    journalLines: [
      { description, netAmount: amount(cents), currency, accountRef: debit },
      { description, netAmount: amount(-cents), currency, accountRef: credit },
    ],
    ...stamps(rng, day),
  };
}

function item(tenant: TenantSeed, index: number): Json {
  const { id, name, rng } = itemIdentity(tenant.seed, index);
  const type = pick(rng, ['Inventory', 'NonInventory', 'Service']);
  return {
    id,
    code: `ITM-${String(index + 1).padStart(4, '0')}`,
    name,
    type,
    itemStatus: 'Active',
    isInvoiceItem: true,
    isBillItem: type !== 'Service',
    unitPrice: amount(int(rng, 250, 75_000)),
    ...stamps(rng),
  };
}

function taxRate(tenant: TenantSeed, index: number): Json {
  const rng = recordRng(tenant.seed, 'taxRates', index);
  const def = TAX_RATES[index] as (typeof TAX_RATES)[number];
  return { id: uuidFrom(rng), code: def.code, name: def.name, effectiveTaxRate: def.rate, totalTaxRate: def.rate, status: 'Active', ...stamps(rng) };
}

/** The tenant's organisation name: the company info record's name, shown in admin lists. */
export function tenantName(seed: number): string {
  return companyInfo({ seed, invoices: 0 }).companyName as string;
}

function companyInfo(tenant: TenantSeed): Json {
  const rng = recordRng(tenant.seed, 'company', 0);
  const id = uuidFrom(rng);
  const name = companyName(rng);
  const slug = name.split(' ')[0]?.toLowerCase() ?? 'example';
  return {
    id,
    companyName: name,
    companyLegalName: name,
    baseCurrency: baseCurrency(tenant.seed),
    registrationNumber: String(int(rng, 10_000_000, 99_999_999)),
    taxNumber: `GB${int(rng, 100_000_000, 999_999_999)}`,
    financialYearStartDate: isoDay(0),
    addresses: [address(rng, 'Billing')],
    phoneNumbers: [{ number: phone(rng), type: 'Landline' }],
    webLinks: [{ type: 'Website', url: `https://www.${slug}.example` }],
    createdDate: isoDay(-int(rng, 30, 2_000)),
    ...stamps(rng),
  };
}

const INSTITUTIONS = ['Barclays', 'HSBC', 'Lloyds', 'NatWest', 'Monzo Business', 'Starling'];

function bankAccount(tenant: TenantSeed, index: number): Json {
  const rng = recordRng(tenant.seed, 'bankAccounts', index);
  const id = uuidFrom(rng);
  const def = ACCOUNTS[BANK_ACCOUNTS[index] as number] as AccountDef;
  const balance = amount(int(rng, -200_000, 10_000_000));
  return {
    id,
    accountName: def.name,
    accountType: def.type === 'Asset' ? 'Debit' : 'Credit',
    nominalCode: def.nominalCode,
    sortCode: `${int(rng, 10, 99)}-${int(rng, 10, 99)}-${int(rng, 10, 99)}`,
    accountNumber: String(int(rng, 10_000_000, 99_999_999)),
    currency: baseCurrency(tenant.seed),
    balance,
    availableBalance: balance,
    institution: pick(rng, INSTITUTIONS),
    ...stamps(rng),
  };
}

const BANK_LINES = ['Card payment', 'Direct debit', 'Faster payment received', 'Standing order', 'Bank charges', 'Transfer'];

function accountTransaction(tenant: TenantSeed, index: number): Json {
  const rng = recordRng(tenant.seed, 'accountTransactions', index);
  const id = uuidFrom(rng);
  const bank = bankAccountRef(tenant.seed, int(rng, 0, BANK_ACCOUNTS.length - 1));
  const day = int(rng, 0, DAY_SPAN - 1);
  const inbound = chance(rng, 0.45);
  return {
    id,
    bankAccountRef: { id: bank.id, accountName: bank.name },
    date: isoDay(day),
    description: pick(rng, BANK_LINES),
    amount: amount((inbound ? 1 : -1) * int(rng, 100, 500_000)),
    currency: baseCurrency(tenant.seed),
    status: chance(rng, 0.8) ? 'Reconciled' : 'Unreconciled',
    ...stamps(rng, day),
  };
}

const TRACKING: ReadonlyArray<readonly [string, number | null]> = [
  ['Region', null], ['North', 0], ['South', 0], ['Department', null], ['Sales', 3], ['Operations', 3],
];

function trackingCategory(tenant: TenantSeed, index: number): Json {
  const [name, parent] = TRACKING[index] as readonly [string, number | null];
  const rng = recordRng(tenant.seed, 'trackingCategories', index);
  const record: Json = { id: uuidFrom(rng), name, hasChildren: parent === null, status: 'Active' };
  if (parent !== null) record.parentId = uuidFrom(recordRng(tenant.seed, 'trackingCategories', parent));
  return { ...record, ...stamps(rng) };
}

const fixed = (n: number) => () => n;
const ratio = (r: number) => (t: TenantSeed) => Math.round(t.invoices * r);

// Typed by DataTypeKey, so a data type added to the registry without a generator fails to compile.
const GENERATORS: Record<DataTypeKey, Generator> = {
  invoices: { count: (t) => t.invoices, record: invoice },
  bills: { count: ratio(0.6), record: bill },
  customers: { count: (t) => customerCount(t.seed), record: (t, i) => contact(t, 'customers', i) },
  suppliers: { count: (t) => supplierCount(t.seed), record: (t, i) => contact(t, 'suppliers', i) },
  chartOfAccounts: { count: fixed(ACCOUNTS.length), record: account },
  payments: { count: (t) => Math.floor(t.invoices / 2), record: (t, i) => settlement(t, 'payments', i) },
  billPayments: { count: (t) => Math.floor(ratio(0.6)(t) / 2), record: (t, i) => settlement(t, 'billPayments', i) },
  creditNotes: { count: ratio(0.1), record: creditNote },
  journalEntries: { count: ratio(0.2), record: journalEntry },
  items: { count: (t) => itemCount(t.seed), record: item },
  taxRates: { count: fixed(TAX_RATES.length), record: taxRate },
  company: { count: fixed(1), record: companyInfo },
  bankAccounts: { count: fixed(BANK_ACCOUNTS.length), record: bankAccount },
  accountTransactions: { count: (t) => t.invoices, record: accountTransaction },
  directCosts: { count: ratio(0.15), record: (t, i) => directTransaction(t, 'directCosts', i) },
  directIncomes: { count: ratio(0.15), record: (t, i) => directTransaction(t, 'directIncomes', i) },
  purchaseOrders: { count: ratio(0.15), record: purchaseOrder },
  trackingCategories: { count: fixed(TRACKING.length), record: trackingCategory },
  billCreditNotes: { count: ratio(0.1), record: billCreditNote },
  journals: { count: fixed(JOURNALS.length), record: journal },
  paymentMethods: { count: paymentMethodCount, record: paymentMethod },
  salesOrders: { count: ratio(0.1), record: salesOrder },
  transfers: { count: ratio(0.1), record: transfer },
};

const generatorOf = (dataType: string): Generator | undefined => (GENERATORS as Record<string, Generator>)[dataType];

/** How many generated records of `dataType` the tenant has (pushed ones come after). */
export function generatedCount(tenant: TenantSeed, dataType: string): number {
  return generatorOf(dataType)?.count(tenant) ?? 0;
}

/** Generated records [offset, offset + limit) of `dataType`, computed on demand. */
export function generateRecords(tenant: TenantSeed, dataType: string, offset: number, limit: number): Json[] {
  const generator = generatorOf(dataType);
  if (!generator) return [];
  const end = Math.min(generator.count(tenant), offset + limit);
  const out: Json[] = [];
  for (let i = offset; i < end; i++) out.push(generator.record(tenant, i));
  return out;
}

/** Ids of the generated customers or suppliers (small lists), for push validation. */
export function generatedContactIds(tenant: TenantSeed, dataType: 'customers' | 'suppliers'): string[] {
  return Array.from({ length: generatedCount(tenant, dataType) }, (_, i) => contactIdentity(tenant.seed, dataType, i).id);
}
