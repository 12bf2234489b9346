// Checks a pull runs over the records it reads, kept on the pull as the public API's
// validation result (GET /companies/{id}/sync/{datasetId}/validation): errors for what a
// reader cannot trust (a record with no id, a document whose lines do not add up to its
// total), warnings for what may need a look (lines that do not add up to the subtotal).
// They never stop a sync; the records are stored as the platform sent them.
import type { Validation, ValidationItem } from '../errors.js';

/** Items kept per list: enough to act on, bounded for a data set of millions. */
export const MAX_ITEMS = 1000;

const DOCUMENTS: Record<string, string> = {
  invoices: 'invoice',
  bills: 'bill',
  creditNotes: 'credit note',
  billCreditNotes: 'bill credit note',
};

type Json = Record<string, unknown>;

const cents = (n: number) => Math.round(n * 100);
const money = (c: number) => (c / 100).toFixed(2);

function lineSum(lines: unknown[], field: string): number | undefined {
  let sum = 0;
  for (const line of lines) {
    const value = (line as Json | null)?.[field];
    if (typeof value !== 'number' || !Number.isFinite(value)) return undefined;
    sum += cents(value);
  }
  return sum;
}

function documentItems(dataType: string, record: Json, id: string): { errors: ValidationItem[]; warnings: ValidationItem[] } {
  const what = DOCUMENTS[dataType];
  const found = { errors: [] as ValidationItem[], warnings: [] as ValidationItem[] };
  if (!what || !Array.isArray(record.lineItems) || record.lineItems.length === 0) return found;
  const validatorName = `${dataType}Validator`;
  const total = lineSum(record.lineItems, 'totalAmount');
  if (total !== undefined && typeof record.totalAmount === 'number' && total !== cents(record.totalAmount)) {
    found.errors.push({ ruleId: `ferry-${dataType}-total`, itemId: id, validatorName,
      message: `The ${what}'s lines add up to ${money(total)}, not its totalAmount ${money(cents(record.totalAmount))}.` });
  }
  const sub = lineSum(record.lineItems, 'subTotal');
  if (sub !== undefined && typeof record.subTotal === 'number' && sub !== cents(record.subTotal)) {
    found.warnings.push({ ruleId: `ferry-${dataType}-subtotal`, itemId: id, validatorName,
      message: `The ${what}'s lines' subtotals add up to ${money(sub)}, not its subTotal ${money(cents(record.subTotal))}.` });
  }
  return found;
}

/** Adds a page's findings to the pull's validation (bounded by MAX_ITEMS per list). */
export function checkPage(dataType: string, records: Json[], into: Validation): void {
  const add = (list: ValidationItem[], items: ValidationItem[]) => {
    for (const i of items) if (list.length < MAX_ITEMS) list.push(i);
  };
  for (const record of records) {
    const id = record.id;
    if (typeof id !== 'string' || id === '') {
      add(into.errors, [{ ruleId: 'ferry-record-id', validatorName: 'RecordValidator', message: `A ${dataType} record has no id; it cannot be read by id.` }]);
      continue;
    }
    const found = documentItems(dataType, record, id);
    add(into.errors, found.errors);
    add(into.warnings, found.warnings);
  }
}
