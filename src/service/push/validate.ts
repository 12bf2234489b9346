// Field checks before a record is sent to a platform: one validation item per problem,
// so the client fixes everything in one go.
import type { ValidationItem } from '../errors.js';

type Rule = (record: Record<string, unknown>) => ValidationItem[];

const item = (itemId: string, message: string): ValidationItem => ({ itemId, message, validatorName: 'PushValidation' });

function text(field: string): Rule {
  return (r) => (typeof r[field] === 'string' && (r[field] as string).trim() !== '' ? [] : [item(field, `${field} is required and must be a non-empty string.`)]);
}

function ref(field: string): Rule {
  return (r) => {
    const value = r[field] as { id?: unknown } | undefined;
    return value && typeof value === 'object' && typeof value.id === 'string' && value.id !== '' ? [] : [item(`${field}.id`, `${field}.id is required.`)];
  };
}

function date(field: string, required: boolean): Rule {
  return (r) => {
    if (r[field] === undefined) return required ? [item(field, `${field} is required (ISO 8601 date).`)] : [];
    return typeof r[field] === 'string' && !Number.isNaN(Date.parse(r[field] as string)) ? [] : [item(field, `${field} must be an ISO 8601 date.`)];
  };
}

function lineItems(field: string): Rule {
  return (r) => {
    const lines = r[field];
    if (!Array.isArray(lines) || lines.length === 0) return [item(field, `${field} must be a non-empty array.`)];
    const problems: ValidationItem[] = [];
    lines.forEach((line: Record<string, unknown>, i) => {
      for (const numeric of ['unitAmount', 'quantity']) {
        if (typeof line?.[numeric] !== 'number' || !Number.isFinite(line[numeric] as number)) problems.push(item(`${field}[${i}].${numeric}`, `${numeric} must be a number.`));
      }
    });
    return problems;
  };
}

function nonNegative(field: string): Rule {
  return (r) => (r[field] === undefined || (typeof r[field] === 'number' && (r[field] as number) >= 0) ? [] : [item(field, `${field} must be a number of at least 0.`)]);
}

const RULES: Record<string, Rule[]> = {
  invoices: [ref('customerRef'), date('issueDate', true), date('dueDate', false), lineItems('lineItems'), nonNegative('totalAmount'), nonNegative('amountDue')],
  bills: [ref('supplierRef'), date('issueDate', true), date('dueDate', false), lineItems('lineItems'), nonNegative('totalAmount'), nonNegative('amountDue')],
  customers: [text('customerName')],
  suppliers: [text('supplierName')],
};

export function validatePush(dataType: string, record: Record<string, unknown>): ValidationItem[] {
  return (RULES[dataType] ?? []).flatMap((rule) => rule(record));
}
