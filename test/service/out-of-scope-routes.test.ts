// Routes older clients still call that belong to products ferry does not serve (company
// groups, lending, expenses, bank feeds) answer 404 in the error envelope, naming the route
// as outside ferry's scope; a route that is simply unknown is still "No route".
import { CodatPlatform as CodatPlatformV4 } from '@codat/platform-v4';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basic } from '../helpers/service.js';
import { startTestStack, type TestService } from '../helpers/stack.js';
import { OUT_OF_SCOPE, SERVED } from './older-client-routes.js';
import { expectErrorBody } from './support.js';

let t: TestService;
let key: string;
let company: string;
let connection: string;

beforeAll(async () => {
  t = await startTestStack('service');
  key = (await t.createClient('Scope Ltd', 'Paid')).apiKey;
  company = (await t.call('POST', '/companies', { apiKey: key, body: { name: 'Scoped Co' } })).body.id;
  connection = (await t.call('POST', `/companies/${company}/connections`, { apiKey: key, body: { platformKey: 'gbol' } })).body.id;
});
afterAll(async () => t?.stop());

const ROUTES: Array<[method: string, path: () => string, product: string]> = [
  ['GET', () => '/groups', 'company groups'],
  ['POST', () => '/groups', 'company groups'],
  ['POST', () => `/companies/${company}/groups`, 'company groups'],
  ['PATCH', () => `/companies/${company}/groups`, 'company groups'],
  ['DELETE', () => `/companies/${company}/groups/00000000-0000-4000-8000-000000000000`, 'company groups'],
  ['GET', () => `/companies/${company}/sync/expenses/config`, 'the expenses product'],
  ['POST', () => `/companies/${company}/sync/expenses/expense-transactions`, 'the expenses product'],
  ['GET', () => `/companies/${company}/reports/enhancedCashFlow/transactions`, 'the lending product (reports)'],
  ['GET', () => `/companies/${company}/reports/balanceSheet`, 'the lending product (reports)'],
  ['GET', () => `/companies/${company}/data/financials/profitAndLoss`, 'the lending product (financial statements)'],
  ['GET', () => `/data/companies/${company}/assess/excel`, 'the lending product (assess)'],
  ['GET', () => `/companies/${company}/files`, 'the lending product (files)'],
  ['POST', () => `/companies/${company}/connections/${connection}/files`, 'the lending product (files)'],
  ['POST', () => `/companies/${company}/connections/${connection}/bankStatements/upload/startSession`, 'the lending product (bank statements)'],
  ['GET', () => `/companies/${company}/connections/${connection}/data/banking-accounts`, 'the lending product (banking and commerce data)'],
  ['GET', () => `/companies/${company}/connections/${connection}/data/commerce-orders/o1`, 'the lending product (banking and commerce data)'],
  ['GET', () => `/companies/${company}/connections/${connection}/bankFeedAccounts/mapping`, 'the bank feeds product'],
  ['GET', () => `/companies/${company}/connections/${connection}/data/bankAccounts/a1/bankTransactions`, 'the bank feeds product (bank transactions)'],
  ['POST', () => `/companies/${company}/connections/${connection}/push/bankAccounts/a1/bankTransactions`, 'the bank feeds product (bank transactions)'],
];

describe('routes outside ferry\'s scope', () => {
  it.each(ROUTES)('%s %s: 404 naming the route as outside the scope', async (method, path, product) => {
    const result = await t.call(method, path(), { apiKey: key, ...(method === 'POST' ? { body: {} } : {}) });
    expectErrorBody(result, 404,
      `${method} ${path()} is outside ferry's scope: it belongs to ${product}, which this service does not serve (docs/api.md lists these routes).`);
  });

  it('the earlier platform SDK\'s groups: its error carries the envelope', async () => {
    const sdk = new CodatPlatformV4({ authHeader: basic(key), serverURL: t.baseUrl, retryConfig: { strategy: 'none' } });
    const err = await sdk.groups.list().then(() => undefined, (e: unknown) => e as { statusCode?: number; body?: string; rawResponse?: Response });
    expect(err?.statusCode).toBe(404);
    expect(JSON.parse(err!.body!)).toMatchObject({ statusCode: 404, service: 'PublicApi', error: 'GET /groups is outside ferry\'s scope: it belongs to company groups, which this service does not serve (docs/api.md lists these routes).' });
  });

  it('an unknown route, and an unknown data type, are not named outside the scope', async () => {
    expectErrorBody(await t.call('GET', '/nowhere', { apiKey: key }), 404, 'No route GET /nowhere.');
    expectErrorBody(await t.call('GET', `/companies/${company}/data/unicorns`, { apiKey: key }), 404, 'Unknown data type unicorns.');
    // Without a key, as any route: 401 first.
    expect((await t.call('GET', '/groups', { apiKey: null })).status).toBe(401);
  });
});

/** A route template of an older client with this test's company and connection, and any other id. */
function pathOf(template: string): string {
  return template.replace('{companyId}', company).replace('{connectionId}', connection).replace('{dataType}', 'invoices')
    .replace('{platformKey}', 'gbol').replace(/\{\w+\}/g, '00000000-0000-4000-8000-000000000000');
}
const withBody = (method: string) => (method === 'GET' || method === 'DELETE' ? {} : { body: {} });

describe('every route the older clients call', () => {
  it.each(OUT_OF_SCOPE)('%s: outside the scope, naming %s', async (route, product) => {
    const [method, template] = route.split(' ') as [string, string];
    const result = await t.call(method, pathOf(template), { apiKey: key, ...withBody(method) });
    expectErrorBody(result, 404,
      `${method} ${pathOf(template)} is outside ferry's scope: it belongs to ${product}, which this service does not serve (docs/api.md lists these routes).`);
  });

  // Deletes last: they take the company and connection the others read.
  const served = [...SERVED].sort((a, b) => Number(a.startsWith('DELETE')) - Number(b.startsWith('DELETE')));
  it.each(served)('%s: served', async (route) => {
    const [method, template] = route.split(' ') as [string, string];
    const result = await t.call(method, pathOf(template), { apiKey: key, ...withBody(method) });
    const error = String((result.body as { error?: unknown } | undefined)?.error ?? '');
    expect(error, `${route}: ${result.status}`).not.toMatch(/^No route|outside ferry's scope/);
  });
});
