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
      if (value === undefined || value === null) {
        if (!spec.required) return [];
        // A reference: its id is what the platform needs, so that is what is named.
        const named = spec.properties?.id?.required ? `${name}.id` : name;
        return [item(named, `${named} is required.`)];
      }
      if (typeof value !== 'object' || Array.isArray(value)) return [item(name, `${name} must be an object.`)];
      return Object.entries(spec.properties ?? {}).flatMap(([k, f]) => check(`${name}.${k}`, f, (value as Record<string, unknown>)[k]));
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
      if (value === undefined || value === null) return spec.required ? [item(name, `${name} is required (a number).`)] : [];
      if (typeof value !== 'number' || !Number.isFinite(value)) return [item(name, `${name} must be a number.`)];
      return spec.minimum !== undefined && value < spec.minimum ? [item(name, `${name} must be a number of at least ${spec.minimum}.`)] : [];
    default:
      return [];
  }
}

export function validatePush(dataType: string, record: Record<string, unknown>): ValidationItem[] {
  return Object.entries(PUSH_FIELDS[dataType] ?? {}).flatMap(([name, spec]) => check(name, spec, record[name]));
}
