// `ferry demo --managed` in this process: a managed migration rehearsed on the embedded
// service for a managed-only platform, one company held back because its legacy
// application refreshed after step 4, within its one-minute budget, without a terminal
// (each step `ferry managed step N --confirm`); and its refusals. The binary run from a
// directory (the commands it suggests, as written) and on a pseudo-terminal is in
// demo-managed.e2e.test.ts.
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ferry } from '../helpers/in-process.js';
import { BUDGET_MS, COMPANIES, HELD_BACK, expectStages, spoiledCompany } from './demo-managed-support.js';

describe('ferry demo --managed', () => {
  it('without a terminal: every stage as ferry managed step N --confirm, one company held back and why, what to try next, temp dir removed, within a minute', async () => {
    const started = Date.now();
    const result = await ferry(['demo', '--managed']);
    const elapsed = Date.now() - started;
    expect(result.code, result.stderr).toBe(0);
    expect(elapsed).toBeLessThan(BUDGET_MS);
    const { stderr, stdout } = result;
    expectStages(stderr);
    for (let n = 1; n <= 6; n += 1) expect(stderr).toMatch(new RegExp(`^  \\$ ferry managed step ${n} --confirm .*--file \\S+plan\\.json$`, 'm'));
    expect(stderr).toMatch(/^ {2}\$ ferry managed step 2 --confirm --date \d{4}-\d\d-\d\d --contact "Jo Bloggs <jo@acme\.example>" --file /m);
    expect(stderr).toMatch(/^ {2}\$ ferry sandbox apps create --platform qhyg --name "Acme Accounting \(rehearsal\) app" --callback-url http:\/\/127\.0\.0\.1:\d+\/callback\/qhyg$/m);
    const spoiled = spoiledCompany(stderr);

    // The summary: what happened, the failure and why, where the report is, what to try next.
    expect(stderr).toMatch(new RegExp(`Done in [\\d.]+s: ${COMPANIES} QuickBooks Online companies through the six steps; ${COMPANIES - 1} passed the end-to-end check, 1 failed\\.`));
    const held = new RegExp(`^ {2}Held back: (.+) \\(row (\\d+)\\): (.+)$`, 'm').exec(stderr);
    expect(held?.[1]).toBe(spoiled.name);
    expect(held?.[2]).toBe(String(COMPANIES + 1));
    expect(held?.[3]).toMatch(HELD_BACK);
    expect(stderr).toMatch(/Try next:\n {2}ferry demo --managed --data-dir \.\/rehearsal .*\n {2}ferry managed status --file rehearsal\/managed\/plan\.json\n {2}ferry managed report --file rehearsal\/managed\/plan\.json /);
    expect(stdout).toMatch(new RegExp(`^companies\\t${COMPANIES}$`, 'm'));
    expect(stdout).toMatch(new RegExp(`^passed\\t${COMPANIES - 1}$`, 'm'));
    expect(stdout).toMatch(/^failed\t1$/m);
    expect(stdout).toContain(`held back\t${spoiled.name}\n`);
    expect(stdout).toMatch(/^report\t.+\/managed\/plan-report\/report\.html \(removed\)$/m);
    const dataDir = /^data dir\t(.+) \(removed\)$/m.exec(stdout)?.[1];
    expect(dataDir).toBeDefined();
    expect(existsSync(dataDir!)).toBe(false);
  }, BUDGET_MS + 10_000);

  it('refuses a self-service platform and fewer than two companies (exit 2)', async () => {
    const selfService = await ferry(['demo', '--managed', '--platform', 'gbol']);
    expect(selfService.code).toBe(2);
    expect(selfService.stderr).toMatch(/Xero has a self-service route: ferry demo \(without --managed\) shows that one\./);
    expect(selfService.stderr).toMatch(/--platform qhyg/);
    const one = await ferry(['demo', '--managed', '--companies', '1']);
    expect(one.code).toBe(2);
    expect(one.stderr).toMatch(/needs at least 2 companies/);
  }, BUDGET_MS);
});
