// Journals, payment methods and transfers: the ledger's small lists and the movements of
// money between the tenant's own bank accounts. A journal's id is a function of (seed,
// index) alone, so a journal entry's journalRef names a journal the journals type lists.
import { BANK_ACCOUNTS, DAY_SPAN, accountRef, amount, baseCurrency, isoDay, type Ref, type TenantSeed } from './catalog.js';
import { int, pick, recordRng, uuidFrom, type Rng } from './prng.js';

type Json = Record<string, unknown>;

export interface JournalDef {
  name: string;
  code: string;
  type: string;
}

// Journal entries are posted to these, one journal per kind of entry.
export const JOURNALS: readonly JournalDef[] = [
  { name: 'Monthly depreciation', code: 'DEP', type: 'General' },
  { name: 'Accrued expenses', code: 'ACR', type: 'General' },
  { name: 'Payroll journal', code: 'PAY', type: 'Payroll' },
  { name: 'Loan repayment', code: 'LOAN', type: 'General' },
  { name: 'Owner drawings', code: 'DRAW', type: 'General' },
  { name: 'Year-end adjustment', code: 'YE', type: 'Adjustment' },
];

export function journalRef(seed: number, index: number): Ref {
  return { id: uuidFrom(recordRng(seed, 'journals', index)), name: (JOURNALS[index] as JournalDef).name };
}

function stamp(rng: Rng, day: number): Json {
  const at = isoDay(day, int(rng, 0, 86_399));
  return { metadata: { isDeleted: false }, modifiedDate: at, sourceModifiedDate: at };
}

export function journal(tenant: TenantSeed, index: number): Json {
  const def = JOURNALS[index] as JournalDef;
  const rng = recordRng(tenant.seed, 'journals', index);
  const id = uuidFrom(rng);
  // Set up before the first entry posted to it (entries are dated from day 0).
  const createdDay = -int(rng, 30, 720);
  return {
    id,
    journalCode: def.code,
    name: def.name,
    type: def.type,
    hasChildren: false,
    createdOn: isoDay(createdDay),
    status: 'Active',
    ...stamp(rng, createdDay + int(rng, 0, 29)),
  };
}

// Names as a ledger shows them, with the public API's type of each.
const PAYMENT_METHODS: ReadonlyArray<readonly [name: string, type: string, status: 'Active' | 'Archived']> = [
  ['Bank transfer', 'BankTransfer', 'Active'],
  ['Direct debit', 'Other', 'Active'],
  ['Credit card', 'CreditCard', 'Active'],
  ['Debit card', 'DebitCard', 'Active'],
  ['Cash', 'Cash', 'Active'],
  ['Cheque', 'Check', 'Archived'],
];

export const paymentMethodCount = (): number => PAYMENT_METHODS.length;

export function paymentMethod(tenant: TenantSeed, index: number): Json {
  const [name, type, status] = PAYMENT_METHODS[index] as (typeof PAYMENT_METHODS)[number];
  const rng = recordRng(tenant.seed, 'paymentMethods', index);
  return { id: uuidFrom(rng), name, type, status, ...stamp(rng, -int(rng, 0, 365)) };
}

// Between the bank accounts (positions in BANK_ACCOUNTS: current, savings, credit card).
const TRANSFER_ROUTES: ReadonlyArray<readonly [from: number, to: number, description: string]> = [
  [0, 1, 'Transfer to savings'],
  [1, 0, 'Transfer from savings'],
  [0, 2, 'Credit card repayment'],
];

/** Money leaving one of the tenant's bank accounts and arriving, the same amount, in another. */
export function transfer(tenant: TenantSeed, index: number): Json {
  const rng = recordRng(tenant.seed, 'transfers', index);
  const id = uuidFrom(rng);
  const day = int(rng, 0, DAY_SPAN - 1);
  const [from, to, description] = pick(rng, TRANSFER_ROUTES);
  const cents = int(rng, 5_000, 2_000_000);
  const currency = baseCurrency(tenant.seed);
  const side = (position: number) => ({ accountRef: accountRef(tenant.seed, BANK_ACCOUNTS[position] as number), currency, amount: amount(cents) });
  return { id, description, date: isoDay(day), from: side(from), to: side(to), ...stamp(rng, day) };
}
