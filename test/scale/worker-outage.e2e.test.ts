// The database going away while a worker syncs (real processes: an API instance, a worker
// and the sandbox): the worker says so once, pauses, and when the database is back the
// pull resumes from its last written page and completes with every record once; it is not
// failed for an outage that was no fault of its own.
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { afterAll, expect, it } from 'vitest';
import { runFerry } from '../helpers/cli.js';
import { describePostgres, freshDatabase } from '../helpers/postgres.js';
import { startScaleOut, type ScaleOut } from '../helpers/scale-out.js';
import { basic, tempDir } from '../helpers/service.js';
import { waitFor } from '../helpers/sync.js';
import { cutDatabase } from './cut-database.js';

const INVOICES = 20_000;

describePostgres('the database going away while a worker syncs', () => {
  const root = tempDir('ferry-outage-');
  let scale: ScaleOut | undefined;

  afterAll(async () => {
    await scale?.stopAll();
    rmSync(root, { recursive: true, force: true });
  });

  it('pauses the worker, then resumes the pull from its last page and completes it with every record once', async () => {
    const database = await freshDatabase();
    const name = new URL(database).pathname.slice(1);
    scale = await startScaleOut({ root, database, instances: 1, workers: 1, lease: 3 });
    const baseUrl = scale.baseUrls[0]!;
    const worker = scale.workers[0]!;
    const { adminKey } = scale;
    const tokens = join(root, 'tokens.csv');
    const env = { FERRY_BASE_URL: baseUrl, FERRY_API_KEY: adminKey };
    expect((await runFerry(['sandbox', 'tenants', 'create', '--platform', 'gbol', '--invoices', String(INVOICES), '--out', tokens], { env })).code).toBe(0);
    const results = join(root, 'results.csv');
    const migrated = await runFerry(['migrate', 'tokens', tokens, '--results', results, '--yes'], { env });
    expect(migrated.code, migrated.stderr).toBe(0);
    const companyId = readFileSync(results, 'utf8').split('\n')[1]!.split(',')[4]!;

    const sql = new Client({ connectionString: database });
    sql.on('error', () => undefined);
    await sql.connect();
    const invoices = async () => (await sql.query<{ status: string; fetched: number }>(
      "SELECT status, fetched FROM pull_operations WHERE company_id = $1 AND data_type = 'invoices'", [companyId])).rows[0];
    await waitFor('the invoices pull to write its first pages', async () => ((await invoices())?.fetched ?? 0) >= 2_000, 60_000, 50);
    await sql.end();

    await cutDatabase(name, false);
    try {
      const gone = await fetch(`${baseUrl}/companies`, { headers: { authorization: basic(adminKey) } });
      expect(gone.status).toBe(503);
      await waitFor('the worker to say the database is gone', async () => worker.stderr().includes('the database cannot be reached'), 30_000, 50);
    } finally {
      await cutDatabase(name, true);
    }

    const after = new Client({ connectionString: database });
    await after.connect();
    try {
      await waitFor('every pull, the invoices one first among them, to complete', async () => {
        const { rows } = await after.query<{ n: string }>("SELECT count(*) AS n FROM pull_operations WHERE status <> 'Complete'");
        return rows[0]?.n === '0';
      }, 120_000, 100).catch(async (err: Error) => {
        const { rows } = await after.query("SELECT status, fetched, lease_until, status_description, error_message FROM pull_operations WHERE company_id = $1 AND data_type = 'invoices'", [companyId]);
        const activity = await after.query("SELECT application_name, state, left(query, 80) AS q FROM pg_stat_activity WHERE datname = current_database()");
        throw new Error(`${err.message}: ${JSON.stringify(rows[0])}; worker exit ${worker.child.exitCode} ${worker.child.signalCode}; worker said: ${worker.stderr()}; ${JSON.stringify(activity.rows)}`);
      });
      const { rows } = await after.query<{ n: string; ids: string }>(
        "SELECT count(*) AS n, count(DISTINCT id) AS ids FROM records r JOIN datasets d USING (company_id, data_type) WHERE r.company_id = $1 AND r.data_type = 'invoices' AND r.generation = d.visible_generation",
        [companyId],
      );
      expect(rows[0]).toEqual({ n: String(INVOICES), ids: String(INVOICES) });
    } finally {
      await after.end();
    }
    expect(worker.stderr()).toContain('the database is reachable again');
    expect(worker.stderr()).not.toMatch(/internal error/);
    const stopped = await worker.stop();
    expect(stopped.code, worker.stderr()).toBe(0);
  }, 300_000);
});
