// The data types a connection can sync. The key names the type in the API (queue,
// dataStatus, push, integration registry); the path is where it is read under
// /companies/{companyId}/data/, which differs from the key for two types, as in the
// public API (chartOfAccounts at /data/accounts, company at /data/info).

export interface DataType {
  key: string;
  /** Path segment under /companies/{companyId}/data/. */
  path: string;
  name: string;
  /** Whether push operations may create records of this type. */
  pushable: boolean;
}

export const DATA_TYPES = [
  { key: 'invoices', path: 'invoices', name: 'Invoices', pushable: true },
  { key: 'bills', path: 'bills', name: 'Bills', pushable: true },
  { key: 'customers', path: 'customers', name: 'Customers', pushable: true },
  { key: 'suppliers', path: 'suppliers', name: 'Suppliers', pushable: true },
  { key: 'chartOfAccounts', path: 'accounts', name: 'Chart of accounts', pushable: true },
  { key: 'payments', path: 'payments', name: 'Payments', pushable: true },
  { key: 'billPayments', path: 'billPayments', name: 'Bill payments', pushable: true },
  { key: 'creditNotes', path: 'creditNotes', name: 'Credit notes', pushable: true },
  { key: 'journalEntries', path: 'journalEntries', name: 'Journal entries', pushable: true },
  { key: 'items', path: 'items', name: 'Items', pushable: true },
  { key: 'taxRates', path: 'taxRates', name: 'Tax rates', pushable: false },
  { key: 'company', path: 'info', name: 'Company info', pushable: false },
  { key: 'bankAccounts', path: 'bankAccounts', name: 'Bank accounts', pushable: true },
  { key: 'accountTransactions', path: 'accountTransactions', name: 'Account transactions', pushable: false },
  { key: 'directCosts', path: 'directCosts', name: 'Direct costs', pushable: true },
  { key: 'directIncomes', path: 'directIncomes', name: 'Direct incomes', pushable: true },
  { key: 'purchaseOrders', path: 'purchaseOrders', name: 'Purchase orders', pushable: true },
  { key: 'trackingCategories', path: 'trackingCategories', name: 'Tracking categories', pushable: false },
  { key: 'billCreditNotes', path: 'billCreditNotes', name: 'Bill credit notes', pushable: true },
  { key: 'journals', path: 'journals', name: 'Journals', pushable: true },
  { key: 'paymentMethods', path: 'paymentMethods', name: 'Payment methods', pushable: false },
  { key: 'salesOrders', path: 'salesOrders', name: 'Sales orders', pushable: false },
  { key: 'transfers', path: 'transfers', name: 'Transfers', pushable: true },
] as const satisfies readonly DataType[];

export type DataTypeKey = (typeof DATA_TYPES)[number]['key'];

const byKey = new Map<string, DataType>(DATA_TYPES.map((t) => [t.key, t]));
const byPath = new Map<string, DataType>(DATA_TYPES.map((t) => [t.path, t]));

/** Exact, case-sensitive match on the key (`chartOfAccounts`, `company`). */
export function dataTypeByKey(key: string): DataType | undefined {
  return byKey.get(key);
}

/** Exact, case-sensitive match on the read path segment (`accounts`, `info`). */
export function dataTypeByPath(segment: string): DataType | undefined {
  return byPath.get(segment);
}
