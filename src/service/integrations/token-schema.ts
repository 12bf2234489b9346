// Checks a token payload against an integration's token fields: one validation item per
// missing, unknown or non-string key. Shared by the service and the bulk migration's
// dry run, so both say the same thing about the same row.
import { tokenValueProblem } from '../../platforms/limits.js';
import type { ValidationItem } from '../errors.js';
import type { TokenField } from '../../platforms/types.js';

export function checkTokenFields(fields: readonly TokenField[], platformName: string, payload: Record<string, unknown>): ValidationItem[] {
  const items: ValidationItem[] = [];
  const known = new Set(fields.map((f) => f.name));
  for (const field of fields) {
    const value = payload[field.name];
    if (field.required && (value === undefined || value === null || value === '')) {
      items.push({ itemId: field.name, message: `${field.name} is required for ${platformName}: ${field.description}`, validatorName: 'TokenSchema' });
    }
  }
  for (const [name, value] of Object.entries(payload)) {
    if (!known.has(name)) {
      items.push({ itemId: name, message: `${name} is not a token field of ${platformName}; expected ${[...known].join(', ')}`, validatorName: 'TokenSchema' });
    } else if (value !== undefined && value !== null && typeof value !== 'string') {
      items.push({ itemId: name, message: `${name} must be a string`, validatorName: 'TokenSchema' });
    } else if (typeof value === 'string') {
      // Never the value itself: it is a secret.
      const problem = tokenValueProblem(value);
      if (problem) items.push({ itemId: name, message: `${name} ${problem}`, validatorName: 'TokenSchema' });
    }
  }
  return items;
}
