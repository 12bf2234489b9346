// The scale-out proof, with real processes on a real PostgreSQL database: 3 API instances
// (`ferry serve --no-worker`), 2 workers (`ferry worker`) and the sandbox platforms
// (`ferry sandbox serve`). Three `ferry migrate tokens --shard i/3` runs, one per instance,
// migrate 3,000 rows at once; a worker is killed with SIGKILL while it syncs and started
// again. In the end every company is Linked, every data set Complete, nothing is there
// twice, no record is missing, and the three results files hold every row once.
// PayPal (3 data types) keeps the 9,000 pulls within the suite's time.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { Client } from 'pg';
import { afterAll, expect, it } from 'vitest';
import { runFerry } from '../helpers/cli.js';
import { describePostgres, freshDatabase } from '../helpers/postgres.js';
import { startScaleOut, type ScaleOut } from '../helpers/scale-out.js';
import { basic, tempDir } from '../helpers/service.js';
import { waitFor } from '../helpers/sync.js';

const ROWS = 3_000;
const SHARDS = 3;
const PLATFORM = 'gvom';
const DATA_TYPES = 3;
/** Short, so the killed worker's pulls are taken over within the test. */
const LEASE_SECONDS = 5;

describePostgres('3 API instances and 2 workers on one PostgreSQL database', () => {
  const root = tempDir('ferry-proof-');
  let scale: ScaleOut | undefined;

  afterAll(async () => {
    await scale?.stopAll();
    rmSync(root, { recursive: true, force: true });
  });

  it(`migrates ${ROWS} rows through three instances at once, survives a worker killed mid-sync, and ends complete with nothing twice`, async () => {
    const database = await freshDatabase();
    const sql = new Client({ connectionString: database });
    await sql.connect();
    const count = async (query: string): Promise<number> => Number((await sql.query<{ n: string }>(query)).rows[0]!.n);
    try {
      scale = await startScaleOut({ root, database, instances: SHARDS, workers: 2, lease: LEASE_SECONDS });
      const { sandbox, instances, workers, baseUrls, adminKey } = scale;
      expect(instances.map((p) => p.ready.worker)).toEqual([false, false, false]);

      // One client account; its key migrates through every instance.
      const made = await fetch(`${baseUrls[0]}/admin/clients`, {
        method: 'POST', headers: { authorization: basic(adminKey), 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Proof Ltd', plan: 'Paid' }),
      });
      expect(made.status).toBe(201);
      const clientKey = ((await made.json()) as { apiKey: string }).apiKey;

      // 3,000 tenants in three batches (1,000 is the most one call makes), joined into one file.
      const lines: string[] = [];
      for (let batch = 0; batch < ROWS / 1000; batch++) {
        const out = join(root, `tokens-${batch}.csv`);
        const made = await runFerry(['sandbox', 'tenants', 'create', '--platform', PLATFORM, '--count', '1000', '--seed', String(1 + batch * 1000), '--out', out],
          { env: { FERRY_BASE_URL: baseUrls[batch]!, FERRY_API_KEY: adminKey }, timeoutMs: 120_000 });
        expect(made.code, made.stderr).toBe(0);
        const [header, ...rows] = readFileSync(out, 'utf8').trimEnd().split('\n');
        if (batch === 0) lines.push(header!);
        lines.push(...rows);
      }
      const tokens = join(root, 'tokens.csv');
      writeFileSync(tokens, `${lines.join('\n')}\n`, { mode: 0o600 });
      expect(lines).toHaveLength(ROWS + 1);

      const migrations = baseUrls.map((baseUrl, i) => runFerry(
        ['migrate', 'tokens', tokens, '--shard', `${i + 1}/${SHARDS}`, '--results', join(root, `results-${i + 1}.csv`), '--yes'],
        { env: { FERRY_BASE_URL: baseUrl, FERRY_API_KEY: clientKey }, timeoutMs: 300_000 },
      ));

      // Mid-sync: pulls are complete and others are being fetched. Kill one worker outright, then start it again.
      await waitFor('the workers to complete 300 pulls', async () => (await count("SELECT count(*) AS n FROM pull_operations WHERE status = 'Complete'")) >= 300, 240_000, 250);
      expect(await count("SELECT count(*) AS n FROM pull_operations WHERE status IN ('Queued', 'Fetching')")).toBeGreaterThan(0);
      const killed = await workers[0]!.stop('SIGKILL');
      expect(killed.signal).toBe('SIGKILL');
      await scale.startWorker(0);

      const results = await Promise.all(migrations);
      for (const [i, result] of results.entries()) expect(result.code, `shard ${i + 1}: ${result.stderr}`).toBe(0);

      const pulls = ROWS * DATA_TYPES;
      await waitFor(`all ${pulls} pulls to complete`, async () => (await count("SELECT count(*) AS n FROM pull_operations WHERE status = 'Complete'")) >= pulls, 480_000, 1_000);

      // Nothing twice, nothing left over.
      expect(await count('SELECT count(*) AS n FROM companies')).toBe(ROWS);
      expect(await count("SELECT count(DISTINCT tags::json->>'ferryKey') AS n FROM companies")).toBe(ROWS);
      expect(await count('SELECT count(*) AS n FROM connections')).toBe(ROWS);
      expect(await count("SELECT count(*) AS n FROM connections WHERE status = 'Linked'")).toBe(ROWS);
      expect(await count('SELECT count(*) AS n FROM pull_operations')).toBe(pulls);
      expect(await count('SELECT count(*) AS n FROM (SELECT company_id, data_type FROM pull_operations GROUP BY 1, 2 HAVING count(*) > 1) twice')).toBe(0);
      expect(await count('SELECT count(*) AS n FROM datasets WHERE visible_generation IS NOT NULL')).toBe(pulls);
      const records = await count('SELECT count(*) AS n FROM records');
      expect(records).toBeGreaterThan(0);
      expect(await count('SELECT count(*) AS n FROM (SELECT DISTINCT company_id, data_type, generation, id FROM records) once')).toBe(records);
      // No record lost: every published data set holds as many records as its pull fetched from the platform.
      expect(await count(`SELECT count(*) AS n FROM pull_operations p
        JOIN datasets d ON d.company_id = p.company_id AND d.data_type = p.data_type AND d.visible_generation = p.generation
        WHERE p.fetched <> (SELECT count(*) FROM records r WHERE r.company_id = p.company_id AND r.data_type = p.data_type AND r.generation = p.generation)`)).toBe(0);

      // Through the API of each instance: a company's data sets are Complete.
      for (const baseUrl of baseUrls) {
        const list = await fetch(`${baseUrl}/companies?pageSize=1&page=${1 + Math.floor(Math.random() * ROWS)}`, { headers: { authorization: basic(clientKey) } });
        const company = ((await list.json()) as { results: Array<{ id: string; dataConnections: Array<{ status: string }> }> }).results[0]!;
        expect(company.dataConnections.map((c) => c.status)).toEqual(['Linked']);
        const status = await fetch(`${baseUrl}/companies/${company.id}/dataStatus`, { headers: { authorization: basic(clientKey) } });
        const sets = Object.values((await status.json()) as Record<string, { currentStatus: string }>);
        expect(sets.map((s) => s.currentStatus)).toEqual(Array(DATA_TYPES).fill('Complete'));
      }

      // The results files: every row once, migrated, across the three shards.
      const rows = [1, 2, 3].flatMap((i) => parse(readFileSync(join(root, `results-${i}.csv`), 'utf8'), { columns: true }) as Array<{ row: string; status: string; companyId: string }>);
      expect(rows).toHaveLength(ROWS);
      expect(new Set(rows.map((r) => r.row)).size).toBe(ROWS);
      expect(new Set(rows.map((r) => r.companyId)).size).toBe(ROWS);
      expect(rows.filter((r) => r.status !== 'migrated')).toEqual([]);

      // A graceful stop of every process: exit 0.
      for (const p of [...workers, ...instances, sandbox]) {
        const stopped = await p.stop();
        expect(stopped.code, p.stderr()).toBe(0);
      }
    } finally {
      await sql.end();
    }
  }, 900_000);
});
