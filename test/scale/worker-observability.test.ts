// `ferry worker --metrics-port 0` (run in this process, as the binary runs it) on
// PostgreSQL beside an API instance: its working line names the metrics URL; that port
// serves /healthz, /readyz and /metrics with the worker's pulls and the database's
// backlog; its log is JSON lines; and it answers ready while it runs, and 503 from SIGTERM
// until it exits while its work in flight reaches a safe point.
import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { describePostgres, freshDatabase } from '../helpers/postgres.js';
import { startInProcess, type InProcessCommand } from '../helpers/in-process.js';
import { tempDir } from '../helpers/service.js';
import { startTestStack, type TestSandbox, type TestService } from '../helpers/stack.js';
import { apiClient, linkedCompany, trustSandbox, waitFor } from '../helpers/sync.js';
import { SANDBOX_ADMIN_KEY } from '../sandbox/support.js';
import { getJson, jsonLines, scrape, total } from '../helpers/observability.js';

describePostgres('ferry worker for its operator', () => {
  const root = tempDir('ferry-worker-watch-');
  const stops: Array<() => Promise<unknown>> = [];

  afterAll(async () => {
    for (const stop of stops.reverse()) await stop();
    rmSync(root, { recursive: true, force: true });
  });

  it('serves its probes and metrics on --metrics-port, and counts the pulls it ran', async () => {
    const database = await freshDatabase();
    const keyFile = join(root, 'secret.key');
    writeFileSync(keyFile, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600 });
    const sandbox: TestSandbox = await startTestStack('sandbox');
    stops.push(() => sandbox.stop());
    trustSandbox(sandbox.url, SANDBOX_ADMIN_KEY);
    const api: TestService = await startTestStack('service', {
      dataDir: join(root, 'api'), database, secretKeyFile: keyFile, startWorker: false, startWebhooks: false, platformUrl: sandbox.url,
    });
    stops.push(() => api.stop());
    const worker: InProcessCommand = await startInProcess([
      'worker', '--database', database, '--secret-key-file', keyFile, '--data-dir', join(root, 'worker'),
      '--sandbox-url', sandbox.url, '--metrics-port', '0', '--log-format', 'json',
    ]);
    stops.push(() => worker.stop());
    const metricsUrl = String(worker.ready.metricsUrl);
    expect(metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    const base = metricsUrl.replace(/\/metrics$/, '');
    expect(await getJson(`${base}/healthz`)).toMatchObject({ status: 200, body: { status: 'ok' } });
    // Ready once its sync thread answers, which a loaded machine may take a few seconds to start.
    const ready = await waitFor('the worker ready', async () => { const r = await getJson(`${base}/readyz`); return r.status === 200 && r; });
    expect(ready).toMatchObject({ status: 200, body: { status: 'ready' } });

    const linked = await linkedCompany(apiClient(api.baseUrl, api.adminKey), sandbox.url, 'gbol', 5);
    expect((await api.call('POST', `/companies/${linked.companyId}/data/queue/invoices`)).status).toBe(200);
    const pulls = await waitFor('every pull of the company to end', async () => {
      const history = await api.call('GET', `/companies/${linked.companyId}/data/history?pageSize=100`);
      const results = history.body.results as Array<{ status: string }>;
      return results.length > 0 && results.every((p) => !['Queued', 'Fetching', 'Mapping'].includes(p.status)) && results;
    }, 30_000, 200);
    const { samples } = await scrape(metricsUrl);
    expect(total(samples, 'ferry_pulls_completed_total')).toBe(pulls.filter((p) => p.status === 'Complete').length);
    expect(total(samples, 'ferry_pulls_completed_total', { data_type: 'invoices' })).toBe(1);
    expect(total(samples, 'ferry_records_ingested_total', { data_type: 'invoices' })).toBe(5);
    expect(total(samples, 'ferry_pulls_queued') + total(samples, 'ferry_pulls_running')).toBe(0);
    expect(total(samples, 'ferry_database_unreachable')).toBe(0);
    // Both pools of the worker: its delivery loop's and its sync thread's.
    expect(samples.filter((s) => s.name === 'ferry_store_pool_connections').length).toBe(2);
    expect(total(samples, 'ferry_store_operation_duration_seconds_count', { operation: 'claimJobs' })).toBeGreaterThan(0);
    expect(total(samples, 'process_cpu_seconds_total')).toBeGreaterThan(0);

    // A stop while a pull is in flight (each platform page takes 2 s): not ready until it exits.
    expect((await sandbox.call('PATCH', '/admin/settings', { body: { latencyMs: 2000 } })).status).toBe(200);
    const queued = await api.call('POST', `/companies/${linked.companyId}/data/queue/invoices`);
    await waitFor('the pull in flight', async () => (await api.call('GET', `/companies/${linked.companyId}/data/history/${queued.body.id}`)).body.status === 'Fetching', 30_000, 100);
    const stopping = worker.stop();
    const draining = await waitFor('readyz to say so', async () => {
      const ready = await getJson(`${base}/readyz`).catch(() => undefined);
      return ready?.status === 503 && ready;
    }, 10_000, 50);
    expect(draining.body).toEqual({ status: 'not ready', reasons: ['shutting down: finishing the work in flight'] });
    const stopped = await stopping;
    expect(stopped.code).toBe(0);
    const lines = jsonLines(stopped.stderr);
    expect(lines.map((l) => l.event)).toContain('stopping');
    // With --json the end is the last line of stdout, as without a log.
    expect(stopped.stdout.trim().split('\n').at(-1)).toBe('{"event":"stopped"}');
    expect(lines.every((l) => l.name === 'ferry-worker')).toBe(true);
  });
});
