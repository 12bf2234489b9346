// The queue's order: a company's sync is one job (sync/job.ts), claimed oldest first across
// companies, after the interactive lane: a sync asked with `Ferry-Sync-Priority:
// interactive` (what `ferry check` and `ferry sync ID` send) finishes ahead of a backlog of
// hundreds of companies queued before it. An account has at most five companies in the
// lane; past that a sync queues in the ordinary order, and the request still succeeds.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { integrationByKey } from '../../src/platforms/registry.js';
import { INTERACTIVE_LANE_LIMIT } from '../../src/service/sync/lanes.js';
import { linkedCompany } from '../helpers/sync.js';
import { type Harness, startTestStack } from '../helpers/stack.js';

const PLATFORM = 'gbol';
const BACKLOG = 200;
const interactive = { headers: { 'Ferry-Sync-Priority': 'interactive' } };

describe('the interactive lane and the queue\'s order', () => {
  let h: Harness;
  const backlog: string[] = [];
  const types = integrationByKey(PLATFORM)!.dataTypes.length;

  /** The statuses of the company's data sets, counted. */
  const statuses = async (companyId: string): Promise<Record<string, number>> => {
    const status = await h.api.call('GET', `/companies/${companyId}/dataStatus`);
    expect(status.status, status.text).toBe(200);
    const counts: Record<string, number> = {};
    for (const entry of Object.values(status.body as Record<string, { currentStatus: string }>)) counts[entry.currentStatus] = (counts[entry.currentStatus] ?? 0) + 1;
    return counts;
  };
  const queueAll = async (companyId: string, options = {}) => {
    const queued = await h.api.call('POST', `/companies/${companyId}/data/all`, options);
    expect(queued.status, queued.text).toBe(204);
  };

  beforeAll(async () => {
    h = await startTestStack('fake-clocks');
    for (let i = 0; i < BACKLOG; i++) {
      const { companyId } = await linkedCompany(h.api, h.sandboxUrl, PLATFORM, 2, { name: `Backlog ${i}` });
      await queueAll(companyId);
      backlog.push(companyId);
    }
  }, 240_000);
  afterAll(async () => {
    await h.stop();
  });

  it('runs one company asked for interactively ahead of a backlog of hundreds, then the backlog oldest first', async () => {
    const { companyId } = await linkedCompany(h.api, h.sandboxUrl, PLATFORM, 2, { name: 'Waited on' });
    await queueAll(companyId, interactive);
    // One job a pass: the company in the lane, every data type of it.
    expect(await h.sync({ concurrency: 1 })).toMatchObject({ pulls: types });
    expect(await statuses(companyId)).toEqual({ Complete: types });
    expect(await statuses(backlog[0]!)).toEqual({ Queued: types });
    // Then the backlog's oldest company, not its newest.
    expect(await h.sync({ concurrency: 1 })).toMatchObject({ pulls: types });
    expect(await statuses(backlog[0]!)).toEqual({ Complete: types });
    expect(await statuses(backlog[BACKLOG - 1]!)).toEqual({ Queued: types });
  });

  it('refuses any other value of the header, on both queuing routes', async () => {
    const { companyId } = await linkedCompany(h.api, h.sandboxUrl, PLATFORM, 2);
    for (const path of ['data/all', 'data/queue/invoices']) {
      const refused = await h.api.call('POST', `/companies/${companyId}/${path}`, { headers: { 'Ferry-Sync-Priority': 'urgent' } });
      expect(refused.status, refused.text).toBe(400);
      expect(refused.body.error).toBe('The Ferry-Sync-Priority header must be "interactive" or left out; got "urgent".');
    }
    expect(await statuses(companyId)).toEqual({});
    // One data type, asked for interactively, is claimed first too.
    const one = await h.api.call('POST', `/companies/${companyId}/data/queue/invoices`, interactive);
    expect(one.status, one.text).toBe(200);
    expect(await h.sync({ concurrency: 1 })).toMatchObject({ pulls: 1 });
    expect(await statuses(companyId)).toEqual({ Complete: 1 });
  });

  it(`keeps at most ${INTERACTIVE_LANE_LIMIT} companies of an account in the lane; past that, a sync queues in the ordinary order`, async () => {
    const lane: string[] = [];
    for (let i = 0; i <= INTERACTIVE_LANE_LIMIT; i++) {
      const { companyId } = await linkedCompany(h.api, h.sandboxUrl, PLATFORM, 2, { name: `Lane ${i}` });
      await queueAll(companyId, interactive);
      lane.push(companyId);
    }
    // Asking again for a company in the lane keeps it there, and adds none.
    await queueAll(lane[0]!, interactive);
    for (let pass = 0; pass < INTERACTIVE_LANE_LIMIT; pass++) expect(await h.sync({ concurrency: 1 })).toMatchObject({ pulls: types });
    for (const companyId of lane.slice(0, INTERACTIVE_LANE_LIMIT)) expect(await statuses(companyId)).toEqual({ Complete: types });
    // The sixth was queued behind the backlog: the next pass takes the backlog's oldest left.
    expect(await h.sync({ concurrency: 1 })).toMatchObject({ pulls: types });
    expect(await statuses(backlog[1]!)).toEqual({ Complete: types });
    expect(await statuses(lane[INTERACTIVE_LANE_LIMIT]!)).toEqual({ Queued: types });
  });
});
