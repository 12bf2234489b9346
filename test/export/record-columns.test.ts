// The CSV columns of each data type (src/platforms/record-columns.ts) are what the sandbox
// platforms' records hold: regenerate the table (npm run build && npm run record-columns)
// when a generator gains or loses a field.
import { describe, expect, it } from 'vitest';
import { DATA_TYPES } from '../../src/platforms/data-types.js';
import { RECORD_COLUMNS, recordColumns } from '../../src/platforms/record-columns.js';
import { recordColumnsOfSandbox } from '../../src/sandbox/generate/record-columns.js';

describe('record columns', () => {
  it('are the sandbox generators\' fields, for every data type', () => {
    expect(RECORD_COLUMNS).toEqual(recordColumnsOfSandbox());
    expect(Object.keys(RECORD_COLUMNS).sort()).toEqual(DATA_TYPES.map((t) => t.key).sort());
  });

  it('hold the optional fields too: an invoice\'s currencyRate and paidOnDate', () => {
    expect(recordColumns('invoices')).toEqual(expect.arrayContaining(['currencyRate', 'paidOnDate', 'customerRef.id']));
    expect(recordColumns('noSuchType')).toEqual([]);
  });
});
