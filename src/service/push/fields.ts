// What a push of each data type accepts: its fields, their types, which are required and
// the bounds the service checks. One table serves both the push options route
// (GET …/options/{dataType}, in the public API's PushOption shape) and the checks made
// before a record is sent (validate.ts), so the two never disagree.

export type PushFieldType = 'Object' | 'Array' | 'String' | 'Number' | 'Boolean' | 'DateTime';

export interface PushField {
  type: PushFieldType;
  displayName: string;
  description: string;
  required: boolean;
  /** Number: the least value accepted. */
  minimum?: number;
  /** Object, or Array of objects: the fields of each. */
  properties?: Record<string, PushField>;
}

const field = (type: PushFieldType, displayName: string, description: string, required = false, extra: Partial<PushField> = {}): PushField => ({
  type, displayName, description, required, ...extra,
});

const reference = (displayName: string, what: string, required: boolean): PushField => field('Object', displayName, `The ${what} the record belongs to.`, required, {
  properties: { id: field('String', 'Id', `Id of the ${what} (from its data set).`, true), name: field('String', 'Name', `Name of the ${what}.`) },
});

const lineItems = (what: string): PushField => field('Array', 'Line items', `The lines of the ${what}: at least one.`, true, {
  properties: {
    description: field('String', 'Description', 'What the line is for.'),
    unitAmount: field('Number', 'Unit amount', 'Price of one unit, before tax.', true),
    quantity: field('Number', 'Quantity', 'How many units.', true),
    subTotal: field('Number', 'Sub total', 'unitAmount × quantity, before tax.'),
    taxAmount: field('Number', 'Tax amount', 'Tax on the line.'),
    totalAmount: field('Number', 'Total amount', 'The line with its tax.'),
  },
});

const money = (displayName: string, description: string) => field('Number', displayName, description, false, { minimum: 0 });

const document = (party: 'customer' | 'supplier', what: string): Record<string, PushField> => ({
  [`${party}Ref`]: reference(party === 'customer' ? 'Customer' : 'Supplier', party, true),
  issueDate: field('DateTime', 'Issue date', `When the ${what} was issued (ISO 8601).`, true),
  dueDate: field('DateTime', 'Due date', `When the ${what} is due (ISO 8601).`),
  currency: field('String', 'Currency', 'ISO 4217 currency code, e.g. GBP.'),
  lineItems: lineItems(what),
  subTotal: field('Number', 'Sub total', 'The lines before tax.'),
  totalTaxAmount: field('Number', 'Total tax amount', 'Tax over every line.'),
  totalAmount: money('Total amount', 'What the document comes to, with tax.'),
  amountDue: money('Amount due', 'What is still to pay.'),
  status: field('String', 'Status', 'Draft, Submitted, PartiallyPaid, Paid or Void.'),
});

const party = (kind: 'customer' | 'supplier'): Record<string, PushField> => ({
  [`${kind}Name`]: field('String', `${kind === 'customer' ? 'Customer' : 'Supplier'} name`, `The ${kind}'s name as it appears on documents.`, true),
  emailAddress: field('String', 'Email address', `Where the ${kind} gets documents.`),
  phone: field('String', 'Phone', `The ${kind}'s phone number.`),
  defaultCurrency: field('String', 'Default currency', 'ISO 4217 currency code.'),
  status: field('String', 'Status', 'Active or Archived.'),
});

const date = (displayName: string, what: string, required = false) => field('DateTime', displayName, `${what} (ISO 8601).`, required);
const amount = (displayName: string, description: string, required = false) => field('Number', displayName, description, required, { minimum: 0 });
const text = (displayName: string, description: string, required = false) => field('String', displayName, description, required);

/** A side of a transfer: the account money leaves or enters, and how much. */
const transferSide = (side: 'from' | 'to'): PushField => field('Object', side === 'from' ? 'From' : 'To', `The account the money ${side === 'from' ? 'leaves' : 'enters'}.`, true, {
  properties: {
    accountRef: reference('Account', 'account', true),
    amount: amount('Amount', `How much ${side === 'from' ? 'leaves' : 'enters'} the account.`, true),
    currency: text('Currency', 'ISO 4217 currency code.'),
  },
});

const journalLines = field('Array', 'Journal lines', 'Two or more lines whose net amounts sum to zero.', true, {
  properties: {
    accountRef: reference('Account', 'account', false),
    netAmount: field('Number', 'Net amount', 'Debit (positive) or credit (negative).', true),
    description: text('Description', 'What the line is for.'),
  },
});

/**
 * The fields of every pushable data type, checked before a record is sent (the platform
 * checks them again, and more: references, enums, balances).
 */
export const PUSH_FIELDS: Readonly<Record<string, Record<string, PushField>>> = {
  invoices: document('customer', 'invoice'),
  bills: document('supplier', 'bill'),
  customers: party('customer'),
  suppliers: party('supplier'),
  creditNotes: {
    customerRef: reference('Customer', 'customer', true),
    issueDate: date('Issue date', 'When the credit note was issued', true),
    totalAmount: amount('Total amount', 'What the credit note comes to, with tax.', true),
    remainingCredit: amount('Remaining credit', 'Credit not yet allocated.'),
    status: text('Status', 'Draft, Submitted, Paid or Void.'),
  },
  billCreditNotes: {
    supplierRef: reference('Supplier', 'supplier', true),
    issueDate: date('Issue date', 'When the supplier issued the credit note', true),
    totalAmount: amount('Total amount', 'What the credit note comes to, with tax.', true),
    status: text('Status', 'Draft, Submitted, Paid, PartiallyPaid or Void.', true),
  },
  chartOfAccounts: {
    name: text('Name', 'The account\'s name.', true),
    type: text('Type', 'Asset, Liability, Equity, Income or Expense.', true),
    nominalCode: text('Nominal code', 'The account\'s code in the ledger.'),
    description: text('Description', 'What the account is for.'),
  },
  payments: {
    customerRef: reference('Customer', 'customer', true),
    totalAmount: amount('Total amount', 'What was paid.', true),
    date: date('Date', 'When the payment was made', true),
    currency: text('Currency', 'ISO 4217 currency code.'),
  },
  billPayments: {
    supplierRef: reference('Supplier', 'supplier', true),
    totalAmount: amount('Total amount', 'What was paid.', true),
    date: date('Date', 'When the payment was made', true),
    currency: text('Currency', 'ISO 4217 currency code.'),
  },
  purchaseOrders: {
    supplierRef: reference('Supplier', 'supplier', true),
    issueDate: date('Issue date', 'When the order was raised', true),
    totalAmount: amount('Total amount', 'What the order comes to, with tax.', true),
    currency: text('Currency', 'ISO 4217 currency code.'),
  },
  // The document requires a direct cost's currency, and no default would be right.
  directCosts: {
    issueDate: date('Issue date', 'When the money was spent', true),
    totalAmount: amount('Total amount', 'What was spent, with tax.', true),
    currency: text('Currency', 'ISO 4217 currency code.', true),
  },
  directIncomes: {
    issueDate: date('Issue date', 'When the money was received', true),
    totalAmount: amount('Total amount', 'What was received, with tax.', true),
    currency: text('Currency', 'ISO 4217 currency code.', true),
  },
  journalEntries: {
    postedOn: date('Posted on', 'When the entry is posted to the ledger', true),
    journalLines,
    journalRef: reference('Journal', 'journal', false),
    description: text('Description', 'What the entry records.'),
  },
  journals: {
    name: text('Name', 'The journal\'s name.', true),
    journalCode: text('Journal code', 'The journal\'s code in the ledger.'),
    status: text('Status', 'Active or Archived.'),
  },
  items: {
    name: text('Name', 'The item\'s name.', true),
    code: text('Code', 'The item\'s code.'),
  },
  bankAccounts: {
    accountName: text('Account name', 'The bank account\'s name.', true),
    currency: text('Currency', 'ISO 4217 currency code.'),
  },
  transfers: {
    date: date('Date', 'When the money moved', true),
    from: transferSide('from'),
    to: transferSide('to'),
    description: text('Description', 'What the transfer is for.'),
  },
};

/** The data type's push option in the public API's shape: an Object whose properties are its fields. */
export function pushOption(dataType: string, displayName: string): Record<string, unknown> {
  const fields = PUSH_FIELDS[dataType] ?? {};
  const shape = (f: PushField): Record<string, unknown> => ({
    type: f.type,
    displayName: f.displayName,
    description: f.description,
    required: f.required,
    ...(f.properties ? { properties: Object.fromEntries(Object.entries(f.properties).map(([k, v]) => [k, shape(v)])) } : {}),
    ...(f.minimum !== undefined ? { validation: { warnings: [], information: [{ field: f.displayName, details: `At least ${f.minimum}.` }] } } : {}),
  });
  return {
    type: 'Object',
    displayName,
    description: `A ${displayName.toLowerCase()} record to create or update.`,
    required: true,
    properties: Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, shape(v)])),
  };
}
