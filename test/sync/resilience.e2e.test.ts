// A big sync in the real `ferry serve` child: the API stays responsive while the worker
// syncs, and a kill -9 mid-sync resumes after restart with every record exactly once.
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { atRest } from '../helpers/at-rest.js';
import { tempDir } from '../helpers/service.js';
import { apiClient, createClient, linkedCompany, waitFor, type Api } from '../helpers/sync.js';
import { type ServeProcess, startTestStack, testStore } from '../helpers/stack.js';

const PLATFORM = 'gbol';

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
