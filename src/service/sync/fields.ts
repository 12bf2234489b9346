// Learns which paths a data type's records have, and their types, so `query` can name
// any field a record really has (and say "Could not resolve property" for any other).
import type { FieldType } from '../query/types.js';

const KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

export function collectFields(value: Record<string, unknown>, into: Map<string, FieldType>, prefix = ''): void {
  for (const [key, child] of Object.entries(value)) {
    if (!KEY.test(key) || child === null || child === undefined || Array.isArray(child)) continue;
    const path = prefix + key;
    if (typeof child === 'object') collectFields(child as Record<string, unknown>, into, `${path}.`);
    else if (!into.has(path)) {
      const type: FieldType = typeof child === 'number' ? 'number'
        : typeof child === 'boolean' ? 'boolean'
        : typeof child === 'string' && ISO_DATE.test(child) ? 'date'
        : 'string';
      into.set(path, type);
    }
  }
}
