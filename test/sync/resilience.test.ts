// Syncs against a platform that misbehaves. In-process on fake clocks: 429s reschedule
// the pull (not_before) and it completes once the clock passes Retry-After, or ends
// RateLimitError when retries run out; 5xx faults retry with backoff, then Complete or
// FetchError. The real `ferry serve` child killed mid-sync is in resilience.e2e.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PullRow } from '../../src/service/store/pulls.js';
import { linkedCompany, patchSandbox, readAll } from '../helpers/sync.js';
import { type Harness, startTestStack } from '../helpers/stack.js';

const PLATFORM = 'gbol';

describe('in-process, on fake clocks', () => {
  let h: Harness;
  beforeAll(async () => {
    // The sandbox keeps a clock of its own: frozen unless a test moves it along with the service's.
    h = await startTestStack('fake-clocks', { separateSandboxClock: true });
  });
  afterAll(async () => {
    await h?.stop();
  });

  const pullOf = async (id: string): Promise<PullRow> => (await h.service.context.store.getPull(id))!;

  /** Linked company with its invoices queued; the platform's settings applied after linking. */
  async function queued(invoices: number, settings: Record<string, unknown>): Promise<{ companyId: string; pullId: string }> {
    await patchSandbox(h.sandboxUrl, { rateLimit: 0, faultRate: 0 });
    const { companyId } = await linkedCompany(h.api, h.sandboxUrl, PLATFORM, invoices, { seed: invoices });
    await patchSandbox(h.sandboxUrl, settings);
    const pull = await h.api.call('POST', `/companies/${companyId}/data/queue/invoices`);
    expect(pull.status, pull.text).toBe(200);
    return { companyId, pullId: pull.body.id };
  }

  /** Moves the clocks to the pull's retry time (the sandbox's only when asked), checking it is not claimable a second early. */
  async function passRetryTime(pull: PullRow, moveSandbox: boolean): Promise<void> {
    expect(pull.not_before, JSON.stringify(pull)).not.toBeNull();
    const seconds = (Date.parse(pull.not_before!) - h.clock.now().getTime()) / 1000;
    expect(seconds).toBeGreaterThanOrEqual(1);
    const move = (by: number) => {
      h.clock.advance(by);
      if (moveSandbox) h.sandboxClock.advance(by);
    };
    move(seconds - 1);
    expect((await h.sync()).pulls).toBe(0);
    move(1);
  }

  it('survives 429s: the pull waits for Retry-After (never RateLimitError) and completes', async () => {
    const { companyId, pullId } = await queued(400, { rateLimit: 3 });
    const statuses: string[] = [];
    let reschedules = 0;
    for (let pass = 0; pass < 30; pass++) {
      await h.sync({ pageSize: 50 });
      const pull = await pullOf(pullId);
      statuses.push(pull.status);
      if (pull.status !== 'Fetching') break;
      reschedules += 1;
      expect(pull.status_description).toMatch(/^Waiting \d+s for the platform's rate limit\.$/);
      await passRetryTime(pull, true);
    }
    expect(statuses.at(-1)).toBe('Complete');
    expect(statuses).not.toContain('RateLimitError');
    expect(reschedules).toBeGreaterThanOrEqual(2);
    const records = await readAll(h.api, companyId, 'invoices', { pageSize: 100 });
    expect(records).toHaveLength(400);
    expect(new Set(records.map((r) => r.id)).size).toBe(400);
  });

  it('ends RateLimitError once the 429 retries are exhausted', async () => {
    // One request per second on a frozen platform clock: after the first page every call is a 429.
    const { companyId, pullId } = await queued(300, { rateLimit: 1 });
    let passes = 0;
    let pull = await pullOf(pullId);
    while (pull.status === 'Fetching' || pull.status === 'Queued') {
      expect(++passes).toBeLessThanOrEqual(20);
      await h.sync({ pageSize: 100 });
      pull = await pullOf(pullId);
      if (pull.status === 'Fetching') await passRetryTime(pull, false);
    }
    expect(passes).toBe(11); // the first 429 and ten retries
    const record = (await h.api.call('GET', `/companies/${companyId}/data/history/${pullId}`)).body;
    expect(record).toMatchObject({ status: 'RateLimitError', isCompleted: true, isErrored: true });
    expect(record.errorMessage).toContain('rate limit');
    expect((await h.api.call('GET', `/companies/${companyId}/data/invoices`)).status).toBe(409);
  });

  it.each([
    { case: 'two faulty passes, then a healthy platform', faultyPasses: 2, passes: 3, status: 'Complete' },
    { case: 'a platform that keeps failing', faultyPasses: Infinity, passes: 4, status: 'FetchError' },
  ])('platform faults: $case → $status', async ({ faultyPasses, passes, status }) => {
    const { companyId, pullId } = await queued(120, { faultRate: 1 });
    let pass = 0;
    let pull = await pullOf(pullId);
    while (pull.status === 'Queued' || pull.status === 'Fetching') {
      expect(pass).toBeLessThan(10);
      if (pass === faultyPasses) await patchSandbox(h.sandboxUrl, { faultRate: 0 });
      await h.sync({ pageSize: 50 });
      pass += 1;
      pull = await pullOf(pullId);
      if (pull.status !== 'Fetching') break;
      // Exponential backoff: 2, 4, 8 s.
      expect(Date.parse(pull.not_before!) - h.clock.now().getTime()).toBe(2 ** pull.attempts * 1000);
      expect(pull.status_description).toMatch(/^Retrying after: /);
      await passRetryTime(pull, true);
    }
    expect(pass).toBe(passes);
    const record = (await h.api.call('GET', `/companies/${companyId}/data/history/${pullId}`)).body;
    expect(record.status).toBe(status);
    if (status === 'Complete') {
      expect(record).toMatchObject({ isErrored: false, progress: 100 });
      expect(record).not.toHaveProperty('errorMessage');
      expect((await readAll(h.api, companyId, 'invoices')).length).toBe(120);
    } else {
      expect(record).toMatchObject({ isErrored: true, isCompleted: true });
      expect(record.errorMessage).toMatch(/HTTP 50[03]|platform/i);
    }
    await patchSandbox(h.sandboxUrl, { faultRate: 0 });
  });
});
