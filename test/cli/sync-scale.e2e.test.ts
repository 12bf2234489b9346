// `ferry sync --wait` over 5,000 companies, as a user runs it: the real binary against
// `ferry serve`, the companies made by `ferry sandbox tenants create` and `ferry migrate
// tokens`. No Node warning may reach stderr at this count (runFerry fails on any: the run's
// one Ctrl-C signal once collected a listener per company), a stopped wait is one JSON error
// line holding the counts and the command that resumes, and that command resumes the run.
// PayPal (3 data types) keeps the pulls within the suite's time; the wait is cut short by
// --timeout, so the run is stopped with companies in every state.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runFerry, type RunResult } from '../helpers/cli.js';
import { createClient } from '../helpers/sync.js';
import { startTestStack, type ServeProcess } from '../helpers/stack.js';

const COMPANIES = 5_000;
const PLATFORM = 'gvom';
/** Long enough for every company to be started and several rounds of waiting, far too short for 15,000 pulls. */
const TIMEOUT = '45s';

/** The one JSON error line of a stopped --json run, or the summary of a run that finished. */
function stoppedOrDone(result: RunResult): { stopped: boolean; error?: any } {
  if (result.code === 0) {
    expect(result.stderr).toBe('');
    return { stopped: false };
  }
  expect(result.code, result.stderr).toBe(1);
  const lines = result.stderr.trimEnd().split('\n');
  expect(lines, 'stderr is exactly one JSON error line').toHaveLength(1);
  return { stopped: true, error: JSON.parse(lines[0]!).error };
}

describe(`ferry sync --wait over ${COMPANIES.toLocaleString('en-US')} companies (real binary, ferry serve)`, () => {
  let serve: ServeProcess;
  let env: Record<string, string>;

  beforeAll(async () => {
    execFileSync(process.execPath, ['scripts/build.mjs'], { stdio: 'ignore' });
    serve = await startTestStack('process');
    const key = await createClient(serve.api, serve.adminKey, 'Scale Sync Ltd', 'Paid');
    env = { FERRY_BASE_URL: serve.baseUrl, FERRY_API_KEY: key };
  }, 120_000);
  afterAll(async () => {
    await serve?.stop();
  });

  it('prints no Node warning, stops as one JSON line with counts and the command that resumes, and resumes', async () => {
    // 1,000 tenants is the most one call makes: five batches joined into one file.
    const lines: string[] = [];
    for (let batch = 0; batch < COMPANIES / 1000; batch++) {
      const out = join(serve.dir, `tokens-${batch}.csv`);
      const made = await runFerry(['sandbox', 'tenants', 'create', '--platform', PLATFORM, '--count', '1000', '--invoices', '1', '--seed', String(1 + batch * 1000), '--out', out],
        { env: { FERRY_BASE_URL: serve.baseUrl, FERRY_API_KEY: serve.adminKey }, timeoutMs: 120_000 });
      expect(made.code, made.stderr).toBe(0);
      const [header, ...rows] = readFileSync(out, 'utf8').trimEnd().split('\n');
      if (batch === 0) lines.push(header!);
      lines.push(...rows);
    }
    const tokens = join(serve.dir, 'tokens.csv');
    writeFileSync(tokens, `${lines.join('\n')}\n`, { mode: 0o600 });
    const migrated = await runFerry(['migrate', 'tokens', tokens, '--yes', '--no-sync'], { env, timeoutMs: 300_000 });
    expect(migrated.code, migrated.stderr).toBe(0);
    const results = `${tokens}.results.csv`;

    const first = await runFerry(['--json', 'sync', '--from-results', results, '--wait', '--timeout', TIMEOUT], { env, timeoutMs: 300_000 });
    const firstEnd = stoppedOrDone(first);
    expect(JSON.parse(first.stdout)).toHaveLength(COMPANIES);
    if (!firstEnd.stopped) return; // a machine that syncs 15,000 pulls within the timeout: nothing to resume
    const { error } = firstEnd;
    expect(error.message).toMatch(new RegExp(`^Timed out after ${TIMEOUT} waiting for syncs: [\\d,]+ complete, [\\d,]+ running, [\\d,]+ queued, 0 failed; still running: `));
    // Short whatever the count: the counts, three companies and "and N more", not a line per company.
    expect(error.message.length).toBeLessThan(600);
    const { complete, running, queued, failed } = error.counts;
    expect(complete + running + queued + failed).toBe(COMPANIES);
    expect(error.resume).toBe(`ferry --json sync --from-results ${results} --wait --timeout ${TIMEOUT}`);

    // The printed command resumes: the companies complete stay so, nothing is queued twice.
    const second = await runFerry(error.resume.split(' ').slice(1), { env, timeoutMs: 300_000 });
    const secondEnd = stoppedOrDone(second);
    const summary = JSON.parse(second.stdout) as Array<{ state: string }>;
    expect(summary).toHaveLength(COMPANIES);
    expect(summary.filter((s) => s.state === 'complete').length).toBeGreaterThanOrEqual(complete);
    if (secondEnd.stopped) expect(secondEnd.error.counts.complete).toBeGreaterThanOrEqual(complete);
    const history = await serve.api.call('GET', `/companies/${JSON.parse(first.stdout)[0].companyId}/data/history?pageSize=100`, { apiKey: env.FERRY_API_KEY! });
    expect(history.body.results).toHaveLength(3);
  }, 900_000);
});
