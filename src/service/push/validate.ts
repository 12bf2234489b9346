// Field checks before a record is sent to a platform: one validation item per problem,
// so the client fixes everything in one go. The rules come from the push field table
// (fields.ts), the same one the push options route shows.
import type { ValidationItem } from '../errors.js';
import { PUSH_FIELDS, type PushField } from './fields.js';

const item = (itemId: string, message: string): ValidationItem => ({ itemId, message, validatorName: 'PushValidation' });

function check(name: string, spec: PushField, value: unknown): ValidationItem[] {
  switch (spec.type) {
    case 'String':
      if (!spec.required) return [];
      return typeof value === 'string' && value.trim() !== '' ? [] : [item(name, `${name} is required and must be a non-empty string.`)];
    case 'Object': {
      // A reference: its id is what the platform needs.
      if (!spec.required || !spec.properties?.id) return [];
      const ref = value as { id?: unknown } | undefined;
      return ref && typeof ref === 'object' && typeof ref.id === 'string' && ref.id !== '' ? [] : [item(`${name}.id`, `${name}.id is required.`)];
    }
    case 'DateTime':
      if (value === undefined) return spec.required ? [item(name, `${name} is required (ISO 8601 date).`)] : [];
      return typeof value === 'string' && !Number.isNaN(Date.parse(value)) ? [] : [item(name, `${name} must be an ISO 8601 date.`)];
    case 'Array': {
      if (!Array.isArray(value) || value.length === 0) return spec.required ? [item(name, `${name} must be a non-empty array.`)] : [];
      const numbers = Object.entries(spec.properties ?? {}).filter(([, f]) => f.type === 'Number' && f.required).map(([k]) => k);
      return value.flatMap((line: Record<string, unknown>, i) => numbers
        .filter((n) => typeof line?.[n] !== 'number' || !Number.isFinite(line[n] as number))
        .map((n) => item(`${name}[${i}].${n}`, `${n} must be a number.`)));
    }
    case 'Number':
      if (spec.minimum === undefined || value === undefined) return [];
      return typeof value === 'number' && value >= spec.minimum ? [] : [item(name, `${name} must be a number of at least ${spec.minimum}.`)];
    default:
      return [];
  }
}

export function validatePush(dataType: string, record: Record<string, unknown>): ValidationItem[] {
  return Object.entries(PUSH_FIELDS[dataType] ?? {}).flatMap(([name, spec]) => check(name, spec, record[name]));
}
