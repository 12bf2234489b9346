// Shared assertions and fixtures for the service's HTTP tests (not a test file itself).
import { expect } from 'vitest';
import type { Clock } from '../../src/lib/clock.js';
import { ERRORS_DOC_URL } from '../../src/service/errors.js';
import type { CallResult } from '../helpers/service.js';
import type { TestService } from '../helpers/stack.js';

/** A parsed JSON response body (the helper types it loosely). */
export type Body = CallResult['body'];

// Version 4 (random), or 7 for company ids (src/lib/time-ordered-id.ts).
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[47][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
export const ISO_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
export const JSON_TYPE = 'application/json; charset=utf-8';
export const FORBIDDEN = 'You are using an outdated API key or a key not associated with that resource.';
export const MALFORMED = 'Error parsing query - Malformed query.';
export const unknownProperty = (path: string): string => `Error parsing query - Could not resolve property ${path}`;

/** The 402 bodies of API.md, word for word (correlationId aside). */
export const EXPIRED_402 = {
  statusCode: 402,
  service: 'PublicApi',
  error: 'Payment Required',
  validation: { errors: [{ message: `Account expired. Learn more at ${ERRORS_DOC_URL}` }], warnings: [] },
};
export const COMPANY_LIMIT_402 = {
  statusCode: 402,
  service: 'PublicApi',
  error: 'CompanyValidationException: Company limit exceeded',
  validation: {
    errors: [{ itemId: 'Company', message: `Company limit exceeded. Learn more at ${ERRORS_DOC_URL}`, validatorName: 'CreateCompany' }],
    warnings: [],
  },
};

/** An error response in the contract's shape: exact keys, JSON, correlation id echoed in the header. */
export function expectErrorBody(result: CallResult, status: number, error?: string): void {
  expect(result.status, result.text).toBe(status);
  expect(result.headers.get('content-type')).toBe(JSON_TYPE);
  const body = result.body as Record<string, unknown>;
  const keys = ['statusCode', 'service', 'error', 'correlationId'];
  if ('validation' in body) keys.push('validation');
  expect(Object.keys(body).sort()).toEqual(keys.sort());
  expect(body.statusCode).toBe(status);
  expect(body.service).toBe('PublicApi');
  expect(typeof body.error).toBe('string');
  if (error !== undefined) expect(body.error).toBe(error);
  expect(body.correlationId).toMatch(UUID);
  expect(body.correlationId).toBe(result.headers.get('x-correlation-id'));
  expect(nullPaths(body)).toEqual([]);
}

/** The 400 validation items' itemIds, in order. */
export function itemIds(result: CallResult): string[] {
  return (result.body.validation.errors as Array<{ itemId?: string }>).map((item) => item.itemId ?? '');
}

/** Every value of a JSON document, recursively, with its path; for "no null" checks. */
export function nullPaths(value: unknown, path = '$'): string[] {
  if (value === null) return [path];
  if (Array.isArray(value)) return value.flatMap((item, i) => nullPaths(item, `${path}[${i}]`));
  if (typeof value === 'object') return Object.entries(value as object).flatMap(([k, v]) => nullPaths(v, `${path}.${k}`));
  return [];
}

/** A clock the test moves by hand. */
export class ManualClock implements Clock {
  constructor(private current: Date) {}

  now(): Date {
    return new Date(this.current.getTime());
  }

  set(date: Date): void {
    this.current = new Date(date.getTime());
  }
}

export function daysAgo(days: number): string {
  return new Date(Date.now() - days * 24 * 60 * 60 * 1000).toISOString();
}

/** Creates a company and returns its record; fails the test on anything but 200. */
export async function createCompany(t: TestService, apiKey: string, body: Record<string, unknown>): Promise<Body> {
  const result = await t.call('POST', '/companies', { apiKey, body });
  expect(result.status, result.text).toBe(200);
  return result.body;
}

export async function createConnection(t: TestService, apiKey: string, companyId: string, platformKey: string): Promise<Body> {
  const result = await t.call('POST', `/companies/${companyId}/connections`, { apiKey, body: { platformKey } });
  expect(result.status, result.text).toBe(200);
  return result.body;
}
