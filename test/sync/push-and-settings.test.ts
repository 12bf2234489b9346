// Push operations and sync settings, in-process on a fake clock with syncOnce driven by
// hand: validation before sending, the platform's 400 as a Failed push, async pushes
// settled by the push worker, timeouts, the push list; sync settings' defaults, the
// Free plan's 402, and scheduled syncs that run by themselves (only for data sets that
// were requested before).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_ACCESS_TOKEN_TTL_SECONDS as TTL } from '../../src/sandbox/index.js';
import { DATA_TYPES } from '../../src/platforms/data-types.js';
import { resetScheduleCheck } from '../../src/service/sync/schedule.js';
import { readTokens } from '../../src/service/tokens.js';
import { expectRequiredFields } from '../helpers/record-shapes.js';
import {
  ISO_Z, PUSH_KEYS, createClient, keysWithValues, linkedCompany, patchSandbox, type Api, type Linked,
  sampleInvoice,
} from '../helpers/sync.js';
import { type Harness, startTestStack } from '../helpers/stack.js';

const PLATFORM = 'gbol';
const INVOICES = 30;

const asClient = (h: Harness, apiKey: string): Api => ({ ...h.api, call: (method, path, options = {}) => h.api.call(method, path, { apiKey, ...options }) });

/** What the platform itself holds, read with the tenant's own access token. */
async function platformPage(h: Harness, linked: Linked, dataType: string): Promise<{ totalResults: number; results: any[] }> {
  const response = await fetch(`${h.sandboxUrl}/platforms/${PLATFORM}/tenants/${linked.tenant.orgId}/${dataType}?pageSize=5`, {
    headers: { authorization: `Bearer ${linked.tenant.tokens.accessToken}` },
  });
  expect(response.status).toBe(200);
  return (await response.json()) as { totalResults: number; results: any[] };
}

describe('push operations', () => {
  let h: Harness;
  let api: Api;
  let linked: Linked;
  let customerId: string;
  let pushPath: string;
  const invoice = (overrides: Record<string, unknown> = {}) => sampleInvoice(customerId, overrides);
  /** A push operation as listed; the answer to a create also carries the record (`data`). */
  const expectPushRecord = (push: Record<string, unknown>, answer = false) => {
    const keys = keysWithValues(push, answer ? [...PUSH_KEYS, 'data'] : PUSH_KEYS, ['completedOnUtc', 'timeoutInMinutes', 'errorMessage', 'changes']);
    expect(Object.keys(push).sort()).toEqual(keys);
    if (answer) expectRequiredFields(String(push.dataType), push.data as Record<string, unknown>);
    expect('completedOnUtc' in push).toBe(push.status !== 'Pending');
    expect(push.requestedOnUtc).toMatch(ISO_Z);
    expect(push).toMatchObject({ companyId: linked.companyId, dataConnectionKey: linked.connectionId, dataType: 'invoices' });
  };

  beforeAll(async () => {
    h = await startTestStack('fake-clocks');
    api = asClient(h, await createClient(h.api, h.adminKey, 'Push Ltd', 'Paid'));
    linked = await linkedCompany(api, h.sandboxUrl, PLATFORM, INVOICES, { seed: 21 });
    customerId = (await platformPage(h, linked, 'customers')).results[0].id;
    pushPath = `/companies/${linked.companyId}/connections/${linked.connectionId}/push/invoices`;
  });
  afterAll(async () => {
    await h?.stop();
  });

  it.each([
    { case: 'no customerRef', body: () => invoice({ customerRef: undefined }), items: ['customerRef.id'] },
    { case: 'a customerRef without id', body: () => invoice({ customerRef: { companyName: 'Acme' } }), items: ['customerRef.id'] },
    { case: 'no issueDate and no lines', body: () => invoice({ issueDate: undefined, lineItems: [] }), items: ['issueDate', 'lineItems'] },
    { case: 'a negative amount', body: () => invoice({ totalAmount: -1 }), items: ['totalAmount'] },
  ])('validates before sending: $case → 400 naming $items', async ({ body, items }) => {
    const before = (await platformPage(h, linked, 'invoices')).totalResults;
    const result = await api.call('POST', pushPath, { body: body() });
    expect(result.status, result.text).toBe(400);
    expect((result.body.validation.errors as Array<{ itemId: string }>).map((e) => e.itemId)).toEqual(items);
    for (const item of result.body.validation.errors) expect(item.validatorName).toBe('PushValidation');
    // Nothing reached the platform and no push operation was recorded.
    expect((await platformPage(h, linked, 'invoices')).totalResults).toBe(before);
    expect((await api.call('GET', `/companies/${linked.companyId}/push`)).body.totalResults).toBe(0);
  });

  it.each([
    { case: 'an unknown customer', body: () => invoice({ customerRef: { id: 'no-such-customer' } }), itemId: 'customerRef.id', says: 'does not match' },
    { case: 'no status', body: () => invoice({ status: undefined }), itemId: 'status', says: 'status is required' },
    { case: 'a status the platform lacks', body: () => invoice({ status: 'Settled' }), itemId: 'status', says: 'must be one of' },
  ])('the platform\'s 400 for $case is a Failed push with its validation', async ({ body, itemId, says }) => {
    const result = await api.call('POST', pushPath, { body: body() });
    expect(result.status, result.text).toBe(200);
    expectPushRecord(result.body, true);
    expect(result.body).toMatchObject({ status: 'Failed', statusCode: 400 });
    expect(result.body).not.toHaveProperty('changes');
    expect(result.body).not.toHaveProperty('timeoutInMinutes');
    // A record the platform did not take is answered as it was sent, with the fields its type requires.
    expect(result.body.data).toMatchObject(JSON.parse(JSON.stringify(body())));
    expect(result.body.completedOnUtc).toBe(result.body.requestedOnUtc);
    expect(result.body.validation).toEqual({ errors: [{ itemId, message: expect.stringContaining(says), validatorName: 'Platform' }], warnings: [] });
    expect(result.body.errorMessage).toContain(itemId);
  });

  it.each([
    { case: 'a valid invoice', body: () => invoice({ invoiceNumber: 'ASYNC-1' }), status: 'Success' },
    { case: 'an invoice the platform rejects later', body: () => invoice({ customerRef: { id: 'nobody' } }), status: 'Failed' },
  ])('async platform: $case is 200 Pending, then $status once the platform settles it', async ({ body, status }) => {
    await patchSandbox(h.sandboxUrl, { pushMode: 'async', pushDelaySeconds: 5 });
    const before = (await platformPage(h, linked, 'invoices')).totalResults;
    const pending = await api.call('POST', pushPath, { body: body() });
    expect(pending.status, pending.text).toBe(200);
    expectPushRecord(pending.body, true);
    expect(pending.body).toMatchObject({ status: 'Pending', statusCode: 202 });
    expect(pending.body).not.toHaveProperty('errorMessage');
    expect(pending.body).not.toHaveProperty('changes');
    expect(pending.body).not.toHaveProperty('completedOnUtc');
    const one = `/companies/${linked.companyId}/push/${pending.body.pushOperationKey}`;

    h.clock.advance(4);
    expect((await h.sync()).pushes).toBe(0);
    expect((await api.call('GET', one)).body.status).toBe('Pending');

    h.clock.advance(2);
    expect((await h.sync()).pushes).toBe(1);
    const settled = (await api.call('GET', one)).body;
    expectPushRecord(settled);
    expect(settled.status).toBe(status);
    expect(settled.completedOnUtc).toMatch(ISO_Z);
    expect(Date.parse(settled.completedOnUtc)).toBe(h.clock.now().getTime());
    if (status === 'Success') {
      expect(settled.statusCode).toBe(200);
      expect(settled.changes).toEqual([{ type: 'Created', recordRef: { id: expect.any(String), dataType: 'invoices' } }]);
      const onPlatform = await platformPage(h, linked, 'invoices');
      expect(onPlatform.totalResults).toBe(before + 1);
    } else {
      expect(settled.validation.errors).toEqual([{ itemId: 'customerRef.id', message: expect.stringContaining('does not match'), validatorName: 'Platform' }]);
      expect((await platformPage(h, linked, 'invoices')).totalResults).toBe(before);
    }
    await patchSandbox(h.sandboxUrl, { pushMode: 'sync' });
  });

  it.each([
    { case: 'timeoutInMinutes=1', query: '?timeoutInMinutes=1', timeout: 1, stillPendingAt: 59, timedOutAt: 61 },
    { case: 'the default timeout (60 minutes)', query: '', timeout: undefined, stillPendingAt: 3599, timedOutAt: 3601 },
  ])('a push still Pending past $case is TimedOut', async ({ query, timeout, stillPendingAt, timedOutAt }) => {
    await patchSandbox(h.sandboxUrl, { pushMode: 'async', pushDelaySeconds: 86_400 });
    const started = h.clock.now().getTime();
    const pending = await api.call('POST', pushPath + query, { body: invoice() });
    expect(pending.body).toMatchObject({ status: 'Pending' });
    expect(pending.body.timeoutInMinutes).toBe(timeout);
    const one = `/companies/${linked.companyId}/push/${pending.body.pushOperationKey}`;

    h.clock.set(new Date(started + stillPendingAt * 1000));
    await h.sync();
    expect((await api.call('GET', one)).body.status).toBe('Pending');

    h.clock.set(new Date(started + timedOutAt * 1000));
    await h.sync();
    const timedOut = (await api.call('GET', one)).body;
    expectPushRecord(timedOut);
    expect(timedOut).toMatchObject({ status: 'TimedOut' });
    expect(timedOut.timeoutInMinutes).toBe(timeout);
    expect(typeof timedOut.errorMessage).toBe('string');
    expect(Date.parse(timedOut.completedOnUtc)).toBe(started + timedOutAt * 1000);
    await patchSandbox(h.sandboxUrl, { pushMode: 'sync', pushDelaySeconds: 5 });
  });

  it('refreshes an expired access token before pushing, and before asking for a pending push\'s outcome', async () => {
    const stored = async () => (await readTokens(h.service.context.store, h.service.context.sealer, linked.connectionId))!;
    const before = await stored();
    h.clock.advance(TTL + 60);
    const now = await api.call('POST', pushPath, { body: invoice({ invoiceNumber: 'LATE-1' }) });
    expect(now.body, now.text).toMatchObject({ status: 'Success', statusCode: 200 });
    expect(now.body).not.toHaveProperty('errorMessage');
    expect((await stored()).refreshToken).not.toBe(before.refreshToken);

    // The platform settles this one after the access token has expired again.
    await patchSandbox(h.sandboxUrl, { pushMode: 'async', pushDelaySeconds: TTL + 600 });
    const pending = await api.call('POST', `${pushPath}?timeoutInMinutes=120`, { body: invoice({ invoiceNumber: 'LATE-2' }) });
    expect(pending.body.status).toBe('Pending');
    h.clock.advance(TTL + 601);
    expect((await h.sync()).pushes).toBe(1);
    const settled = (await api.call('GET', `/companies/${linked.companyId}/push/${pending.body.pushOperationKey}`)).body;
    expect(settled).toMatchObject({ status: 'Success', statusCode: 200, timeoutInMinutes: 120 });
    const connection = await api.call('GET', `/companies/${linked.companyId}/connections/${linked.connectionId}`);
    expect(connection.body).toMatchObject({ status: 'Linked' });
    expect(connection.body).not.toHaveProperty('dataConnectionErrors');
    await patchSandbox(h.sandboxUrl, { pushMode: 'sync', pushDelaySeconds: 5 });
  });

  it('rejects a timeoutInMinutes that is not a whole number of minutes', async () => {
    for (const value of ['0', '-1', '1.5', 'soon']) {
      const result = await api.call('POST', `${pushPath}?timeoutInMinutes=${value}`, { body: invoice() });
      expect(result.status, value).toBe(400);
    }
  });

  it('a sync push succeeds at once; GET /push lists every push, newest first, and /push/{key} reads one', async () => {
    const ok = await api.call('POST', pushPath, { body: invoice({ invoiceNumber: 'SYNC-1' }) });
    expect(ok.body).toMatchObject({ status: 'Success', statusCode: 200 });
    expect(ok.body).not.toHaveProperty('errorMessage');
    expectPushRecord(ok.body, true);
    // The record as the platform created it: its new id, the fields sent.
    expect(ok.body.data).toMatchObject({ id: ok.body.changes[0].recordRef.id, invoiceNumber: 'SYNC-1' });
    const { data: _created, ...operation } = ok.body;

    const list = await api.call('GET', `/companies/${linked.companyId}/push?pageSize=100`);
    expect(list.status, list.text).toBe(200);
    // 3 Failed, 2 async, 2 timed out, 2 after expiry, and this one.
    expect(list.body.totalResults).toBe(10);
    expect(list.body.results[0]).toEqual(operation);
    for (const push of list.body.results) {
      expectPushRecord(push);
      const one = await api.call('GET', `/companies/${linked.companyId}/push/${push.pushOperationKey}`);
      expect(one.body).toEqual(push);
    }
    const statuses = (list.body.results as Array<{ status: string }>).map((p) => p.status).sort();
    expect(statuses).toEqual(['Failed', 'Failed', 'Failed', 'Failed', 'Success', 'Success', 'Success', 'Success', 'TimedOut', 'TimedOut']);
    const byStatus = await api.call('GET', `/companies/${linked.companyId}/push?query=${encodeURIComponent('status=TimedOut')}`);
    expect(byStatus.body.totalResults).toBe(2);
    const missing = await api.call('GET', `/companies/${linked.companyId}/push/00000000-0000-4000-8000-000000000000`);
    expect(missing.status).toBe(404);
  });
});

describe('sync settings and scheduled syncs', () => {
  let h: Harness;
  let free: Api;
  let paid: Api;
  const SCHEDULE_402 = {
    statusCode: 402,
    service: 'PublicApi',
    error: 'SyncSettingsValidationException: Sync schedule not allowed',
    validation: {
      errors: [{ itemId: 'SyncSettings', message: 'Sync schedule is not allowed for this client.', validatorName: 'SyncSettings' }],
      warnings: [],
    },
  };
  const hourly = (...dataTypes: string[]) => ({ settings: dataTypes.map((dataType) => ({ dataType, syncSchedule: 1 })) });

  beforeAll(async () => {
    h = await startTestStack('fake-clocks');
    free = asClient(h, await createClient(h.api, h.adminKey, 'Free Ltd', 'Free'));
    paid = asClient(h, await createClient(h.api, h.adminKey, 'Paid Ltd', 'Paid'));
  });
  afterAll(async () => {
    await h?.stop();
  });

  it('GET gives the defaults: every data type daily, no fetch on first link', async () => {
    const company = await free.call('POST', '/companies', { body: { name: 'Defaults' } });
    const settings = await free.call('GET', `/companies/${company.body.id}/syncSettings`);
    expect(settings.status, settings.text).toBe(200);
    expect(settings.body).toEqual({
      companyId: company.body.id,
      settings: DATA_TYPES.map((t, i) => ({ dataType: t.key, fetchOnFirstLink: false, syncSchedule: 24, syncOrder: i })),
      overridesDefaults: false,
    });
    const profile = await free.call('GET', '/profile/syncSettings');
    expect(profile.body).toMatchObject({ settings: settings.body.settings, overridesDefaults: false });
    expect(typeof profile.body.clientId).toBe('string');
  });

  it.each([
    { plan: 'Free', where: 'company', schedule: 1, status: 402 },
    { plan: 'Free', where: 'profile', schedule: 23, status: 402 },
    { plan: 'Free', where: 'company', schedule: 24, status: 204 },
    { plan: 'Paid', where: 'company', schedule: 1, status: 204 },
    { plan: 'Paid', where: 'profile', schedule: 1, status: 204 },
  ])('POST syncSchedule $schedule on a $plan client ($where) → $status', async ({ plan, where, schedule, status }) => {
    const api = plan === 'Free' ? free : paid;
    let path = '/profile/syncSettings';
    if (where === 'company') path = `/companies/${(await api.call('POST', '/companies', { body: { name: `${plan} ${schedule}` } })).body.id}/syncSettings`;
    const before = (await api.call('GET', path)).body;
    const result = await api.call('POST', path, { body: { settings: [{ dataType: 'invoices', syncSchedule: schedule }] } });
    expect(result.status, result.text).toBe(status);
    if (status === 402) {
      const { correlationId, ...rest } = result.body;
      expect(rest).toEqual(SCHEDULE_402);
      expect(correlationId).toBe(result.headers.get('x-correlation-id'));
      expect((await api.call('GET', path)).body).toEqual(before);
    } else {
      // As the public API: 204 with no body; the settings read back as set.
      expect(result.text).toBe('');
      expect((await api.call('GET', path)).body.settings).toEqual([{ dataType: 'invoices', fetchOnFirstLink: false, syncSchedule: schedule, syncOrder: 0 }]);
    }
  });

  it('scheduled syncs run by themselves, and only for data sets requested before', async () => {
    const hourlyCo = await linkedCompany(paid, h.sandboxUrl, PLATFORM, 20, { seed: 31, name: 'Hourly' });
    const dailyCo = await linkedCompany(free, h.sandboxUrl, PLATFORM, 20, { seed: 32, name: 'Daily' });
    const set = await paid.call('POST', `/companies/${hourlyCo.companyId}/syncSettings`, { body: hourly('invoices', 'customers', 'bills') });
    expect(set.status, set.text).toBe(204);
    expect((await paid.call('POST', `/companies/${hourlyCo.companyId}/data/queue/invoices`)).status).toBe(200);
    expect((await free.call('POST', `/companies/${dailyCo.companyId}/data/queue/invoices`)).status).toBe(200);
    expect(await h.drain()).toBe(2);
    const start = h.clock.now().getTime();

    const invoicePulls = async (api: Api, companyId: string) => {
      const history = await api.call('GET', `/companies/${companyId}/data/history?pageSize=100`);
      return history.body.results as Array<{ dataType: string; status: string }>;
    };
    const tick = async (minutes: number) => {
      h.clock.set(new Date(start + minutes * 60_000));
      resetScheduleCheck(h.service.context.store);
      return h.sync();
    };

    expect((await tick(59)).scheduled).toBe(0);
    const pass = await tick(61);
    expect(pass).toMatchObject({ scheduled: 1, pulls: 1 });
    const hourlyPulls = await invoicePulls(paid, hourlyCo.companyId);
    expect(hourlyPulls.map((p) => [p.dataType, p.status])).toEqual([['invoices', 'Complete'], ['invoices', 'Complete']]);
    const status = await paid.call('GET', `/companies/${hourlyCo.companyId}/dataStatus`);
    // customers and bills are on the hourly schedule but were never requested: not synced.
    expect(Object.keys(status.body)).toEqual(['invoices']);
    expect(status.body.invoices.lastSuccessfulSync).toBe(new Date(start + 61 * 60_000).toISOString().replace('.000Z', 'Z'));
    expect(await invoicePulls(free, dailyCo.companyId)).toHaveLength(1);

    // A day later the daily default schedule comes round for the other company too.
    const day = await tick(24 * 60 + 1);
    expect(day.scheduled).toBe(2);
    await h.drain();
    expect((await invoicePulls(free, dailyCo.companyId)).map((p) => p.status)).toEqual(['Complete', 'Complete']);
    expect(Object.keys((await free.call('GET', `/companies/${dailyCo.companyId}/dataStatus`)).body)).toEqual(['invoices']);
  });
});
