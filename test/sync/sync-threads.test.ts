// The embedded service's two sync threads on one SQLite file (background.ts), run as
// `ferry serve` runs them: the second starts only once there is sync work (queued here, or
// left by an earlier process), a sync of several companies runs each data set once across
// both, the scrape adds both threads' counts, and the leases a killed process left are
// freed before either thread claims, so its pulls do not wait for them to run out.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { integrationByKey } from '../../src/platforms/registry.js';
import type { Stack } from '../../src/stack.js';
import { scrape, total } from '../helpers/observability.js';
import { tempDir } from '../helpers/service.js';
import { startTestStack, testStore } from '../helpers/stack.js';
import { apiClient, createClient, linkedCompany, waitFor, type Api } from '../helpers/sync.js';

const PLATFORM = 'gbol';
const INVOICES = 5;
const DATA_TYPES = integrationByKey(PLATFORM)!.dataTypes;
const TYPES = DATA_TYPES.length;
const OPEN = ['Queued', 'Fetching', 'Mapping'];

interface Pull { dataType: string; status: string }

async function history(api: Api, companyId: string): Promise<Pull[]> {
  const answer = await api.call('GET', `/companies/${companyId}/data/history?pageSize=100`);
  expect(answer.status, answer.text).toBe(200);
  return answer.body.results as Pull[];
}

/** Every pull of the companies, once none is open. */
async function ended(api: Api, companies: string[], deadlineMs: number): Promise<Pull[][]> {
  return waitFor('every pull to end', async () => {
    const all = await Promise.all(companies.map((id) => history(api, id)));
    return all.every((pulls) => pulls.length > 0 && pulls.every((p) => !OPEN.includes(p.status))) && all;
  }, deadlineMs, 200);
}

describe.skipIf(testStore === 'postgres')('two sync threads on the embedded SQLite service', () => {
  const dirs: string[] = [];
  const stacks: Stack[] = [];
  afterEach(async () => {
    for (const stack of stacks.splice(0)) await stack.close();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  /** The stack over `dataDir`, and a client: `key`'s, or one made now. */
  async function start(dataDir: string, options: { metricsPort?: number; startWorker?: boolean } = {}, key?: string): Promise<{ stack: Stack; api: Api; key: string }> {
    const stack = await startTestStack('threads', { dataDir, rateLimit: 0, ...options });
    stacks.push(stack);
    key ??= await createClient(apiClient(stack.baseUrl, stack.adminKey), stack.adminKey, 'Threads Ltd', 'Paid');
    return { stack, api: apiClient(stack.baseUrl, key), key };
  }

  /** ferry_sync_threads as scraped. */
  async function syncThreads(metricsUrl: string): Promise<number> {
    return total((await scrape(metricsUrl)).samples, 'ferry_sync_threads');
  }

  it('sync eight companies: each data set once, every record, and the scrape counts both threads\' pulls', async () => {
    const dataDir = tempDir('ferry-sync-threads-');
    dirs.push(dataDir);
    const { stack, api } = await start(dataDir, { metricsPort: 0 });
    // Nothing to sync yet: one thread (it would queue a schedule's syncs), not two.
    expect(await syncThreads(stack.metricsUrl!)).toBe(1);
    const companies: string[] = [];
    for (let i = 0; i < 8; i++) companies.push((await linkedCompany(api, stack.sandboxUrl, PLATFORM, INVOICES, { name: `Threads ${i}` })).companyId);
    for (const id of companies) expect((await api.call('POST', `/companies/${id}/data/all`)).status).toBe(204);
    expect(await syncThreads(stack.metricsUrl!)).toBe(2);

    const pulls = await ended(api, companies, 60_000);
    for (const [index, own] of pulls.entries()) {
      // One pull a data type: no job ran twice, and none was queued again.
      expect(own.map((p) => p.dataType).sort()).toEqual([...DATA_TYPES].sort());
      expect(own.every((p) => p.status === 'Complete'), JSON.stringify(own)).toBe(true);
      const invoices = await api.call('GET', `/companies/${companies[index]}/data/invoices?pageSize=100`);
      expect(invoices.body.results.map((r: { id: string }) => r.id)).toHaveLength(INVOICES);
    }
    const { samples } = await scrape(stack.metricsUrl!);
    expect(total(samples, 'ferry_pulls_completed_total')).toBe(companies.length * TYPES);
    expect(total(samples, 'ferry_records_ingested_total', { data_type: 'invoices' })).toBe(companies.length * INVOICES);
  }, 90_000);

  it('frees the leases a killed process left before its threads start: its pulls run at once', async () => {
    const dataDir = tempDir('ferry-sync-threads-');
    dirs.push(dataDir);
    const queued = await start(dataDir, { startWorker: false });
    const companies: string[] = [];
    for (let i = 0; i < 2; i++) companies.push((await linkedCompany(queued.api, queued.stack.sandboxUrl, PLATFORM, INVOICES, { name: `Left ${i}` })).companyId);
    for (const id of companies) expect((await queued.api.call('POST', `/companies/${id}/data/all`)).status).toBe(204);
    await stacks.pop()!.close();

    // As a process killed mid-sync leaves them: leased far past this test's deadline, one of them Fetching.
    const db = new Database(join(dataDir, 'ferry.db'));
    try {
      const leased = db.prepare("UPDATE pull_operations SET lease_until = '2099-01-01T00:00:00Z' WHERE status = 'Queued'").run();
      expect(leased.changes).toBe(companies.length * TYPES);
      db.prepare("UPDATE pull_operations SET status = 'Fetching' WHERE id = (SELECT id FROM pull_operations ORDER BY seq LIMIT 1)").run();
    } finally {
      db.close();
    }

    const { stack, api } = await start(dataDir, { metricsPort: 0 }, queued.key);
    const pulls = await ended(api, companies, 30_000);
    expect(pulls.flat().filter((p) => p.status !== 'Complete')).toEqual([]);
    expect(pulls.flat()).toHaveLength(companies.length * TYPES);
    // Nothing was queued in this process: the first thread's claim started the second.
    expect(await syncThreads(stack.metricsUrl!)).toBe(2);
  }, 90_000);
});
