// Every route's answer leaves out the fields that have no value: no null anywhere in a JSON
// answer of the service (the earlier platform SDK refuses a null where its document has a
// string; every client takes a field left out). The routes are read from the service
// itself, so a route added without a call here fails the last check. In-process, on fake
// clocks: the syncs run when the test drains them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStream } from '../helpers/sse-reader.js';
import { startTestStack, type Harness } from '../helpers/stack.js';
import { createClient, linkedCompany, sampleInvoice, waitFor, type Api, type Linked } from '../helpers/sync.js';
import { startReceiver, type Receiver } from '../webhooks/support.js';
import { nullPaths } from './support.js';

let h: Harness;
let api: Api;
let key: string;
let linked: Linked;
let receiver: Receiver;
/** `METHOD /route/:template` of every call made. */
const called = new Set<string>();
const nullsFound: string[] = [];

beforeAll(async () => {
  h = await startTestStack('fake-clocks', { service: { webhookTargets: { allowPrivate: true } } });
  key = await createClient(h.api, h.adminKey, 'No Nulls Ltd', 'Paid');
  api = { ...h.api, call: (method, path, options = {}) => h.api.call(method, path, { apiKey: key, ...options }) };
  linked = await linkedCompany(api, h.sandboxUrl, 'gbol', 3, { seed: 17, name: 'No Nulls Linked Ltd' });
  receiver = await startReceiver();
});

afterAll(async () => {
  await receiver?.close();
  await h?.stop();
});

/** Calls a route (named by its template) and keeps where its JSON answer holds a null. */
async function ask(method: string, route: string, path: string, options: { body?: unknown; apiKey?: string; rawBody?: string; headers?: Record<string, string> } = {}): Promise<any> {
  const result = await api.call(method, path, options as never);
  expect(result.status, `${method} ${path}: ${result.text}`).toBeLessThan(400);
  called.add(`${method} ${route}`);
  if ((result.headers.get('content-type') ?? '').startsWith('application/json')) {
    nullsFound.push(...nullPaths(result.body).map((at) => `${method} ${path} ${at}`));
  }
  return result.body;
}

/** The service's routes, as fastify holds them: each path template (methods aside). */
function servedPaths(): string[] {
  const lines = h.service.app.printRoutes({ commonPrefix: false }).split('\n').filter((l) => l.includes('('));
  const stack: string[] = [];
  return lines.map((line) => {
    const at = line.search(/[^│ ├└─]/);
    const depth = Math.floor(at / 4);
    const segment = line.slice(at, line.lastIndexOf(' ('));
    stack.length = depth;
    stack.push(segment);
    return stack.join('');
  });
}

describe('answers without nulls', () => {
  it('every route answers JSON with no null in it', async () => {
    const company = `/companies/${linked.companyId}`;
    const connection = `${company}/connections/${linked.connectionId}`;
    const admin = { apiKey: h.adminKey };

    // The account and its settings.
    const client = await ask('POST', '/admin/clients', '/admin/clients', { ...admin, body: { name: 'Second Ltd', plan: 'Free' } });
    await ask('GET', '/admin/clients', '/admin/clients', admin);
    await ask('GET', '/admin/clients/:clientId', `/admin/clients/${client.id}`, admin);
    const adminKey = await ask('POST', '/admin/clients/:clientId/apiKeys', `/admin/clients/${client.id}/apiKeys`, admin);
    await ask('GET', '/admin/clients/:clientId/apiKeys', `/admin/clients/${client.id}/apiKeys`, admin);
    await ask('DELETE', '/admin/clients/:clientId/apiKeys/:keyId', `/admin/clients/${client.id}/apiKeys/${adminKey.id}`, admin);
    await ask('GET', '/admin/sandbox', '/admin/sandbox', admin);
    await ask('GET', '/profile', '/profile');
    await ask('PUT', '/profile', '/profile', { body: { name: 'No Nulls Ltd', redirectUrl: 'https://app.example.com/{companyId}' } });
    await ask('GET', '/profile/syncSettings', '/profile/syncSettings');
    await ask('POST', '/profile/syncSettings', '/profile/syncSettings', { body: { settings: [{ dataType: 'bills', syncSchedule: 48 }] } });
    for (const path of ['/corsSettings', '/connectionManagement/corsSettings']) {
      await ask('POST', path, path, { body: { allowedOrigins: ['https://app.example.com'] } });
      await ask('GET', path, path);
    }
    const apiKey = await ask('POST', '/apiKeys', '/apiKeys', { body: {} });
    await ask('GET', '/apiKeys', '/apiKeys');
    await ask('DELETE', '/apiKeys/:apiKeyId', `/apiKeys/${apiKey.id}`);

    // Integrations and their configurations.
    await ask('GET', '/integrations', '/integrations');
    await ask('GET', '/integrations/:platformKey', '/integrations/gbol');
    const branding = await ask('GET', '/integrations/:platformKey/branding', '/integrations/gbol/branding');
    await ask('GET', '/branding/:platformKey/:image', new URL(branding.logo.full.image.src).pathname);
    const supplemental = '/integrations/gbol/dataTypes/invoices/supplementalDataConfig';
    await ask('PUT', '/integrations/:platformKey/dataTypes/:dataType/supplementalDataConfig', supplemental, {
      body: { supplementalDataConfig: { extras: { dataSource: '/invoices', pullData: { reference: '$[*].invoiceNumber', missing: '$[*].noSuchField' } } } },
    });
    await ask('GET', '/integrations/:platformKey/dataTypes/:dataType/supplementalDataConfig', supplemental);
    const custom = '/integrations/gbol/dataTypes/custom/names';
    await ask('PUT', '/integrations/:platformKey/dataTypes/custom/:customDataIdentifier', custom, {
      body: { dataSource: '/customers', requiredData: { name: '$[*].customerName', missing: '$[*].noSuchField' }, keyBy: ['$[*].id'], sourceModifiedDate: null },
    });
    await ask('GET', '/integrations/:platformKey/dataTypes/custom/:customDataIdentifier', custom);

    // Companies, their products and syncs.
    const made = await ask('POST', '/companies', '/companies', { body: { name: 'Passing Ltd', description: '' } });
    await ask('GET', '/companies', '/companies');
    await ask('PATCH', '/companies/:companyId', `/companies/${made.id}`, { body: { tags: { region: 'eu' } } });
    await ask('PUT', '/companies/:companyId', `/companies/${made.id}`, { body: { name: 'Passing Ltd' } });
    await ask('PUT', '/companies/:companyId/products/:productIdentifier', `${company}/products/lending`);
    await ask('POST', '/companies/:companyId/products/:productIdentifier/refresh', `${company}/products/lending/refresh`);
    await ask('DELETE', '/companies/:companyId/products/:productIdentifier', `${company}/products/lending`);
    await ask('GET', '/companies/:companyId/accessToken', `${company}/accessToken`);
    await ask('GET', '/companies/:companyId/connectionManagement/accessToken', `${company}/connectionManagement/accessToken`);
    await ask('POST', '/companies/:companyId/syncSettings', `${company}/syncSettings`, { body: { settings: [{ dataType: 'invoices', syncSchedule: 24 }] } });
    await ask('GET', '/companies/:companyId/syncSettings', `${company}/syncSettings`);
    await ask('POST', '/companies/:companyId/data/all', `${company}/data/all`);
    const pull = await ask('POST', '/companies/:companyId/data/queue/:dataType', `${company}/data/queue/invoices`);
    await ask('POST', '/companies/:companyId/connections/:connectionId/data/queue/custom/:customDataIdentifier', `${connection}/data/queue/custom/names`);
    await h.drain();
    await ask('GET', '/companies/:companyId', company);
    await ask('GET', '/companies/:companyId/dataStatus', `${company}/dataStatus`);
    await ask('GET', '/companies/:companyId/data/history', `${company}/data/history`);
    await ask('GET', '/companies/:companyId/data/history/:datasetId', `${company}/data/history/${pull.id}`);
    await ask('GET', '/companies/:companyId/sync/:datasetId/validation', `${company}/sync/${pull.id}/validation`);
    const invoices = await ask('GET', '/companies/:companyId/data/:dataPath', `${company}/data/invoices`);
    const invoice = invoices.results[0];
    await ask('GET', '/companies/:companyId/data/:dataPath/:recordId', `${company}/data/invoices/${invoice.id}`);
    await ask('GET', '/companies/:companyId/data/invoices/:invoiceId/pdf', `${company}/data/invoices/${invoice.id}/pdf`);
    await ask('GET', '/companies/:companyId/connections/:connectionId/data/custom/:customDataIdentifier', `${connection}/data/custom/names`);

    // Connections, pushes and attachments.
    const other = await ask('POST', '/companies/:companyId/connections', `/companies/${made.id}/connections`, { body: { platformKey: 'gbol' } });
    await ask('GET', '/companies/:companyId/connections', `${company}/connections`);
    await ask('GET', '/companies/:companyId/connections/:connectionId', connection);
    await ask('GET', '/companies/:companyId/connections/:connectionId/options/:dataType', `${connection}/options/invoices`);
    const customers = await ask('GET', '/companies/:companyId/data/:dataPath', `${company}/data/customers`);
    const pushed = await ask('POST', '/companies/:companyId/connections/:connectionId/push/:dataType', `${connection}/push/invoices`, { body: sampleInvoice(customers.results[0].id) });
    const pushedId = pushed.data.id as string;
    await ask('PUT', '/companies/:companyId/connections/:connectionId/push/:dataType/:recordId', `${connection}/push/invoices/${pushedId}?forceUpdate=true`, {
      body: sampleInvoice(customers.results[0].id, { invoiceNumber: 'NN-2' }),
    });
    await ask('GET', '/companies/:companyId/push', `${company}/push`);
    await ask('GET', '/companies/:companyId/push/:pushOperationKey', `${company}/push/${pushed.pushOperationKey}`);
    await ask('DELETE', '/companies/:companyId/connections/:connectionId/push/:dataType/:recordId', `${connection}/push/invoices/${pushedId}`);
    const upload = (spelling: string) => ask('POST', `/companies/:companyId/connections/:connectionId/push/:dataType/:recordId/${spelling}`,
      `${connection}/push/invoices/${invoice.id}/${spelling}?fileName=scan-${spelling}.txt`, { rawBody: `a scan, ${spelling}`, headers: { 'content-type': 'text/plain' } });
    await upload('attachment');
    await upload('attachments');
    const attachments = `${connection}/data/invoices/${invoice.id}/attachments`;
    const listed = await ask('GET', '/companies/:companyId/connections/:connectionId/data/:dataPath/:recordId/attachments', attachments);
    const attachment = listed.attachments[0];
    await ask('GET', '/companies/:companyId/connections/:connectionId/data/:dataPath/:recordId/attachments/:attachmentId', `${attachments}/${attachment.id}`);
    await ask('GET', '/companies/:companyId/connections/:connectionId/data/:dataPath/:recordId/attachments/:attachmentId/download', `${attachments}/${attachment.id}/download`);
    await ask('DELETE', '/companies/:companyId/connections/:connectionId/data/:dataPath/:recordId/attachments/:attachmentId', `${attachments}/${attachment.id}`);
    const accounts = await ask('GET', '/companies/:companyId/connections/:connectionId/data/:dataPath', `${connection}/data/bankAccounts`);
    await ask('GET', '/companies/:companyId/connections/:connectionId/data/:dataPath/:recordId', `${connection}/data/bankAccounts/${accounts.results[0].id}`);
    await ask('PATCH', '/companies/:companyId/connections/:connectionId', connection, { body: { status: 'Unlinked' } });
    await ask('PUT', '/companies/:companyId/connections/:connectionId/authorization', `${connection}/authorization`, { body: linked.tenant.tokens });
    await ask('DELETE', '/companies/:companyId/connections/:connectionId', `/companies/${made.id}/connections/${other.id}`);

    // Webhooks and events.
    const consumer = await ask('POST', '/webhooks', '/webhooks', { body: { url: receiver.url, eventTypes: ['company.created'] } });
    await ask('GET', '/webhooks', '/webhooks');
    await ask('GET', '/webhooks/:webhookId', `/webhooks/${consumer.id}`);
    const test = await ask('POST', '/webhooks/:webhookId/test', `/webhooks/${consumer.id}/test`);
    await ask('GET', '/webhooks/:webhookId/deliveries/:deliveryId', `/webhooks/${consumer.id}/deliveries/${test.id}`);
    await waitFor('the test event delivered', async () => (await api.call('GET', `/webhooks/${consumer.id}/deliveries/${test.id}`)).body.status === 'Delivered');
    await ask('GET', '/webhooks/:webhookId/deliveries/:deliveryId', `/webhooks/${consumer.id}/deliveries/${test.id}`);
    await ask('GET', '/webhooks/:webhookId/deliveries', `/webhooks/${consumer.id}/deliveries`);
    await ask('POST', '/webhooks/:webhookId/deliveries/:deliveryId/replay', `/webhooks/${consumer.id}/deliveries/${test.id}/replay`);
    const rule = await ask('POST', '/rules', '/rules', { body: { type: 'DataConnectionStatusChanged', notifiers: { webhook: receiver.url } } });
    await ask('GET', '/rules', '/rules');
    await ask('GET', '/rules/:ruleId', `/rules/${rule.id}`);
    await ask('DELETE', '/webhooks/:webhookId', `/webhooks/${consumer.id}`);
    await ask('GET', '/events', '/events');
    await ask('GET', '/events/types', '/events/types');
    const stream = await openStream(h.baseUrl, key, '/events/stream');
    expect(stream.status).toBe(200);
    stream.close();
    called.add('GET /events/stream');
    await ask('DELETE', '/companies/:companyId', `/companies/${made.id}`);
    await ask('GET', '/healthz', '/healthz');
    await ask('GET', '/readyz', '/readyz');

    expect(nullsFound).toEqual([]);
    // The router keeps path words in lower case (they match in any case).
    const templates = new Set([...called].map((c) => c.slice(c.indexOf(' ') + 1).toLowerCase()));
    expect(servedPaths().filter((path) => !templates.has(path.toLowerCase()))).toEqual([]);
  });
});
