// ferry as a real Prometheus sees it: Debian's prometheus and promtool (installed by
// scripts/install-prometheus.mjs), scraping two `ferry serve --no-worker` instances and one
// `ferry worker` on PostgreSQL, all real processes, through a small migration (`ferry
// migrate tokens` split across both instances), its syncs (`ferry sync --from-results
// --wait`) and webhook deliveries. Prometheus's HTTP API must then say what the service
// says: the requests the instances counted, as many pulls completed as the service lists
// Complete, every delivery the receiver got; and it must have loaded the alert rules of
// deploy/prometheus/alerts.yml, which promtool checks and its unit tests exercise. Heavy:
// six processes beside PostgreSQL, and a system package.
//
// Where apt-get cannot install Prometheus the tests are skipped with the reason, except on
// CI, where they fail.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runFerry } from '../helpers/cli.js';
import { onCi } from '../helpers/postgres-probe.js';
import { describePostgres, freshDatabase } from '../helpers/postgres.js';
import { reservePort } from '../helpers/processes.js';
import { startScaleOut, type ScaleOut } from '../helpers/scale-out.js';
import { basic, tempDir } from '../helpers/service.js';
import { waitFor } from '../helpers/sync.js';
import { scrape, total } from '../helpers/observability.js';
import { startReceiver, type Receiver } from '../webhooks/support.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const INSTALL = join(ROOT, 'scripts', 'install-prometheus.mjs');
const RULES = join(ROOT, 'deploy', 'prometheus', 'alerts.yml');
const RULE_TESTS = join(ROOT, 'deploy', 'prometheus', 'alerts.test.yml');
const ROWS = 6;
/** PayPal: three data types a company. */
const PLATFORM = 'gvom';

let binaries: { prometheus: string; promtool: string } | undefined;
let unavailable: string | undefined;

beforeAll(() => {
  const install = spawnSync(process.execPath, [INSTALL], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 600_000 });
  if (install.status === 2 && !onCi) {
    unavailable = 'Prometheus is not installed and apt-get cannot install it here (see scripts/install-prometheus.mjs above): the Prometheus tests are skipped';
    process.stderr.write(`${unavailable}\n`);
    return;
  }
  if (install.status !== 0) {
    const why = install.status === 2 ? ' (on CI this test never skips: the machine must be able to install Prometheus)' : '';
    throw new Error(`scripts/install-prometheus.mjs exited ${install.status}${why}`);
  }
  const [prometheus, promtool] = install.stdout.trim().split('\n');
  binaries = { prometheus: prometheus!, promtool: promtool! };
}, 600_000);

describe('the alert rules', () => {
  it('pass promtool check rules', (ctx) => {
    ctx.skip(Boolean(unavailable), unavailable);
    const check = spawnSync(binaries!.promtool, ['check', 'rules', RULES], { encoding: 'utf8' });
    expect(check.status, check.stdout + check.stderr).toBe(0);
    expect(check.stdout).toContain('SUCCESS: 7 rules found');
  });

  it('each fire on the series that should raise them and stay quiet on the others (promtool test rules)', (ctx) => {
    ctx.skip(Boolean(unavailable), unavailable);
    const run = spawnSync(binaries!.promtool, ['test', 'rules', RULE_TESTS], { encoding: 'utf8' });
    expect(run.status, run.stdout + run.stderr).toBe(0);
    // Every rule of the file has a test that makes it fire.
    const rules = [...readFileSync(RULES, 'utf8').matchAll(/- alert: (\w+)/g)].map((m) => m[1]);
    const tested = readFileSync(RULE_TESTS, 'utf8');
    for (const rule of rules) expect(tested, rule).toMatch(new RegExp(`alertname: ${rule}\\n\\s+exp_alerts:\\n\\s+- exp_labels`));
  });
});

interface Prometheus {
  url: string;
  child: ChildProcess;
  /** The value of an instant query that answers one sample (0 when it answers none). */
  value(query: string): Promise<number>;
  stop(): Promise<void>;
}

async function startPrometheus(prometheus: string, dir: string, targets: { api: string[]; worker: string[] }): Promise<Prometheus> {
  const hostPort = (metricsUrl: string) => new URL(metricsUrl).host;
  const config = join(dir, 'prometheus.yml');
  writeFileSync(config, `global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - ${RULES}
scrape_configs:
  - job_name: ferry-api
    static_configs:
      - targets: [${targets.api.map(hostPort).join(', ')}]
  - job_name: ferry-worker
    static_configs:
      - targets: [${targets.worker.map(hostPort).join(', ')}]
`);
  const port = await reservePort();
  const url = `http://127.0.0.1:${port}`;
  let output = '';
  const child = spawn(prometheus, [`--config.file=${config}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  await waitFor(`Prometheus to be ready: ${output.slice(-500)}`, async () => (await fetch(`${url}/-/ready`).catch(() => undefined))?.status === 200, 30_000, 100);
  return {
    url,
    child,
    async value(query) {
      const answer = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(query)}`);
      const body = (await answer.json()) as { status: string; data: { result: Array<{ value: [number, string] }> } };
      if (body.status !== 'success') throw new Error(`${query}: ${JSON.stringify(body)}`);
      return body.data.result.length === 0 ? 0 : Number(body.data.result[0]!.value[1]);
    },
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

describePostgres('Prometheus scraping two API instances and a worker', () => {
  const root = tempDir('ferry-prometheus-');
  let scale: ScaleOut | undefined;
  let prometheus: Prometheus | undefined;
  let receiver: Receiver | undefined;

  afterAll(async () => {
    await prometheus?.stop();
    await scale?.stopAll('SIGTERM');
    await receiver?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('counts the requests, the pulls the service lists Complete and the deliveries made', async (ctx) => {
    ctx.skip(Boolean(unavailable), unavailable);
    const database = await freshDatabase();
    const metrics = ['--metrics-port', '0', '--webhook-allow-private', '--log-format', 'json'];
    scale = await startScaleOut({ root, database, instances: 2, workers: 1, lease: 30, instanceArgs: metrics, workerArgs: metrics });
    const { baseUrls, adminKey, instances, workers } = scale;
    const metricsUrls = [...instances, ...workers].map((p) => String(p.ready.metricsUrl));
    for (const url of metricsUrls) expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    mkdirSync(join(root, 'prometheus'));
    prometheus = await startPrometheus(binaries!.prometheus, join(root, 'prometheus'), { api: metricsUrls.slice(0, 2), worker: metricsUrls.slice(2) });
    await waitFor('every target up', async () => (await prometheus!.value('sum(up{job=~"ferry-api|ferry-worker"})')) === 3, 30_000, 250);

    // A client, a webhook receiver for its companies, and its tokens.
    const made = await fetch(`${baseUrls[0]}/admin/clients`, {
      method: 'POST', headers: { authorization: basic(adminKey), 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Scraped Ltd', plan: 'Paid' }),
    });
    const clientKey = ((await made.json()) as { apiKey: string }).apiKey;
    receiver = await startReceiver();
    const consumer = await fetch(`${baseUrls[1]}/webhooks`, {
      method: 'POST', headers: { authorization: basic(clientKey), 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiver.url, eventTypes: ['company.created'] }),
    });
    expect(consumer.status).toBe(201);
    const tokens = join(root, 'tokens.csv');
    const tenants = await runFerry(['sandbox', 'tenants', 'create', '--platform', PLATFORM, '--count', String(ROWS), '--out', tokens],
      { env: { FERRY_BASE_URL: baseUrls[0]!, FERRY_API_KEY: adminKey }, timeoutMs: 60_000 });
    expect(tenants.code, tenants.stderr).toBe(0);

    // The migration split across both instances, then its syncs waited for.
    const migrations = await Promise.all(baseUrls.map((baseUrl, i) => runFerry(
      ['migrate', 'tokens', tokens, '--shard', `${i + 1}/2`, '--results', join(root, `results-${i + 1}.csv`), '--yes'],
      { env: { FERRY_BASE_URL: baseUrl, FERRY_API_KEY: clientKey }, timeoutMs: 120_000 },
    )));
    for (const result of migrations) expect(result.code, result.stderr).toBe(0);
    for (const [i, baseUrl] of baseUrls.entries()) {
      const sync = await runFerry(['sync', '--from-results', join(root, `results-${i + 1}.csv`), '--wait'],
        { env: { FERRY_BASE_URL: baseUrl, FERRY_API_KEY: clientKey }, timeoutMs: 120_000 });
      expect(sync.code, sync.stderr).toBe(0);
    }
    const companyIds = [1, 2].flatMap((i) => (parse(readFileSync(join(root, `results-${i}.csv`), 'utf8'), { columns: true }) as Array<{ companyId: string }>).map((r) => r.companyId));
    expect(companyIds).toHaveLength(ROWS);

    // What the service lists.
    let complete = 0;
    for (const companyId of companyIds) {
      const history = await fetch(`${baseUrls[0]}/companies/${companyId}/data/history?pageSize=100`, { headers: { authorization: basic(clientKey) } });
      complete += ((await history.json()) as { results: Array<{ status: string }> }).results.filter((p) => p.status === 'Complete').length;
    }
    expect(complete).toBe(ROWS * 3);
    await waitFor('every delivery', async () => receiver!.received.length === ROWS, 30_000, 100);

    // The requests the two instances counted, now that no more come.
    const counted = async () => {
      let sum = 0;
      for (const url of metricsUrls.slice(0, 2)) sum += total((await scrape(url)).samples, 'ferry_http_requests_total');
      return sum;
    };
    const requests = await counted();
    expect(requests).toBeGreaterThan(ROWS * 3);
    await waitFor('Prometheus to have scraped the last of it', async () => {
      const [scrapedRequests, pulls, deliveries, queued] = await Promise.all([
        prometheus!.value('sum(ferry_http_requests_total{job="ferry-api"})'),
        prometheus!.value('sum(ferry_pulls_completed_total)'),
        prometheus!.value('sum(ferry_webhook_deliveries_total{outcome="delivered"})'),
        // The database's figure as of the last scrape, which may be a moment before the last pull ended.
        prometheus!.value('max(ferry_pulls_queued)'),
      ]);
      return scrapedRequests === requests && pulls === complete && deliveries === ROWS && queued === 0;
    }, 30_000, 500);
    // Each instance answered some of it, and the worker ran every pull.
    expect(await prometheus.value('count(sum by (instance) (ferry_http_requests_total{job="ferry-api"}) > 0)')).toBe(2);
    expect(await prometheus.value('sum(ferry_pulls_completed_total{job="ferry-worker"})')).toBe(complete);
    expect(await prometheus.value('max(ferry_pulls_queued)')).toBe(0);
    expect(await prometheus.value('sum(ferry_database_unreachable)')).toBe(0);
    expect(await counted()).toBe(requests);

    // The alert rules are loaded, evaluate without error, and none fires.
    const rules = (await (await fetch(`${prometheus.url}/api/v1/rules`)).json()) as { data: { groups: Array<{ rules: Array<{ name: string; health: string; state: string }> }> } };
    const loaded = rules.data.groups.flatMap((g) => g.rules);
    expect(loaded.map((r) => r.name).sort()).toEqual([
      'FerryDatabaseUnreachable', 'FerryDeliveriesFailing', 'FerryDeliveryBacklog', 'FerryHigh5xxRatio', 'FerryInstanceDown', 'FerryPullBacklog', 'FerryPullsFailing',
    ]);
    await waitFor('every rule evaluated', async () => {
      const now = (await (await fetch(`${prometheus!.url}/api/v1/rules`)).json()) as typeof rules;
      return now.data.groups.flatMap((g) => g.rules).every((r) => r.health === 'ok');
    }, 10_000, 250);
    expect(loaded.filter((r) => r.state === 'firing')).toEqual([]);

    // A worker stopped: Prometheus finds it down, which FerryInstanceDown watches.
    await workers[0]!.stop('SIGTERM');
    await waitFor('the worker down', async () => (await prometheus!.value('sum(up{job="ferry-worker"})')) === 0 && (await prometheus!.value('count(up{job="ferry-worker"} == 0)')) === 1, 30_000, 250);
  });
});
