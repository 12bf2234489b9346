// Sync tests' harness: the sandbox platforms and the service over one temp data dir.
// Deterministic mode runs both in-process on fake clocks with the worker off, and the
// test drives syncOnce() itself; the real-worker tests use startStack() or the `ferry
// serve` child and wait on conditions with deadlines (never fixed sleeps).
import { expect } from 'vitest';
import type { Clock } from '../../src/lib/clock.js';
import { basic, callApi, type CallOptions, type CallResult } from './service.js';

export const ISO_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

/** The PullOperation's keys always present (API.md); a field with no value is left out, never null. */
export const PULL_KEYS = ['id', 'companyId', 'connectionId', 'dataType', 'status', 'requested', 'progress', 'isCompleted', 'isErrored'];
export const DATA_STATUS_KEYS = ['dataType', 'currentStatus', 'lastSuccessfulSync', 'latestSyncId', 'latestSuccessfulSyncId'];
/** The PushOperation's keys always present; completedOnUtc, timeoutInMinutes, errorMessage and changes only with a value. */
export const PUSH_KEYS = ['pushOperationKey', 'companyId', 'dataConnectionKey', 'dataType', 'status', 'statusCode', 'requestedOnUtc', 'validation'];

/** The keys a record should have: `always`, and each of `optional` that has a value (none is ever null). */
export function keysWithValues(record: Record<string, unknown>, always: string[], optional: string[]): string[] {
  for (const key of optional) expect(record[key], key).not.toBeNull();
  return [...always, ...optional.filter((key) => record[key] !== undefined)].sort();
}

/** A clock the test moves by hand; starts at the current whole second. */
export class FakeClock implements Clock {
  private ms: number;

  constructor(start = Math.floor(Date.now() / 1000) * 1000) {
    this.ms = start;
  }

  now(): Date {
    return new Date(this.ms);
  }

  advance(seconds: number): void {
    this.ms += seconds * 1000;
  }

  set(date: Date | string): void {
    this.ms = new Date(date).getTime();
  }
}

/** A valid invoice to push, for customer `customerId`; `overrides` replace fields. */
export function sampleInvoice(customerId: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    invoiceNumber: 'PUSH-1',
    customerRef: { id: customerId },
    issueDate: '2026-11-01T00:00:00Z',
    dueDate: '2026-12-01T00:00:00Z',
    currency: 'GBP',
    lineItems: [{ description: 'Crossing', unitAmount: 50, quantity: 2, subTotal: 100, taxAmount: 20, totalAmount: 120 }],
    subTotal: 100,
    totalTaxAmount: 20,
    totalAmount: 120,
    amountDue: 120,
    status: 'Submitted',
    ...overrides,
  };
}

export interface Api {
  baseUrl: string;
  /** fetch with Basic auth for `apiKey` (default: the key the client was made with). */
  call(method: string, path: string, options?: CallOptions): Promise<CallResult>;
  /** Every response body seen, for "no secret ever leaves" checks. */
  transcript: string[];
}

export function apiClient(baseUrl: string, defaultKey: string): Api {
  const transcript: string[] = [];
  return {
    baseUrl,
    transcript,
    async call(method, path, options = {}) {
      const result = await callApi(baseUrl, defaultKey, method, path, options);
      transcript.push(result.text);
      return result;
    },
  };
}

const sandboxAdminKeys = new Map<string, string>();

/** The admin key the sandbox at `sandboxUrl` accepts (its service's), sent by sandboxCall. */
export function trustSandbox(sandboxUrl: string, adminKey: string): void {
  sandboxAdminKeys.set(sandboxUrl, adminKey);
}

/** JSON call to the sandbox's admin surface, with its service's admin key (see trustSandbox). */
export async function sandboxCall(sandboxUrl: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const adminKey = sandboxAdminKeys.get(sandboxUrl);
  const headers: Record<string, string> = adminKey ? { authorization: basic(adminKey) } : {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(sandboxUrl + path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

export interface Tenant {
  id: string;
  orgId?: string;
  name: string;
  invoices: number;
  tokens: Record<string, string>;
}

export async function createTenant(sandboxUrl: string, platform: string, invoices: number, seed = 4242): Promise<Tenant> {
  const result = await sandboxCall(sandboxUrl, 'POST', '/admin/tenants', { platform, count: 1, invoices, seed });
  if (result.status !== 201) throw new Error(`create tenant: ${result.status} ${JSON.stringify(result.body)}`);
  return result.body.results[0];
}

export async function patchSandbox(sandboxUrl: string, settings: Record<string, unknown>): Promise<void> {
  const result = await sandboxCall(sandboxUrl, 'PATCH', '/admin/settings', settings);
  if (result.status !== 200) throw new Error(`patch settings: ${result.status} ${JSON.stringify(result.body)}`);
}

export async function createClient(api: Api, adminKey: string, name: string, plan: 'Free' | 'Paid'): Promise<string> {
  const result = await api.call('POST', '/admin/clients', { apiKey: adminKey, body: { name, plan } });
  if (result.status !== 201) throw new Error(`createClient: ${result.status} ${result.text}`);
  return result.body.apiKey as string;
}

export interface Linked {
  companyId: string;
  connectionId: string;
  tenant: Tenant;
  /** The Connection record answered by the authorization. */
  connection: any;
}

/** Company → connection → authorization with a fresh sandbox tenant's tokens; asserts Linked. */
export async function linkedCompany(api: Api, sandboxUrl: string, platform: string, invoices: number, options: { apiKey?: string; seed?: number; name?: string } = {}): Promise<Linked> {
  const apiKey = options.apiKey ? { apiKey: options.apiKey } : {};
  const tenant = await createTenant(sandboxUrl, platform, invoices, options.seed);
  const company = await api.call('POST', '/companies', { ...apiKey, body: { name: options.name ?? `Sync ${platform}` } });
  expect(company.status, company.text).toBe(200);
  const created = await api.call('POST', `/companies/${company.body.id}/connections`, { ...apiKey, body: { platformKey: platform } });
  expect(created.status, created.text).toBe(200);
  const authorized = await api.call('PUT', `/companies/${company.body.id}/connections/${created.body.id}/authorization`, { ...apiKey, body: tenant.tokens });
  expect(authorized.status, authorized.text).toBe(200);
  expect(authorized.body.status).toBe('Linked');
  return { companyId: company.body.id, connectionId: created.body.id, tenant, connection: authorized.body };
}

/** Every record of a data set, following _links.next from the first page. */
export async function readAll(api: Api, companyId: string, dataPath: string, options: { apiKey?: string; pageSize?: number; query?: string } = {}): Promise<any[]> {
  const params = new URLSearchParams({ pageSize: String(options.pageSize ?? 500) });
  if (options.query) params.set('query', options.query);
  let next: string | undefined = `/companies/${companyId}/data/${dataPath}?${params}`;
  const records: any[] = [];
  while (next) {
    const page: CallResult = await api.call('GET', next, options.apiKey ? { apiKey: options.apiKey } : {});
    expect(page.status, page.text).toBe(200);
    records.push(...page.body.results);
    next = page.body._links.next?.href;
  }
  return records;
}

/** Polls `probe` every `intervalMs` until it returns a value (not undefined/false) or the deadline passes. */
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined | false>, deadlineMs = 20_000, intervalMs = 50): Promise<T> {
  const deadline = Date.now() + deadlineMs;
  let last: unknown;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    last = value;
    if (Date.now() > deadline) throw new Error(`timed out after ${deadlineMs} ms waiting for ${what} (last: ${String(last)})`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

