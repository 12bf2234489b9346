// Updates and deletes as push operations (PUT and DELETE …/push/{dataType}/{id}), in-process
// on a fake clock: the same checks before sending as a create, the platform's answer as a
// Modified or Deleted change, its 404 for an unknown record and its refusal of a stale copy
// (unless forceUpdate), async platforms settled by the push worker, and the next sync
// reading what the platform now holds.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, linkedCompany, patchSandbox, readAll, sampleInvoice, type Api, type Linked } from '../helpers/sync.js';
import { startTestStack, type Harness } from '../helpers/stack.js';
import { expectRequiredFields } from '../helpers/record-shapes.js';

const PLATFORM = 'gbol';
const INVOICES = 12;

describe('push operations that update and delete', () => {
  let h: Harness;
  let api: Api;
  let linked: Linked;
  let invoices: any[];
  let base: string;

  /** The platform's own copy of an invoice, read with the tenant's access token. */
  async function onPlatform(id: string): Promise<any> {
    const response = await fetch(`${h.sandboxUrl}/platforms/${PLATFORM}/tenants/${linked.tenant.orgId}/invoices?pageSize=500`, {
      headers: { authorization: `Bearer ${linked.tenant.tokens.accessToken}` },
    });
    const page = (await response.json()) as { results: any[]; totalResults: number };
    return { record: page.results.find((r) => r.id === id), total: page.totalResults };
  }

  async function syncInvoices(): Promise<any[]> {
    const queued = await api.call('POST', `/companies/${linked.companyId}/data/queue/invoices`);
    expect(queued.status, queued.text).toBe(200);
    await h.drain();
    return readAll(api, linked.companyId, 'invoices');
  }

  beforeAll(async () => {
    h = await startTestStack('fake-clocks');
    const key = await createClient(h.api, h.adminKey, 'Edits Ltd', 'Paid');
    api = { ...h.api, call: (method, path, options = {}) => h.api.call(method, path, { apiKey: key, ...options }) };
    linked = await linkedCompany(api, h.sandboxUrl, PLATFORM, INVOICES, { seed: 77 });
    invoices = await syncInvoices();
    base = `/companies/${linked.companyId}/connections/${linked.connectionId}/push/invoices`;
  });
  afterAll(async () => {
    await h?.stop();
  });

  const edited = (invoice: any, overrides: Record<string, unknown> = {}) => sampleInvoice(invoice.customerRef.id, {
    invoiceNumber: `${invoice.invoiceNumber}-R`, sourceModifiedDate: invoice.sourceModifiedDate, ...overrides,
  });

  it('an update is a Modified change; the platform holds the new fields under the same id', async () => {
    const target = invoices[0];
    const result = await api.call('PUT', `${base}/${target.id}`, { body: edited(target) });
    expect(result.status, result.text).toBe(200);
    expect(result.body).toMatchObject({ status: 'Success', statusCode: 200, dataType: 'invoices' });
    expect(result.body).not.toHaveProperty('errorMessage');
    expect(result.body.changes).toEqual([{ type: 'Modified', recordRef: { id: target.id, dataType: 'invoices' } }]);
    expect(result.body.data).toMatchObject({ id: target.id, invoiceNumber: `${target.invoiceNumber}-R` });
    expectRequiredFields('invoices', result.body.data);
    const { record, total } = await onPlatform(target.id);
    expect(record).toMatchObject({ id: target.id, invoiceNumber: `${target.invoiceNumber}-R`, totalAmount: 120 });
    expect(total).toBe(INVOICES);
    // The push history keeps it, and says what it changed.
    const stored = await api.call('GET', `/companies/${linked.companyId}/push/${result.body.pushOperationKey}`);
    expect(stored.body.changes[0].type).toBe('Modified');
  });

  it('a stale copy is refused by the platform (Failed 400 naming sourceModifiedDate); forceUpdate=true overrides it', async () => {
    const target = invoices[0];
    const stale = await api.call('PUT', `${base}/${target.id}`, { body: edited(target, { invoiceNumber: 'STALE' }) });
    expect(stale.body).toMatchObject({ status: 'Failed', statusCode: 400 });
    expect(stale.body).not.toHaveProperty('changes');
    expect(stale.body.validation.errors).toEqual([{ itemId: 'sourceModifiedDate', message: expect.stringContaining('changed on the platform'), validatorName: 'Platform' }]);
    expect((await onPlatform(target.id)).record.invoiceNumber).toBe(`${target.invoiceNumber}-R`);

    const forced = await api.call('PUT', `${base}/${target.id}?forceUpdate=true`, { body: edited(target, { invoiceNumber: 'FORCED' }) });
    expect(forced.body).toMatchObject({ status: 'Success', statusCode: 200 });
    expect((await onPlatform(target.id)).record.invoiceNumber).toBe('FORCED');
    expect((await api.call('PUT', `${base}/${target.id}?forceUpdate=maybe`, { body: edited(target) })).status).toBe(400);
  });

  it('checks an update before sending, as a create: 400 naming each field, nothing sent', async () => {
    const target = invoices[1];
    const result = await api.call('PUT', `${base}/${target.id}`, { body: edited(target, { issueDate: undefined, lineItems: [] }) });
    expect(result.status, result.text).toBe(400);
    expect(result.body.validation.errors.map((e: { itemId: string }) => e.itemId)).toEqual(['issueDate', 'lineItems']);
    expect((await onPlatform(target.id)).record.invoiceNumber).toBe(target.invoiceNumber);
  });

  it('an unknown record is the platform\'s 404, recorded as a Failed push', async () => {
    const missing = '00000000-0000-4000-8000-000000000000';
    const update = await api.call('PUT', `${base}/${missing}`, { body: edited(invoices[1], { sourceModifiedDate: undefined }) });
    expect(update.body).toMatchObject({ status: 'Failed', statusCode: 404 });
    expect(update.body.errorMessage).toContain(missing);
    const remove = await api.call('DELETE', `${base}/${missing}`);
    expect(remove.body).toMatchObject({ status: 'Failed', statusCode: 404 });
  });

  it('a delete is a Deleted change: the platform still lists the record, marked deleted, and the next sync reads it so', async () => {
    const target = invoices[2];
    const result = await api.call('DELETE', `${base}/${target.id}`);
    expect(result.status, result.text).toBe(200);
    expect(result.body).toMatchObject({ status: 'Success', statusCode: 200 });
    expect(result.body).not.toHaveProperty('data');
    expect(result.body.changes).toEqual([{ type: 'Deleted', recordRef: { id: target.id, dataType: 'invoices' } }]);
    const { record, total } = await onPlatform(target.id);
    expect(record.metadata).toEqual({ isDeleted: true });
    expect(total).toBe(INVOICES);
    // Deleted once: a second delete or an update finds nothing to change.
    expect((await api.call('DELETE', `${base}/${target.id}`)).body).toMatchObject({ status: 'Failed', statusCode: 404 });

    const after = await syncInvoices();
    expect(after).toHaveLength(INVOICES);
    expect(after.find((r) => r.id === target.id).metadata).toEqual({ isDeleted: true });
    expect(after.find((r) => r.id === invoices[0].id).invoiceNumber).toBe('FORCED');
  });

  it('an async platform: update and delete are Pending, then settled by the push worker as Modified and Deleted', async () => {
    await patchSandbox(h.sandboxUrl, { pushMode: 'async', pushDelaySeconds: 5 });
    const [first, second] = [invoices[3], invoices[4]];
    const update = await api.call('PUT', `${base}/${first.id}`, { body: edited(first) });
    const remove = await api.call('DELETE', `${base}/${second.id}`);
    for (const pending of [update, remove]) {
      expect(pending.body).toMatchObject({ status: 'Pending', statusCode: 202 });
      expect(pending.body).not.toHaveProperty('changes');
    }
    h.clock.advance(6);
    expect((await h.sync()).pushes).toBe(2);
    const read = async (key: string) => (await api.call('GET', `/companies/${linked.companyId}/push/${key}`)).body;
    expect((await read(update.body.pushOperationKey)).changes).toEqual([{ type: 'Modified', recordRef: { id: first.id, dataType: 'invoices' } }]);
    expect((await read(remove.body.pushOperationKey)).changes).toEqual([{ type: 'Deleted', recordRef: { id: second.id, dataType: 'invoices' } }]);
    expect((await onPlatform(first.id)).record.invoiceNumber).toBe(`${first.invoiceNumber}-R`);
    expect((await onPlatform(second.id)).record.metadata).toEqual({ isDeleted: true });
    await patchSandbox(h.sandboxUrl, { pushMode: 'sync' });
  });

  it('a data type that cannot be pushed cannot be updated or deleted either', async () => {
    const path = `/companies/${linked.companyId}/connections/${linked.connectionId}/push/taxRates/x`;
    expect((await api.call('PUT', path, { body: {} })).status).toBe(400);
    expect((await api.call('DELETE', path)).status).toBe(400);
  });
});
