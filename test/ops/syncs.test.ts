// The sync engine's start of one company, on the fake-clock stack (no worker: what the
// service queued stays queued, so the test sees exactly what was asked).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/client/client.js';
import { startCompany, type CompanyRun } from '../../src/ops/sync/runs.js';
import { integrationByKey } from '../../src/platforms/registry.js';
import { startTestStack, type Harness } from '../helpers/stack.js';
import { linkedCompany } from '../helpers/sync.js';

let h: Harness;
let client: ApiClient;
beforeAll(async () => {
  h = await startTestStack('fake-clocks');
  client = new ApiClient({ baseUrl: h.baseUrl, apiKey: h.adminKey });
});
afterAll(async () => {
  await client?.close();
  await h?.stop();
});

describe('startCompany', () => {
  const signal = new AbortController().signal;
  const fresh = (companyId: string): CompanyRun => ({ companyId, started: false, dataTypes: new Map() });

  it('follows every data type ferry knows the platform supports', async () => {
    const { companyId } = await linkedCompany(h.api, h.sandboxUrl, 'gbol', 2);
    const run = fresh(companyId);
    await startCompany(client, run, undefined, async () => ({ dataTypes: integrationByKey('gbol')!.dataTypes }), signal);
    expect(run.started).toBe(true);
    expect([...run.dataTypes.keys()].sort()).toEqual([...integrationByKey('gbol')!.dataTypes].sort());
  });

  it('for a platform whose data types ferry does not know, follows what the service queued', async () => {
    const { companyId } = await linkedCompany(h.api, h.sandboxUrl, 'gbol', 2);
    const run = fresh(companyId);
    await startCompany(client, run, undefined, async () => ({ dataTypes: [] }), signal);
    expect(run.started).toBe(true);
    expect([...run.dataTypes.keys()].sort()).toEqual([...integrationByKey('gbol')!.dataTypes].sort());
    expect([...run.dataTypes.values()].every((t) => t.id !== undefined)).toBe(true);
  });

  it('queues in the service\'s interactive lane when asked (sync ID), and in the ordinary queue otherwise', async () => {
    const types = async () => ({ dataTypes: integrationByKey('gbol')!.dataTypes });
    const priorities = async (companyId: string) => new Set([...(await h.service.context.store.openPulls(companyId)).values()].map((pull) => pull.priority));
    const waited = (await linkedCompany(h.api, h.sandboxUrl, 'gbol', 2)).companyId;
    await startCompany(client, fresh(waited), undefined, types, signal, undefined, true);
    expect(await priorities(waited)).toEqual(new Set([1]));
    const batch = (await linkedCompany(h.api, h.sandboxUrl, 'gbol', 2)).companyId;
    await startCompany(client, fresh(batch), undefined, types, signal);
    expect(await priorities(batch)).toEqual(new Set([0]));
    // One data type, asked interactively, moves the company's open pulls into the lane too.
    await startCompany(client, fresh(batch), 'invoices', types, signal, undefined, true);
    expect(await priorities(batch)).toEqual(new Set([1]));
  });
});
