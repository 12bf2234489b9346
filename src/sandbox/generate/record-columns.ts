// Every data type's columns as the sandbox generates its records: the dotted leaf paths of
// many tenants' records (seeds apart, so optional fields such as a foreign-currency
// invoice's currencyRate appear), merged in record order. The source of
// src/platforms/record-columns.ts (scripts/generate-record-columns.mjs) and of its test.
import { DATA_TYPES, type DataTypeKey } from '../../platforms/data-types.js';
import { generateRecords } from './records.js';

const TENANTS = 40;
const RECORDS = 150;

/** A field first seen in a later record goes right after the field before it there. */
function merge(columns: string[], known: Set<string>, record: Record<string, unknown>, prefix = '', previous: { path?: string } = {}): void {
  for (const key of Object.keys(record)) {
    const value = record[key];
    if (value === undefined) continue;
    const path = prefix === '' ? key : `${prefix}.${key}`;
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      merge(columns, known, value as Record<string, unknown>, path, previous);
      continue;
    }
    if (!known.has(path)) {
      columns.splice(previous.path === undefined ? 0 : columns.indexOf(previous.path) + 1, 0, path);
      known.add(path);
    }
    previous.path = path;
  }
}

export function recordColumnsOfSandbox(): Record<DataTypeKey, string[]> {
  const table = {} as Record<DataTypeKey, string[]>;
  for (const { key } of DATA_TYPES) {
    const columns: string[] = [];
    const known = new Set<string>();
    for (let t = 0; t < TENANTS; t++) {
      const tenant = { seed: 1_000 + t * 7_919, invoices: 40 + t * 5 };
      for (const record of generateRecords(tenant, key, 0, RECORDS)) merge(columns, known, record);
    }
    table[key] = columns;
  }
  return table;
}
