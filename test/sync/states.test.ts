// Data set states, driven by hand (fake clocks, syncOnce in-process): not requested and
// requested-not-complete are distinct 409s; unsupported types are 404 to read and a
// NotSupported pull to queue; a resync keeps serving the last complete snapshot until
// it completes, and never duplicates a record.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ISO_Z, PULL_KEYS, createClient, linkedCompany, patchSandbox, readAll, type Api,
} from '../helpers/sync.js';
import { atRest } from '../helpers/at-rest.js';
import { type Harness, startTestStack } from '../helpers/stack.js';

let h: Harness;
let api: Api;
beforeAll(async () => {
  h = await startTestStack('fake-clocks');
  const key = await createClient(h.api, h.adminKey, 'States Ltd', 'Paid');
  api = { ...h.api, call: (method, path, options = {}) => h.api.call(method, path, { apiKey: key, ...options }) };
});
afterAll(async () => {
  await h?.stop();
});

describe('409: not requested vs requested but not complete', () => {
  it('gives distinct messages, on the list and on a record, then 200 once synced', async () => {
    const { companyId } = await linkedCompany(api, h.sandboxUrl, 'gbol', 30, { seed: 1 });
    const list = `/companies/${companyId}/data/invoices`;
    const record = `${list}/00000000-0000-4000-8000-000000000000`;

    const notRequested = [await api.call('GET', list), await api.call('GET', record)];
    for (const result of notRequested) {
      expect(result.status, result.text).toBe(409);
      expect(result.body.error).toContain('has not been requested');
      expect(result.body.error).toContain(`POST /companies/${companyId}/data/all`);
    }

    const queued = await api.call('POST', `/companies/${companyId}/data/queue/invoices`);
    expect(queued.status, queued.text).toBe(200);
    expect(queued.body.status).toBe('Queued');
    const pending = [await api.call('GET', list), await api.call('GET', record)];
    for (const result of pending) {
      expect(result.status, result.text).toBe(409);
      expect(result.body.error).toContain('no sync of it has completed yet');
    }
    expect(pending[0]!.body.error).not.toBe(notRequested[0]!.body.error);
    // Other types stay "not requested".
    expect((await api.call('GET', `/companies/${companyId}/data/bills`)).body.error).toContain('has not been requested');

    expect(await h.drain()).toBe(1);
    const ready = await api.call('GET', `${list}?pageSize=100`);
    expect(ready.status, ready.text).toBe(200);
    expect(ready.body.totalResults).toBe(30);
    expect((await api.call('GET', record)).status).toBe(404);
  });
});

describe.each([
  { platform: 'jhch', name: 'Clear Books' },
  { platform: 'wvzu', name: 'KashFlow' },
  { platform: 'vjms', name: 'Pandle' },
])('journalEntries on $name ($platform), which lacks it', ({ platform, name }) => {
  let companyId: string;
  beforeAll(async () => {
    ({ companyId } = await linkedCompany(api, h.sandboxUrl, platform, 10, { seed: 2 }));
  });

  it('reading is 404 with the public API\'s wording', async () => {
    const result = await api.call('GET', `/companies/${companyId}/data/journalEntries`);
    expect(result.status, result.text).toBe(404);
    expect(result.body.error).toBe(`Datatype journalEntries not supported by platform(s) ${name}`);
  });

  it('queuing it gives a finished NotSupported pull, and reading stays 404', async () => {
    const queued = await api.call('POST', `/companies/${companyId}/data/queue/journalEntries`);
    expect(queued.status, queued.text).toBe(200);
    expect(Object.keys(queued.body).sort()).toEqual([...PULL_KEYS, 'completed', 'statusDescription'].sort());
    expect(queued.body).toMatchObject({ dataType: 'journalEntries', status: 'NotSupported', isCompleted: true, isErrored: true });
    expect(queued.body).not.toHaveProperty('errorMessage');
    expect(queued.body.statusDescription).toContain(name);
    expect(queued.body.completed).toMatch(ISO_Z);
    await h.drain();
    expect((await api.call('GET', `/companies/${companyId}/data/history/${queued.body.id}`)).body).toEqual(queued.body);
    const status = await api.call('GET', `/companies/${companyId}/dataStatus`);
    expect(status.body.journalEntries).toEqual({ dataType: 'journalEntries', currentStatus: 'NotSupported', latestSyncId: queued.body.id });
    expect((await api.call('GET', `/companies/${companyId}/data/journalEntries`)).status).toBe(404);
  });

  it('POST /data/all does not queue it', async () => {
    expect((await api.call('POST', `/companies/${companyId}/data/all`)).status).toBe(204);
    const history = await api.call('GET', `/companies/${companyId}/data/history?pageSize=100`);
    const types = (history.body.results as Array<{ dataType: string }>).map((p) => p.dataType);
    expect(types.filter((t) => t === 'journalEntries')).toHaveLength(1); // the NotSupported one above
    await h.drain();
  });
});

describe('a resync in progress keeps serving the last complete snapshot', () => {
  const INVOICES = 250;
  let companyId: string;
  let connectionId: string;
  let firstIds: string[];
  let pushedId: string;

  beforeAll(async () => {
    ({ companyId, connectionId } = await linkedCompany(api, h.sandboxUrl, 'gbol', INVOICES, { seed: 3 }));
    await api.call('POST', `/companies/${companyId}/data/queue/invoices`);
    expect(await h.drain({ pageSize: 100 })).toBe(1);
    firstIds = (await readAll(api, companyId, 'invoices')).map((i) => i.id);
    expect(firstIds).toHaveLength(INVOICES);
  });

  it('serves the old records mid-resync and the new ones after it', async () => {
    // A new invoice on the platform, so the two snapshots differ.
    const customer = (await readAll(api, companyId, 'invoices'))[0].customerRef;
    const push = await api.call('POST', `/companies/${companyId}/connections/${connectionId}/push/invoices`, {
      body: {
        customerRef: customer, issueDate: '2026-11-01T00:00:00Z', status: 'Draft', currency: 'GBP',
        lineItems: [{ description: 'x', unitAmount: 5, quantity: 1 }], subTotal: 5, totalTaxAmount: 0, totalAmount: 5, amountDue: 5,
      },
    });
    expect(push.body.status, push.text).toBe('Success');
    pushedId = push.body.changes[0].recordRef.id;

    // The platform allows two requests (the clock is frozen): the resync gets two pages in, then a 429.
    await patchSandbox(h.sandboxUrl, { rateLimit: 2 });
    const queued = await api.call('POST', `/companies/${companyId}/data/queue/invoices`);
    expect((await h.sync({ pageSize: 100 })).pulls).toBe(1);
    const mid = (await h.service.context.store.getPull(queued.body.id))!;
    expect(mid).toMatchObject({ status: 'Fetching', fetched: 200, progress: 79 });
    expect(mid.not_before).not.toBeNull();

    const status = await api.call('GET', `/companies/${companyId}/dataStatus`);
    expect(status.body.invoices.currentStatus).toBe('Fetching');
    expect(status.body.invoices.latestSyncId).toBe(queued.body.id);
    expect(status.body.invoices.latestSuccessfulSyncId).not.toBe(queued.body.id);
    const during = await readAll(api, companyId, 'invoices', { pageSize: 100 });
    expect(during.map((i) => i.id)).toEqual(firstIds);
    const history = await api.call('GET', `/companies/${companyId}/data/history/${queued.body.id}`);
    expect(history.body).toMatchObject({ status: 'Fetching', isCompleted: false, progress: 79 });
    expect(history.body).not.toHaveProperty('completed');

    await patchSandbox(h.sandboxUrl, { rateLimit: 0 });
    h.clock.set(mid.not_before!);
    await h.sync({ pageSize: 100 });
    expect((await h.service.context.store.getPull(queued.body.id))!.status).toBe('Complete');
    const after = (await readAll(api, companyId, 'invoices', { pageSize: 100 })).map((i) => i.id);
    expect(after).toEqual([...firstIds, pushedId]);
  });

  it('resyncs never duplicate, and old generations are pruned', async () => {
    for (let i = 0; i < 2; i++) {
      expect((await api.call('POST', `/companies/${companyId}/data/queue/invoices`)).status).toBe(200);
      await h.sync({ pageSize: 64 });
    }
    const ids = (await readAll(api, companyId, 'invoices')).map((i) => i.id);
    expect(ids).toHaveLength(INVOICES + 1);
    expect(new Set(ids).size).toBe(INVOICES + 1);
    const stored = await atRest(h).get(
      "SELECT count(*) AS n, count(DISTINCT id) AS ids, count(DISTINCT generation) AS generations FROM records WHERE company_id = ? AND data_type = 'invoices'",
      companyId);
    expect(stored).toEqual({ n: INVOICES + 1, ids: INVOICES + 1, generations: 1 });
  });

  it('queuing while a pull is open returns that pull instead of a second one', async () => {
    const first = await api.call('POST', `/companies/${companyId}/data/queue/invoices`);
    const second = await api.call('POST', `/companies/${companyId}/data/queue/invoices`);
    expect(second.body.id).toBe(first.body.id);
    await h.sync();
    expect((await api.call('GET', `/companies/${companyId}/data/history/${first.body.id}`)).body.status).toBe('Complete');
  });
});
