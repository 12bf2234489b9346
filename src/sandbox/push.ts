// Creating, updating and deleting records on a platform. A sync push is carried out at
// once (200 with the record, 400 with field errors, 404 for an unknown record). An async
// push answers 202 and is due `pushDelaySeconds` later by the sandbox clock; it settles
// when first seen due (its status read, or its data type listed): carried out then,
// Success or Failed (field errors), as a platform's queue would.
import { randomUUID } from 'node:crypto';
import { isoSeconds } from '../lib/clock.js';
import type { DataTypeKey } from '../platforms/data-types.js';
import { withRequiredFields } from '../platforms/record-defaults.js';
import type { SandboxContext } from './context.js';
import { applyDelete, applyUpdate, editable, staleCopy } from './edits.js';
import { fail, SandboxError, type FieldError } from './errors.js';
import { generatedContactIds } from './generate/records.js';
import type { PushOp, PushRow, TenantRow } from './store.js';

type Json = Record<string, unknown>;
type RefType = 'customers' | 'suppliers';

interface Rule {
  required?: string[];
  /** Amounts that, when present, must be numbers no less than zero. */
  amounts?: string[];
  refs?: Array<[path: string, type: RefType]>;
  enums?: Array<[path: string, values: readonly string[]]>;
  dates?: string[];
}

const DOCUMENT_AMOUNTS = ['subTotal', 'totalTaxAmount', 'taxAmount', 'totalAmount', 'amountDue'];
const DOCUMENT_DATES = ['issueDate', 'dueDate', 'paidOnDate'];

const RULES: Partial<Record<DataTypeKey, Rule>> = {
  invoices: {
    required: ['customerRef.id', 'issueDate', 'status', 'totalTaxAmount', 'totalAmount', 'amountDue'],
    amounts: DOCUMENT_AMOUNTS,
    refs: [['customerRef.id', 'customers']],
    enums: [['status', ['Unknown', 'Draft', 'Submitted', 'PartiallyPaid', 'Paid', 'Void']]],
    dates: DOCUMENT_DATES,
  },
  bills: { required: ['supplierRef.id', 'issueDate', 'totalAmount'], amounts: DOCUMENT_AMOUNTS, refs: [['supplierRef.id', 'suppliers']], dates: DOCUMENT_DATES },
  creditNotes: { required: ['customerRef.id', 'issueDate', 'totalAmount'], amounts: DOCUMENT_AMOUNTS, refs: [['customerRef.id', 'customers']], dates: ['issueDate'] },
  purchaseOrders: { required: ['supplierRef.id', 'issueDate', 'totalAmount'], amounts: DOCUMENT_AMOUNTS, refs: [['supplierRef.id', 'suppliers']], dates: ['issueDate'] },
  directCosts: { required: ['issueDate', 'totalAmount'], amounts: DOCUMENT_AMOUNTS, dates: ['issueDate'] },
  directIncomes: { required: ['issueDate', 'totalAmount'], amounts: DOCUMENT_AMOUNTS, dates: ['issueDate'] },
  customers: { required: ['customerName'] },
  suppliers: { required: ['supplierName'] },
  chartOfAccounts: { required: ['name', 'type'], enums: [['type', ['Asset', 'Liability', 'Equity', 'Income', 'Expense']]] },
  payments: { required: ['customerRef.id', 'totalAmount', 'date'], refs: [['customerRef.id', 'customers']], dates: ['date'] },
  billPayments: { required: ['supplierRef.id', 'totalAmount', 'date'], refs: [['supplierRef.id', 'suppliers']], dates: ['date'] },
  journalEntries: { required: ['journalLines', 'postedOn'], dates: ['postedOn'] },
  items: { required: ['name'] },
  bankAccounts: { required: ['accountName'] },
  billCreditNotes: {
    required: ['supplierRef.id', 'issueDate', 'status', 'totalAmount'],
    amounts: ['subTotal', 'totalTaxAmount', 'totalAmount', 'totalDiscount', 'remainingCredit'],
    refs: [['supplierRef.id', 'suppliers']],
    enums: [['status', ['Unknown', 'Draft', 'Submitted', 'Paid', 'Void', 'PartiallyPaid']]],
    dates: ['issueDate', 'allocatedOnDate'],
  },
  journals: { required: ['name'], enums: [['status', ['Unknown', 'Active', 'Archived']]], dates: ['createdOn'] },
  transfers: {
    required: ['date', 'from.accountRef.id', 'from.amount', 'to.accountRef.id', 'to.amount'],
    amounts: ['from.amount', 'to.amount'],
    dates: ['date'],
  },
};

function at(record: Json, path: string): unknown {
  let value: unknown = record;
  for (const part of path.split('.')) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Json)[part];
  }
  return value;
}

const present = (v: unknown) => v !== undefined && v !== null && v !== '';

export function validateRecord(ctx: SandboxContext, tenant: TenantRow, dataType: string, record: Json): FieldError[] {
  const rule = RULES[dataType as DataTypeKey] ?? {};
  const errors: FieldError[] = [];
  for (const path of rule.required ?? []) {
    if (!present(at(record, path))) errors.push({ field: path, message: `${path} is required.` });
  }
  for (const path of rule.amounts ?? []) {
    const value = at(record, path);
    if (value === undefined) continue;
    if (typeof value !== 'number' || !Number.isFinite(value)) errors.push({ field: path, message: `${path} must be a number.` });
    else if (value < 0) errors.push({ field: path, message: `${path} must not be negative.` });
  }
  for (const path of rule.dates ?? []) {
    const value = at(record, path);
    if (present(value) && (typeof value !== 'string' || Number.isNaN(Date.parse(value)))) {
      errors.push({ field: path, message: `${path} must be an ISO 8601 date.` });
    }
  }
  for (const [path, values] of rule.enums ?? []) {
    const value = at(record, path);
    if (present(value) && !values.includes(value as string)) errors.push({ field: path, message: `${path} must be one of ${values.join(', ')}.` });
  }
  for (const [path, type] of rule.refs ?? []) {
    const id = at(record, path);
    if (present(id) && !referenceExists(ctx, tenant, type, String(id))) {
      errors.push({ field: path, message: `${path} ${String(id)} does not match any of the organisation's ${type}.` });
    }
  }
  if (dataType === 'journalEntries' && present(record.journalLines)) errors.push(...journalErrors(record.journalLines));
  return errors;
}

function referenceExists(ctx: SandboxContext, tenant: TenantRow, type: RefType, id: string): boolean {
  return generatedContactIds(tenant, type).includes(id) || ctx.store.recordExists(tenant.id, type, id);
}

/** A journal needs two or more lines whose net amounts cancel out. */
function journalErrors(lines: unknown): FieldError[] {
  if (!Array.isArray(lines) || lines.length < 2) return [{ field: 'journalLines', message: 'journalLines must list at least two lines.' }];
  let cents = 0;
  for (const line of lines) {
    const net = at(line as Json, 'netAmount');
    if (typeof net !== 'number' || !Number.isFinite(net)) return [{ field: 'journalLines.netAmount', message: 'Every journal line needs a numeric netAmount.' }];
    cents += Math.round(net * 100);
  }
  return cents === 0 ? [] : [{ field: 'journalLines', message: 'The journal lines do not balance: net amounts must sum to zero.' }];
}

/** Stores a pushed record with its new id; it is listed after the generated ones. */
function createRecord(ctx: SandboxContext, tenant: TenantRow, dataType: string, payload: Json): { record: Json; seq: number } {
  const stamp = isoSeconds(ctx.clock.now());
  const { id: _clientId, modifiedDate: _m, sourceModifiedDate: _s, ...fields } = payload;
  // The platform holds a record whole: every field its type requires, defaulted where the writer left it out.
  const record = withRequiredFields(dataType, { id: randomUUID(), ...fields, metadata: fields.metadata ?? { isDeleted: false }, modifiedDate: stamp, sourceModifiedDate: stamp });
  return { record, seq: ctx.store.insertRecord(tenant.id, dataType, record) };
}

/** A sync push: the created record, or a 400 with field errors. */
export function pushNow(ctx: SandboxContext, tenant: TenantRow, dataType: string, payload: Json): Json {
  const errors = validateRecord(ctx, tenant, dataType, payload);
  if (errors.length > 0) throw fail.validation(errors);
  return createRecord(ctx, tenant, dataType, payload).record;
}

/** A sync update: the record as it now stands, a 404 for an unknown record, or a 400. */
export function updateNow(ctx: SandboxContext, tenant: TenantRow, dataType: string, id: string, payload: Json, force: boolean): Json {
  const current = editable(ctx, tenant, dataType, id);
  const errors = [...staleCopy(current, payload, force), ...validateRecord(ctx, tenant, dataType, payload)];
  if (errors.length > 0) throw fail.validation(errors);
  return applyUpdate(ctx, tenant, dataType, id, payload);
}

/** A sync delete: the record as deleted (still listed, marked isDeleted), or a 404. */
export function deleteNow(ctx: SandboxContext, tenant: TenantRow, dataType: string, id: string): Json {
  return applyDelete(ctx, tenant, dataType, editable(ctx, tenant, dataType, id));
}

export interface QueuedPush {
  op: PushOp;
  dataType: string;
  recordId?: string;
  force?: boolean;
  payload: Json;
}

export function queuePush(ctx: SandboxContext, tenant: TenantRow, push: QueuedPush): PushRow {
  const id = randomUUID();
  const now = ctx.clock.now().getTime();
  ctx.store.insertPush({
    id, tenantId: tenant.id, dataType: push.dataType, op: push.op, recordId: push.recordId ?? null, force: push.force ?? false,
    payload: push.payload, at: now, completeAt: now + ctx.settings.pushDelaySeconds * 1000,
  });
  return ctx.store.getPush(id) as PushRow;
}

/** What a queued push does when it comes due: the record it leaves, or why it failed. */
function carryOut(ctx: SandboxContext, tenant: TenantRow, push: PushRow): { recordSeq?: number; result?: Json; errors?: FieldError[] } {
  if (push.op === 'Create') {
    const errors = validateRecord(ctx, tenant, push.dataType, push.payload);
    return errors.length > 0 ? { errors } : { recordSeq: createRecord(ctx, tenant, push.dataType, push.payload).seq };
  }
  try {
    const id = push.recordId ?? '';
    const result = push.op === 'Update'
      ? updateNow(ctx, tenant, push.dataType, id, push.payload, push.force)
      : deleteNow(ctx, tenant, push.dataType, id);
    return { result };
  } catch (err) {
    if (err instanceof SandboxError) return { errors: err.options.errors ?? [{ field: 'id', message: err.message }] };
    throw err;
  }
}

/** Settles a pending push once it is due; returns its current state. */
export function settlePush(ctx: SandboxContext, tenant: TenantRow, push: PushRow): PushRow {
  const now = ctx.clock.now().getTime();
  if (push.status !== 'Pending' || now < push.completeAt) return push;
  ctx.store.transaction(() => {
    const outcome = carryOut(ctx, tenant, push);
    ctx.store.completePush(push.id, outcome.errors ? 'Failed' : 'Success', now, outcome);
  });
  return ctx.store.getPush(push.id) as PushRow;
}

/** Settles the tenant's due pushes of a data type, so a listing includes what the queue has created. */
export function settleDuePushes(ctx: SandboxContext, tenant: TenantRow, dataType: string): void {
  for (const push of ctx.store.duePushes(tenant.id, dataType, ctx.clock.now().getTime())) settlePush(ctx, tenant, push);
}

export function pushView(ctx: SandboxContext, push: PushRow): Json {
  const view: Json = { id: push.id, dataType: push.dataType, status: push.status, requestedOn: isoSeconds(new Date(push.requested)) };
  if (push.completed !== null) view.completedOn = isoSeconds(new Date(push.completed));
  const record = push.result ?? (push.recordSeq !== null ? ctx.store.recordBySeq(push.recordSeq) : undefined);
  if (record) view.record = record;
  if (push.errors) view.errors = push.errors;
  return view;
}
