// The official accounting SDK (@codat/accounting, from the npm registry) against a real
// `ferry serve` on 127.0.0.1: every operation in scope (docs/api.md lists them) succeeds
// through it, or answers the status the public API documents for the case. This SDK has no
// response schemas of its own to check against, so each answer is also checked here for
// the fields the public document requires of its data type: every record read, and the
// record every push answers with (test/helpers/record-shapes.ts).
import { CodatAccounting } from '@codat/accounting';
import { beforeAll, describe, expect, it } from 'vitest';
import { basic } from '../helpers/service.js';
import type { ServeHandle } from '../helpers/stack.js';
import { expectRequiredFields } from '../helpers/record-shapes.js';
import { readAll, sampleInvoice, waitFor, type Api, type Linked } from '../helpers/sync.js';
import { allComplete, sdkTarget } from './sdk-target.js';

type Json = Record<string, any>;
/** The SDK's resources, called by name from the tables below. */
type Resource = Record<string, (request: Json) => Promise<Json>>;

let stack: ServeHandle;
let sdk: CodatAccounting;
let api: Api;
let linked: Linked;
let key: string;
const ids = () => ({ companyId: linked.companyId, connectionId: linked.connectionId });

sdkTarget({ client: 'Accounting SDK Ltd', linked: 'Accounting SDK Linked Ltd' }, { invoices: 6, seed: 31 }, async (target) => {
  ({ stack, key, linked } = target);
  api = { ...stack.api, call: (method, path, options = {}) => stack.api.call(method, path, { apiKey: key, ...options }) };
  sdk = new CodatAccounting({ security: { authHeader: basic(key) }, serverURL: stack.baseUrl, retryConfig: { strategy: 'none' } as never });
  expect((await api.call('POST', `/companies/${linked.companyId}/data/all`)).status).toBe(204);
  await waitFor('every data type synced', async () => allComplete((await api.call('GET', `/companies/${linked.companyId}/dataStatus`)).body as object), 60_000);
});

/** Calls one SDK operation by resource and method name. */
function call(name: string, method: string, request: Json): Promise<Json> {
  const operation = (sdk as unknown as Record<string, Resource>)[name]?.[method];
  if (!operation) throw new Error(`The SDK has no ${name}.${method}`);
  return operation.call((sdk as unknown as Record<string, Resource>)[name], request);
}

/** The answer's JSON as it came over the wire (the SDK maps it onto its classes, dropping nothing we check). */
function wire(res: Json): any {
  const raw = res.rawResponse?.data as ArrayBuffer | undefined;
  return raw ? JSON.parse(new TextDecoder().decode(raw)) : undefined;
}

/** A successful call: 200 and the typed body the SDK decoded. */
function ok(res: Json, what: string): any {
  expect(res.statusCode, `${what}: ${res.rawResponse ? new TextDecoder().decode(res.rawResponse.data) : ''}`).toBe(200);
  const typed = Object.entries(res).find(([k, v]) => !['contentType', 'statusCode', 'rawResponse', 'errorMessage'].includes(k) && v !== undefined);
  expect(typed, `${what}: the SDK decoded a body`).toBeDefined();
  return wire(res);
}

// Every data set the SDK reads: its resource, where it lives (per company or per
// connection), and the name of its id parameter.
const READS: Array<{ resource: string; path: string; id: string; perConnection?: boolean }> = [
  { resource: 'accounts', path: 'accounts', id: 'accountId' },
  { resource: 'accountTransactions', path: 'accountTransactions', id: 'accountTransactionId', perConnection: true },
  { resource: 'bankAccounts', path: 'bankAccounts', id: 'accountId', perConnection: true },
  { resource: 'billCreditNotes', path: 'billCreditNotes', id: 'billCreditNoteId' },
  { resource: 'billPayments', path: 'billPayments', id: 'billPaymentId' },
  { resource: 'bills', path: 'bills', id: 'billId' },
  { resource: 'creditNotes', path: 'creditNotes', id: 'creditNoteId' },
  { resource: 'customers', path: 'customers', id: 'customerId' },
  { resource: 'directCosts', path: 'directCosts', id: 'directCostId', perConnection: true },
  { resource: 'directIncomes', path: 'directIncomes', id: 'directIncomeId', perConnection: true },
  { resource: 'invoices', path: 'invoices', id: 'invoiceId' },
  { resource: 'items', path: 'items', id: 'itemId' },
  { resource: 'journalEntries', path: 'journalEntries', id: 'journalEntryId' },
  { resource: 'journals', path: 'journals', id: 'journalId' },
  { resource: 'paymentMethods', path: 'paymentMethods', id: 'paymentMethodId' },
  { resource: 'payments', path: 'payments', id: 'paymentId' },
  { resource: 'purchaseOrders', path: 'purchaseOrders', id: 'purchaseOrderId' },
  { resource: 'salesOrders', path: 'salesOrders', id: 'salesOrderId' },
  { resource: 'suppliers', path: 'suppliers', id: 'supplierId' },
  { resource: 'taxRates', path: 'taxRates', id: 'taxRateId' },
  { resource: 'trackingCategories', path: 'trackingCategories', id: 'trackingCategoryId' },
  { resource: 'transfers', path: 'transfers', id: 'transferId', perConnection: true },
];

describe('reads: list and get of every data type', () => {
  it.each(READS)('$resource: list a page, get each record on it, and a 404 for an unknown id', async ({ resource: name, path, id, perConnection }) => {
    const scope = perConnection ? ids() : { companyId: linked.companyId };
    const list = ok(await call(name, 'list', { ...scope, page: 1, pageSize: 5 }), `${name}.list`);
    expect(list.pageNumber).toBe(1);
    expect(list.results.length).toBeGreaterThan(0);
    for (const record of list.results) {
      expectRequiredFields(path === 'accounts' ? 'chartOfAccounts' : path, record, name);
      const one = ok(await call(name, 'get', { ...scope, [id]: record.id }), `${name}.get`);
      expect(one).toEqual(record);
    }
    const missing = await call(name, 'get', { ...scope, [id]: '00000000-0000-4000-8000-000000000000' });
    expect(missing.statusCode).toBe(404);
    expect(missing.errorMessage?.statusCode).toBe(404);
  });

  it('company info: get, and refresh queues a pull of it', async () => {
    const info = ok(await sdk.companyInfo.get({ companyId: linked.companyId }), 'companyInfo.get');
    expect(typeof info.companyName).toBe('string');
    const refreshed = ok(await sdk.companyInfo.refresh({ companyId: linked.companyId }), 'companyInfo.refresh');
    expect(refreshed).toMatchObject({ companyId: linked.companyId, dataType: 'company' });
  });
});

// Records to create, one per pushable type, valid on the platform.
function creations(refs: { customerId: string; supplierId: string; accountId: string; bankAccountId: string }): Array<{ resource: string; body: string; dataType: string; record: Json }> {
  const lines = [{ description: 'Crossing', unitAmount: 50, quantity: 2, subTotal: 100, taxAmount: 20, totalAmount: 120 }];
  const day = '2026-11-01T00:00:00Z';
  return [
    { resource: 'accounts', body: 'account', dataType: 'chartOfAccounts', record: { name: 'SDK Ferry fees', type: 'Expense', nominalCode: '6099', status: 'Active' } },
    { resource: 'bankAccounts', body: 'bankAccount', dataType: 'bankAccounts', record: { accountName: 'SDK Float', currency: 'GBP' } },
    { resource: 'billCreditNotes', body: 'billCreditNote', dataType: 'billCreditNotes', record: { supplierRef: { id: refs.supplierId }, issueDate: day, status: 'Submitted', totalAmount: 120, subTotal: 100, totalTaxAmount: 20, totalDiscount: 0, discountPercentage: 0, remainingCredit: 120, lineItems: lines } },
    { resource: 'billPayments', body: 'billPayment', dataType: 'billPayments', record: { supplierRef: { id: refs.supplierId }, totalAmount: 120, date: day, currency: 'GBP' } },
    { resource: 'bills', body: 'bill', dataType: 'bills', record: { supplierRef: { id: refs.supplierId }, issueDate: day, dueDate: day, currency: 'GBP', lineItems: lines, subTotal: 100, taxAmount: 20, totalTaxAmount: 20, totalAmount: 120, amountDue: 120, status: 'Open' } },
    { resource: 'creditNotes', body: 'creditNote', dataType: 'creditNotes', record: { customerRef: { id: refs.customerId }, issueDate: day, status: 'Submitted', totalAmount: 120, subTotal: 100, totalTaxAmount: 20, totalDiscount: 0, discountPercentage: 0, remainingCredit: 120 } },
    { resource: 'customers', body: 'customer', dataType: 'customers', record: { customerName: 'SDK Customer Ltd', status: 'Active', defaultCurrency: 'GBP' } },
    { resource: 'directCosts', body: 'directCost', dataType: 'directCosts', record: { issueDate: day, currency: 'GBP', lineItems: lines, subTotal: 100, taxAmount: 20, totalAmount: 120, paymentAllocations: [] } },
    { resource: 'directIncomes', body: 'directIncome', dataType: 'directIncomes', record: { issueDate: day, currency: 'GBP', lineItems: lines, subTotal: 100, taxAmount: 20, totalAmount: 120, paymentAllocations: [] } },
    { resource: 'invoices', body: 'invoice', dataType: 'invoices', record: sampleInvoice(refs.customerId, { invoiceNumber: 'SDK-1' }) },
    { resource: 'items', body: 'item', dataType: 'items', record: { name: 'SDK Crossing', code: 'SDK-X', type: 'Service', itemStatus: 'Active', isBillItem: false, isInvoiceItem: true } },
    { resource: 'journalEntries', body: 'journalEntry', dataType: 'journalEntries', record: { postedOn: day, description: 'SDK accrual', journalLines: [{ netAmount: 50, accountRef: { id: refs.accountId } }, { netAmount: -50, accountRef: { id: refs.bankAccountId } }] } },
    { resource: 'journals', body: 'journal', dataType: 'journals', record: { name: 'SDK journal', journalCode: 'SDK', status: 'Active', createdOn: day } },
    { resource: 'payments', body: 'payment', dataType: 'payments', record: { customerRef: { id: refs.customerId }, totalAmount: 120, date: day, currency: 'GBP' } },
    { resource: 'purchaseOrders', body: 'purchaseOrder', dataType: 'purchaseOrders', record: { supplierRef: { id: refs.supplierId }, issueDate: day, currency: 'GBP', totalAmount: 120 } },
    { resource: 'suppliers', body: 'supplier', dataType: 'suppliers', record: { supplierName: 'SDK Supplier Ltd', status: 'Active' } },
    { resource: 'transfers', body: 'transfer', dataType: 'transfers', record: { date: day, description: 'SDK float top-up', from: { accountRef: { id: refs.bankAccountId }, amount: 120 }, to: { accountRef: { id: refs.accountId }, amount: 120 } } },
  ];
}

// The model (push options) operation of each pushable type.
const MODELS: Array<[string, string, string]> = [
  ['accounts', 'getCreateModel', 'chartOfAccounts'], ['bankAccounts', 'getCreateUpdateModel', 'bankAccounts'],
  ['billCreditNotes', 'getCreateUpdateModel', 'billCreditNotes'], ['billPayments', 'getCreateModel', 'billPayments'],
  ['bills', 'getCreateUpdateModel', 'bills'], ['creditNotes', 'getCreateUpdateModel', 'creditNotes'],
  ['customers', 'getCreateUpdateModel', 'customers'], ['directCosts', 'getCreateModel', 'directCosts'],
  ['directIncomes', 'getCreateModel', 'directIncomes'], ['invoices', 'getCreateUpdateModel', 'invoices'],
  ['items', 'getCreateModel', 'items'], ['journalEntries', 'getCreateModel', 'journalEntries'],
  ['journals', 'getCreateModel', 'journals'], ['payments', 'getCreateModel', 'payments'],
  ['purchaseOrders', 'getCreateUpdateModel', 'purchaseOrders'], ['suppliers', 'getCreateUpdateModel', 'suppliers'],
  ['transfers', 'getCreateModel', 'transfers'],
];

describe('pushes: create, update and delete through the SDK', () => {
  let refs: { customerId: string; supplierId: string; accountId: string; bankAccountId: string };
  const created = new Map<string, string>();

  beforeAll(async () => {
    const [customer] = await readAll(api, linked.companyId, 'customers');
    const [supplier] = await readAll(api, linked.companyId, 'suppliers');
    const accounts = await readAll(api, linked.companyId, 'accounts');
    refs = {
      customerId: customer.id, supplierId: supplier.id,
      accountId: accounts.find((a) => a.type === 'Expense').id, bankAccountId: accounts.find((a) => a.isBankAccount).id,
    };
  });

  it.each(MODELS)('%s.%s: the fields a %s push takes, required or not', async (name, method, dataType) => {
    const option = ok(await call(name, method, ids()), `${name}.${method}`);
    expect(option).toMatchObject({ type: 'Object', required: true, displayName: expect.any(String) });
    expect(Object.keys(option.properties).length, dataType).toBeGreaterThan(0);
    for (const field of Object.values(option.properties) as Json[]) expect(field).toMatchObject({ type: expect.any(String), displayName: expect.any(String), required: expect.any(Boolean) });
  });

  it('create: every pushable type, answered with the push operation and the created record', async () => {
    for (const { resource: name, body, dataType, record } of creations(refs)) {
      const answer = ok(await call(name, 'create', { ...ids(), [body]: record }), `${name}.create`);
      expect(answer, name).toMatchObject({ status: 'Success', statusCode: 200, dataType, companyId: linked.companyId, dataConnectionKey: linked.connectionId });
      expect(answer.changes[0], name).toMatchObject({ type: 'Created', recordRef: { dataType } });
      expect(answer.data.id, name).toBe(answer.changes[0].recordRef.id);
      expectRequiredFields(dataType, answer.data, `${name}.create`);
      created.set(name, answer.data.id);
    }
  });

  it('create: a record with only the fields a push requires is answered whole (the issue of POST …/push/accounts without isBankAccount)', async () => {
    const answer = ok(await sdk.accounts.create({ ...ids(), account: { name: 'SDK Bare account', type: 'Expense' } as never }), 'accounts.create');
    expect(answer.data).toMatchObject({ name: 'SDK Bare account', type: 'Expense', isBankAccount: false, status: 'Active' });
    expectRequiredFields('chartOfAccounts', answer.data);
  });

  it('create: a record the service refuses is a documented 400 with the fields named', async () => {
    const refused = await sdk.invoices.create({ ...ids(), invoice: { status: 'Draft' } as never });
    expect(refused.statusCode).toBe(400);
    expect(refused.errorMessage?.statusCode).toBe(400);
    // This SDK's error class has no validation field: the items are read from the wire.
    expect(wire(refused).validation.errors.map((e: { itemId: string }) => e.itemId)).toEqual(expect.arrayContaining(['customerRef.id', 'issueDate', 'lineItems']));
  });

  it('update: every type the SDK updates, as a Modified change of the same record', async () => {
    const updates: Array<[string, string, string, Json]> = [
      ['bankAccounts', 'bankAccount', 'bankAccountId', { accountName: 'SDK Float (renamed)', currency: 'GBP' }],
      ['billCreditNotes', 'billCreditNote', 'billCreditNoteId', creations(refs).find((c) => c.resource === 'billCreditNotes')!.record],
      ['bills', 'bill', 'billId', { ...creations(refs).find((c) => c.resource === 'bills')!.record, reference: 'renamed' }],
      ['creditNotes', 'creditNote', 'creditNoteId', creations(refs).find((c) => c.resource === 'creditNotes')!.record],
      ['customers', 'customer', 'customerId', { customerName: 'SDK Customer (renamed) Ltd', status: 'Active' }],
      ['invoices', 'invoice', 'invoiceId', sampleInvoice(refs.customerId, { invoiceNumber: 'SDK-1-R' })],
      ['purchaseOrders', 'purchaseOrder', 'purchaseOrderId', creations(refs).find((c) => c.resource === 'purchaseOrders')!.record],
      ['suppliers', 'supplier', 'supplierId', { supplierName: 'SDK Supplier (renamed) Ltd', status: 'Active' }],
    ];
    for (const [name, body, idParam, record] of updates) {
      const id = created.get(name)!;
      const res = await call(name, 'update', { ...ids(), [idParam]: id, [body]: record, forceUpdate: true });
      const answer = ok(res, `${name}.update`);
      expect(answer, name).toMatchObject({ status: 'Success', statusCode: 200 });
      expect(answer.changes, name).toEqual([{ type: 'Modified', recordRef: { id, dataType: expect.any(String) } }]);
      expect(answer.data.id, name).toBe(id);
      expectRequiredFields(answer.dataType, answer.data, `${name}.update`);
    }
  });

  it('delete: every type the SDK deletes, as a Deleted change; twice is the platform\'s 404', async () => {
    const deletes: Array<[string, string]> = [['billPayments', 'billPaymentId'], ['bills', 'billId'], ['invoices', 'invoiceId'], ['journalEntries', 'journalEntryId']];
    for (const [name, idParam] of deletes) {
      const id = created.get(name)!;
      const answer = ok(await call(name, 'delete', { ...ids(), [idParam]: id }), `${name}.delete`);
      expect(answer, name).toMatchObject({ status: 'Success', statusCode: 200, changes: [{ type: 'Deleted', recordRef: { id } }] });
      const again = ok(await call(name, 'delete', { ...ids(), [idParam]: id }), `${name}.delete again`);
      expect(again, name).toMatchObject({ status: 'Failed', statusCode: 404 });
    }
  });
});

describe('invoice documents', () => {
  it('downloadPdf: a PDF of a synced invoice; 404 for an unknown one', async () => {
    const [invoice] = await readAll(api, linked.companyId, 'invoices');
    const pdf = await sdk.invoices.downloadPdf({ companyId: linked.companyId, invoiceId: invoice.id });
    expect(pdf.statusCode).toBe(200);
    // The public document labels the PDF application/octet-stream, and the SDK asks for that.
    expect(pdf.contentType).toMatch(/^application\/octet-stream/);
    expect(Buffer.from(pdf.data!).subarray(0, 5).toString('latin1')).toBe('%PDF-');
    const missing = await sdk.invoices.downloadPdf({ companyId: linked.companyId, invoiceId: '00000000-0000-4000-8000-000000000000' }).catch((e: unknown) => e as Json);
    expect(missing.statusCode ?? missing.rawResponse?.status).toBe(404);
  });

  // Attachments of every data type the SDK reads them for; upload where it has one.
  const ATTACHMENTS: Array<{ resource: string; path: string; id: string; upload: boolean }> = [
    { resource: 'invoices', path: 'invoices', id: 'invoiceId', upload: true },
    { resource: 'bills', path: 'bills', id: 'billId', upload: true },
    { resource: 'directCosts', path: 'directCosts', id: 'directCostId', upload: true },
    { resource: 'directIncomes', path: 'directIncomes', id: 'directIncomeId', upload: true },
    { resource: 'customers', path: 'customers', id: 'customerId', upload: false },
    { resource: 'suppliers', path: 'suppliers', id: 'supplierId', upload: false },
  ];

  it.each(ATTACHMENTS)('$resource: upload, list, get and download an attachment', async ({ resource: name, path, id, upload }) => {
    const perConnection = ['directCosts', 'directIncomes'].includes(path);
    const records = perConnection
      ? (await api.call('GET', `/companies/${linked.companyId}/connections/${linked.connectionId}/data/${path}?pageSize=1`)).body.results
      : await readAll(api, linked.companyId, path);
    const recordId = records[0].id;
    const content = Buffer.from(`attachment of ${path} ${recordId}\n`);
    if (upload) {
      const sent = await call(name, 'uploadAttachment', { ...ids(), [id]: recordId, requestBody: { requestBody: 'receipt.txt', content: new Uint8Array(content) } });
      expect(sent.statusCode, `${name}.uploadAttachment`).toBe(200);
    } else {
      // The SDK has no upload for this type: the same route, as any HTTP client would send it.
      const form = new FormData();
      form.append('file', new Blob([content], { type: 'text/plain' }), 'receipt.txt');
      const sent = await fetch(`${stack.baseUrl}/companies/${linked.companyId}/connections/${linked.connectionId}/push/${path}/${recordId}/attachment`, {
        method: 'POST', body: form, headers: { authorization: `Basic ${Buffer.from(key).toString('base64')}` },
      });
      expect(sent.status, await sent.clone().text()).toBe(200);
    }
    const list = ok(await call(name, 'listAttachments', { ...ids(), [id]: recordId }), `${name}.listAttachments`);
    expect(list.attachments).toHaveLength(1);
    const [attachment] = list.attachments;
    expect(attachment).toMatchObject({ name: 'receipt.txt', fileSize: content.length });
    expect(ok(await call(name, 'getAttachment', { ...ids(), [id]: recordId, attachmentId: attachment.id }), `${name}.getAttachment`)).toEqual(attachment);
    const download = await call(name, 'downloadAttachment', { ...ids(), [id]: recordId, attachmentId: attachment.id });
    expect(download.statusCode).toBe(200);
    expect(Buffer.from(download.data)).toEqual(content);
  });
});
