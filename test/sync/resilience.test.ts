// Syncs against a platform that misbehaves. In-process on fake clocks: 429s reschedule
// the pull (not_before) and it completes once the clock passes Retry-After, or ends
// RateLimitError when retries run out; 5xx faults retry with backoff, then Complete or
// FetchError. With the real `ferry serve` child: the API stays responsive during a big
// sync, and a kill -9 mid-sync resumes after restart with every record exactly once.
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PullRow } from '../../src/service/store/pulls.js';
import { atRest } from '../helpers/at-rest.js';
import { tempDir } from '../helpers/service.js';
import {
  apiClient, createClient, linkedCompany, patchSandbox, readAll, waitFor, type Api,
} from '../helpers/sync.js';
import { type Harness, type ServeProcess, startTestStack, testStore } from '../helpers/stack.js';

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
      expect(record).toMatchObject({ isErrored: false, errorMessage: null, progress: 100 });
      expect((await readAll(h.api, companyId, 'invoices')).length).toBe(120);
    } else {
      expect(record).toMatchObject({ isErrored: true, isCompleted: true });
      expect(record.errorMessage).toMatch(/HTTP 50[03]|platform/i);
    }
    await patchSandbox(h.sandboxUrl, { faultRate: 0 });
  });
});

describe('a big sync in the `ferry serve` child process', () => {
  // Big enough that the sync takes tens of seconds, so the kill lands mid-way (PostgreSQL
  // takes longer per record: as long with fewer).
  const BIG = testStore === 'postgres' ? 50_000 : 200_000;
  const dataDir = tempDir('ferry-sync-kill-');
  let serve: ServeProcess | undefined;
  let api: Api;
  let clientKey: string;
  let companyId: string;
  let pullId: string;
  let progressAtKill = 0;
  /** The service's PostgreSQL database (FERRY_TEST_STORE=postgres), the same across the restart. */
  let database: string | undefined;

  const start = async () => {
    serve = await startTestStack('process', { dataDir, args: ['--rate-limit', '0'] });
    database = serve.database;
    const adminKey = readFileSync(join(dataDir, 'admin.key'), 'utf8').trim();
    return { adminKey, admin: apiClient(serve.listening.baseUrl!, adminKey), sandboxUrl: serve.listening.sandboxUrl! };
  };
  const pull = async () => (await api.call('GET', `/companies/${companyId}/data/history/${pullId}`)).body;

  beforeAll(async () => {
    const { adminKey, admin, sandboxUrl } = await start();
    clientKey = await createClient(admin, adminKey, 'Big Ltd', 'Paid');
    api = apiClient(admin.baseUrl, clientKey);
    ({ companyId } = await linkedCompany(api, sandboxUrl, PLATFORM, BIG, { seed: 99 }));
    const queued = await api.call('POST', `/companies/${companyId}/data/queue/invoices`);
    expect(queued.status, queued.text).toBe(200);
    pullId = queued.body.id;
  });
  afterAll(async () => {
    await serve?.stop('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps GET /companies fast while the worker syncs (p95 < 250 ms)', async () => {
    const latencies: number[] = [];
    await waitFor('40 samples during the sync', async () => {
      const started = performance.now();
      const companies = await api.call('GET', '/companies');
      const elapsed = performance.now() - started;
      expect(companies.status).toBe(200);
      const current = await pull();
      expect(['Queued', 'Fetching'], JSON.stringify(current)).toContain(current.status);
      // Count only requests made while the worker is fetching.
      if (current.status === 'Fetching') latencies.push(elapsed);
      return latencies.length >= 40 && current.progress > 0;
    }, 30_000, 25);
    latencies.sort((a, b) => a - b);
    const p95 = latencies[Math.ceil(latencies.length * 0.95) - 1]!;
    expect(p95).toBeLessThan(250);
  });

  it('survives kill -9 mid-sync: resumes after restart, every invoice exactly once', async () => {
    const status = await api.call('GET', `/companies/${companyId}/dataStatus`);
    expect(status.body.invoices.currentStatus).toBe('Fetching');
    progressAtKill = (await pull()).progress;
    expect(progressAtKill).toBeGreaterThan(0);
    expect(progressAtKill).toBeLessThan(100);
    const killed = await serve!.stop('SIGKILL');
    serve = undefined;
    expect(killed.signal).toBe('SIGKILL');

    api = apiClient((await start()).admin.baseUrl, clientKey);
    // The same pull carries on from its cursor: its progress survived the kill.
    expect((await pull()).progress).toBeGreaterThanOrEqual(progressAtKill);
    const done = await waitFor('the resumed pull to finish', async () => {
      const current = await pull();
      return current.isCompleted && current;
    }, 120_000, 100);
    expect(done).toMatchObject({ status: 'Complete', progress: 100, isErrored: false });
    const history = await api.call('GET', `/companies/${companyId}/data/history`);
    expect(history.body.totalResults).toBe(1);
    const page = await api.call('GET', `/companies/${companyId}/data/invoices?pageSize=1`);
    expect(page.body.totalResults).toBe(BIG);

    expect((await serve!.stop('SIGTERM')).code).toBe(0);
    serve = undefined;
    const stored = atRest({ dataDir, database });
    const counts = await stored.get(`SELECT count(*) AS n, count(DISTINCT id) AS ids, count(DISTINCT generation) AS generations
                                     FROM records WHERE company_id = ? AND data_type = 'invoices'`, companyId);
    expect(counts).toEqual({ n: BIG, ids: BIG, generations: 1 });
    const visible = (await stored.get<{ visible_generation: number }>(
      "SELECT visible_generation FROM datasets WHERE company_id = ? AND data_type = 'invoices'", companyId))!;
    const inVisible = await stored.get("SELECT count(*) AS n FROM records WHERE company_id = ? AND data_type = 'invoices' AND generation = ?",
      companyId, visible.visible_generation);
    expect(inVisible).toEqual({ n: BIG });
  }, 150_000);
});
