// Reference data every tenant shares in shape (chart of accounts, tax rates) and the
// seeded identities other records point at (customers, suppliers, items, bank
// accounts). An identity is computed from (seed, type, index) alone, so an invoice's
// customerRef names a customer that the customers data type really lists.
import { isoSeconds } from '../../lib/clock.js';
import { int, mixSeed, pick, recordRng, uuidFrom, type Rng } from './prng.js';

export interface TenantSeed {
  seed: number;
  /** Invoice volume; the transactional types scale from it. */
  invoices: number;
}

export interface Ref {
  id: string;
  name: string;
}

// Dates and money.
const BASE = Date.UTC(2023, 0, 1);
const DAY_MS = 86_400_000;
/** Generated documents are dated over three years from BASE. */
export const DAY_SPAN = 1095;

/** "2023-01-01T" of each day number met so far: a tenant's pages date thousands of records over a few thousand days. */
const dayPrefixes = new Map<number, string>();
const TWO_DIGITS = Array.from({ length: 60 }, (_, n) => String(n).padStart(2, '0'));

/** The time `secondOfDay` seconds into day `day` (from BASE), as isoSeconds writes it. */
export function isoDay(day: number, secondOfDay = 0): string {
  const seconds = day * 86_400 + secondOfDay;
  const whole = Math.floor(seconds / 86_400);
  let prefix = dayPrefixes.get(whole);
  if (prefix === undefined) {
    prefix = isoSeconds(new Date(BASE + whole * DAY_MS)).slice(0, 11);
    dayPrefixes.set(whole, prefix);
  }
  const left = seconds - whole * 86_400;
  return `${prefix}${TWO_DIGITS[Math.floor(left / 3600)]}:${TWO_DIGITS[Math.floor(left / 60) % 60]}:${TWO_DIGITS[left % 60]}Z`;
}

/** Whole cents to an amount: exact to 2 dp, so sums of cents never drift. */
export const amount = (cents: number): number => cents / 100;

export const CURRENCIES = ['GBP', 'USD', 'EUR', 'AUD', 'CAD', 'NZD'] as const;

export function baseCurrency(seed: number): string {
  return CURRENCIES[mixSeed(seed, 1) % CURRENCIES.length] as string;
}

// Words.
const NAME_HEADS = ['Northwind', 'Bluebell', 'Harbour', 'Summit', 'Oakridge', 'Riverside', 'Granite', 'Evergreen', 'Silverline', 'Kestrel',
  'Meridian', 'Beacon', 'Copperfield', 'Lakeside', 'Redwood', 'Highland', 'Sterling', 'Falcon', 'Willow', 'Atlas'];
const NAME_TRADES = ['Trading', 'Logistics', 'Consulting', 'Bakery', 'Engineering', 'Design', 'Foods', 'Print', 'Systems', 'Motors',
  'Interiors', 'Digital', 'Build', 'Health', 'Outfitters', 'Analytics', 'Brewing', 'Studios', 'Supplies', 'Energy'];
const NAME_TAILS = ['Ltd', 'Limited', 'LLP', 'Inc', '& Co', 'Group'];
const FIRST_NAMES = ['Olivia', 'James', 'Amelia', 'Noah', 'Priya', 'Mateo', 'Chloe', 'Kwame', 'Sofia', 'Liam', 'Aisha', 'Tom', 'Mei', 'Jack'];
const LAST_NAMES = ['Smith', 'Patel', 'Jones', 'Nguyen', 'Williams', 'Garcia', 'Brown', 'Okafor', 'Taylor', 'Müller', 'Wilson', 'Evans'];
const STREETS = ['High Street', 'Station Road', 'Church Lane', 'Mill Road', 'Victoria Street', 'Park Avenue', 'King Street', 'Queens Road'];
const CITIES = [
  { city: 'London', country: 'GB' }, { city: 'Manchester', country: 'GB' }, { city: 'Bristol', country: 'GB' },
  { city: 'Dublin', country: 'IE' }, { city: 'New York', country: 'US' }, { city: 'Austin', country: 'US' },
  { city: 'Sydney', country: 'AU' }, { city: 'Toronto', country: 'CA' }, { city: 'Auckland', country: 'NZ' },
];
export const PRODUCTS = ['Consulting services', 'Website maintenance', 'Annual support contract', 'Office chairs', 'Printer paper (box)',
  'Delivery charge', 'Software licence', 'Training session', 'Catering', 'Hardware repair', 'Design work', 'Copywriting',
  'Cloud hosting', 'Installation', 'Cleaning services', 'Marketing campaign', 'Stationery', 'Laptop stand', 'Coffee beans (kg)'];
export const NOTES = ['Thank you for your business.', 'Payment due within terms.', 'Please quote the reference with your payment.',
  'Goods remain our property until paid in full.', 'Early payment appreciated.'];

export function companyName(rng: Rng): string {
  return `${pick(rng, NAME_HEADS)} ${pick(rng, NAME_TRADES)} ${pick(rng, NAME_TAILS)}`;
}

export function personName(rng: Rng): string {
  return `${pick(rng, FIRST_NAMES)} ${pick(rng, LAST_NAMES)}`;
}

export function emailFor(name: string, rng: Rng): string {
  const local = name.split(' ')[0]?.toLowerCase().normalize('NFKD').replace(/[^a-z]/g, '') || 'accounts';
  return `${local}@${pick(rng, NAME_HEADS).toLowerCase()}${pick(rng, ['.com', '.co.uk', '.io', '.net'])}`;
}

export function address(rng: Rng, type: string): Record<string, string> {
  const place = pick(rng, CITIES);
  return { type, line1: `${int(rng, 1, 250)} ${pick(rng, STREETS)}`, city: place.city, postalCode: `${pick(rng, ['AB', 'CD', 'EF', 'KT', 'SW'])}${int(rng, 1, 99)} ${int(rng, 1, 9)}XY`, country: place.country };
}

export function phone(rng: Rng): string {
  return `+44 20 ${int(rng, 1000, 9999)} ${int(rng, 1000, 9999)}`;
}

// Chart of accounts: the same list for every tenant; ids differ by seed.
export type AccountType = 'Asset' | 'Liability' | 'Equity' | 'Income' | 'Expense';
export interface AccountDef {
  nominalCode: string;
  name: string;
  type: AccountType;
  category: string;
  bank?: boolean;
}

export const ACCOUNTS: readonly AccountDef[] = [
  { nominalCode: '090', name: 'Business Current Account', type: 'Asset', category: 'Asset.Current.Bank', bank: true },
  { nominalCode: '091', name: 'Business Savings Account', type: 'Asset', category: 'Asset.Current.Bank', bank: true },
  { nominalCode: '092', name: 'Company Credit Card', type: 'Liability', category: 'Liability.Current.CreditCard', bank: true },
  { nominalCode: '610', name: 'Accounts Receivable', type: 'Asset', category: 'Asset.Current.AccountsReceivable' },
  { nominalCode: '630', name: 'Inventory', type: 'Asset', category: 'Asset.Current.Inventory' },
  { nominalCode: '710', name: 'Office Equipment', type: 'Asset', category: 'Asset.Fixed.Equipment' },
  { nominalCode: '800', name: 'Accounts Payable', type: 'Liability', category: 'Liability.Current.AccountsPayable' },
  { nominalCode: '820', name: 'Sales Tax', type: 'Liability', category: 'Liability.Current.Tax' },
  { nominalCode: '900', name: 'Loan', type: 'Liability', category: 'Liability.NonCurrent.Loans' },
  { nominalCode: '960', name: 'Retained Earnings', type: 'Equity', category: 'Equity.RetainedEarnings' },
  { nominalCode: '970', name: 'Owner Funds Introduced', type: 'Equity', category: 'Equity.OwnersEquity' },
  { nominalCode: '200', name: 'Sales', type: 'Income', category: 'Income.Revenue.Sales' },
  { nominalCode: '260', name: 'Other Revenue', type: 'Income', category: 'Income.Revenue.Other' },
  { nominalCode: '270', name: 'Interest Income', type: 'Income', category: 'Income.Other.Interest' },
  { nominalCode: '310', name: 'Cost of Goods Sold', type: 'Expense', category: 'Expense.CostOfSales' },
  { nominalCode: '400', name: 'Advertising', type: 'Expense', category: 'Expense.Operating.Advertising' },
  { nominalCode: '429', name: 'General Expenses', type: 'Expense', category: 'Expense.Operating.General' },
  { nominalCode: '453', name: 'Office Expenses', type: 'Expense', category: 'Expense.Operating.Office' },
  { nominalCode: '469', name: 'Rent', type: 'Expense', category: 'Expense.Operating.Rent' },
  { nominalCode: '477', name: 'Wages and Salaries', type: 'Expense', category: 'Expense.Operating.Payroll' },
  { nominalCode: '493', name: 'Travel', type: 'Expense', category: 'Expense.Operating.Travel' },
];

const indexesWhere = (test: (a: AccountDef) => boolean): number[] =>
  ACCOUNTS.flatMap((a, i) => (test(a) ? [i] : []));
export const INCOME_ACCOUNTS = indexesWhere((a) => a.type === 'Income');
export const EXPENSE_ACCOUNTS = indexesWhere((a) => a.type === 'Expense');
export const BANK_ACCOUNTS = indexesWhere((a) => a.bank === true);

export function accountRef(seed: number, index: number): Ref {
  return { id: uuidFrom(recordRng(seed, 'chartOfAccounts', index)), name: (ACCOUNTS[index] as AccountDef).name };
}

export interface TaxRateDef {
  code: string;
  name: string;
  rate: number;
}

export const TAX_RATES: readonly TaxRateDef[] = [
  { code: 'STD', name: 'Standard Rate', rate: 20 },
  { code: 'RED', name: 'Reduced Rate', rate: 5 },
  { code: 'ZERO', name: 'Zero Rated', rate: 0 },
  { code: 'EXEMPT', name: 'Exempt', rate: 0 },
];

// Contacts and items: a seed-dependent number of each, small enough to list in full.
export const customerCount = (seed: number): number => 12 + (seed % 37);
export const supplierCount = (seed: number): number => 8 + ((seed >>> 8) % 23);
export const itemCount = (seed: number): number => 10 + ((seed >>> 16) % 21);

/** The first draws of a contact's stream: its id and name. The record generator continues the same stream. */
export function contactIdentity(seed: number, type: 'customers' | 'suppliers', index: number): Ref & { rng: Rng } {
  const rng = recordRng(seed, type, index);
  return { id: uuidFrom(rng), name: companyName(rng), rng };
}

export function itemIdentity(seed: number, index: number): Ref & { rng: Rng } {
  const rng = recordRng(seed, 'items', index);
  const product = PRODUCTS[index % PRODUCTS.length] as string;
  const name = index < PRODUCTS.length ? product : `${product} ${pick(rng, ['Plus', 'Pro', 'Lite', 'XL', 'Mini'])} ${index}`;
  return { id: uuidFrom(rng), name, rng };
}

export function bankAccountRef(seed: number, index: number): Ref {
  return { id: uuidFrom(recordRng(seed, 'bankAccounts', index)), name: (ACCOUNTS[BANK_ACCOUNTS[index] as number] as AccountDef).name };
}
