// Updating and deleting records on a platform. Generated records are a pure function of
// the tenant's seed and pushed ones are stored once, so a change to either is kept in
// record_edits by id and laid over the record wherever it is read. A deleted record
// stays listed, marked metadata.isDeleted, as platforms report deletions to a sync.
import { isoSeconds } from '../lib/clock.js';
import { withRequiredFields } from '../platforms/record-defaults.js';
import type { SandboxContext } from './context.js';
import { fail, type FieldError } from './errors.js';
import { generateRecords, generatedCount } from './generate/records.js';
import type { TenantRow } from './store.js';

type Json = Record<string, unknown>;

/** id → index of generated records, per tenant and data type, built on the first lookup. */
const indexes = new Map<string, Map<string, number>>();
const INDEX_CACHE_LIMIT = 64;
const SCAN_PAGE = 1000;

function generatedIndex(tenant: TenantRow, dataType: string): Map<string, number> {
  const cacheKey = `${tenant.id}\u0000${dataType}`;
  let index = indexes.get(cacheKey);
  if (index) return index;
  index = new Map();
  const count = generatedCount(tenant, dataType);
  for (let offset = 0; offset < count; offset += SCAN_PAGE) {
    generateRecords(tenant, dataType, offset, SCAN_PAGE).forEach((record, i) => index!.set(String(record.id), offset + i));
  }
  if (indexes.size >= INDEX_CACHE_LIMIT) indexes.delete(indexes.keys().next().value as string);
  indexes.set(cacheKey, index);
  return index;
}

/** The record as the platform holds it now (edits applied), or undefined when it never existed. */
export function currentRecord(ctx: SandboxContext, tenant: TenantRow, dataType: string, id: string): Json | undefined {
  const edited = ctx.store.getEdit(tenant.id, dataType, id);
  if (edited) return edited;
  const pushed = ctx.store.pushedRecord(tenant.id, dataType, id);
  if (pushed) return pushed;
  const at = generatedIndex(tenant, dataType).get(id);
  return at === undefined ? undefined : generateRecords(tenant, dataType, at, 1)[0];
}

/** Lays the tenant's edits over a page of records. */
export function withEdits(ctx: SandboxContext, tenant: TenantRow, dataType: string, records: Json[]): Json[] {
  if (!ctx.store.hasEdits(tenant.id, dataType)) return records;
  return records.map((r) => ctx.store.getEdit(tenant.id, dataType, String(r.id)) ?? r);
}

const isDeleted = (record: Json) => (record.metadata as { isDeleted?: unknown } | undefined)?.isDeleted === true;

/** The record to change, or the platform's 404; a deleted record cannot be changed again. */
export function editable(ctx: SandboxContext, tenant: TenantRow, dataType: string, id: string): Json {
  const record = currentRecord(ctx, tenant, dataType, id);
  if (!record || isDeleted(record)) throw fail.notFound(`No ${dataType} record ${id} on this organisation${record ? ' (it was deleted)' : ''}.`);
  return record;
}

/**
 * An update is refused when the caller's copy is older than the platform's: the record's
 * sourceModifiedDate must match, unless the caller forces it.
 */
export function staleCopy(current: Json, payload: Json, force: boolean): FieldError[] {
  const theirs = payload.sourceModifiedDate;
  if (force || theirs === undefined || theirs === null) return [];
  if (typeof theirs === 'string' && Date.parse(theirs) === Date.parse(String(current.sourceModifiedDate))) return [];
  return [{
    field: 'sourceModifiedDate',
    message: `The record changed on the platform at ${String(current.sourceModifiedDate)} since the copy sent (${String(theirs)}): sync it again, or force the update.`,
  }];
}

function stamp(ctx: SandboxContext): string {
  return isoSeconds(ctx.clock.now());
}

/** Replaces the record's fields with the payload's, keeping its id. */
export function applyUpdate(ctx: SandboxContext, tenant: TenantRow, dataType: string, id: string, payload: Json): Json {
  const now = stamp(ctx);
  const { id: _id, modifiedDate: _m, sourceModifiedDate: _s, ...fields } = payload;
  const record = withRequiredFields(dataType, { id, ...fields, metadata: { isDeleted: false }, modifiedDate: now, sourceModifiedDate: now });
  ctx.store.putEdit(tenant.id, dataType, record);
  return record;
}

export function applyDelete(ctx: SandboxContext, tenant: TenantRow, dataType: string, current: Json): Json {
  const now = stamp(ctx);
  const record = { ...current, id: String(current.id), metadata: { isDeleted: true }, modifiedDate: now, sourceModifiedDate: now };
  ctx.store.putEdit(tenant.id, dataType, record);
  return record;
}
