// The check of token values against an integration's token fields: the one rule behind the
// service's `PUT …/authorization` (400, one validation item per problem) and the bulk
// migration's first pass (one problem per field of a row), so both say the same thing of
// the same tokens. A problem names the field, never the value: tokens are secrets.
import { tokenValueProblem } from './limits.js';
import type { TokenField } from './types.js';

export interface TokenFieldProblem {
  field: string;
  message: string;
}

/**
 * The problems of `values` (field name → value, as given: the caller trims if it trims):
 * the integration's fields in their order (required and empty, not a string, a bad value),
 * then each key that is not one of its fields, in the order given.
 */
export function tokenFieldProblems(fields: readonly Pick<TokenField, 'name' | 'required' | 'description'>[], platformName: string, values: Readonly<Record<string, unknown>>): TokenFieldProblem[] {
  const problems: TokenFieldProblem[] = [];
  for (const field of fields) {
    const value = values[field.name];
    if (value === undefined || value === null || value === '') {
      if (field.required) problems.push({ field: field.name, message: `${field.name} is required for ${platformName}: ${field.description}` });
    } else if (typeof value !== 'string') {
      problems.push({ field: field.name, message: `${field.name} must be a string` });
    } else {
      const problem = tokenValueProblem(value);
      if (problem) problems.push({ field: field.name, message: `${field.name} ${problem}` });
    }
  }
  for (const name of Object.keys(values)) {
    if (fields.some((f) => f.name === name)) continue;
    const expected = fields.map((f) => f.name).join(', ');
    problems.push({ field: name, message: `${name} is not a token field of ${platformName} (expected ${expected})` });
  }
  return problems;
}
