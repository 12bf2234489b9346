// Shared by the `ferry demo --managed` tests: its budget and size, and what its stages
// and summary say.
import { expect } from 'vitest';

export const BUDGET_MS = 60_000;
export const COMPANIES = 20;
/** The held-back company's reason: its time in ISO on the command line, as `2026-12-01 10:00:00 UTC` in the report. */
export const HELD_BACK = /reauthorization required: the legacy application refreshed the token at (\d{4}-\d\d-\d\dT[\d:]+Z|\d{4}-\d\d-\d\d [\d:]+ UTC), after syncing was confirmed disabled/;
// eslint-disable-next-line no-control-regex
export const ANSI = /\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Z0-9]/g;

/** Every stage heading of the demo, in order. */
export function stageHeadings(stderr: string): string[] {
  return stderr.split('\n').filter((l) => /^\[\d+\/10\] /.test(l));
}

export function expectStages(stderr: string): void {
  const headings = stageHeadings(stderr);
  expect(headings).toHaveLength(10);
  expect(headings.slice(0, 4)).toEqual([
    '[1/10] A client: Acme Accounting (rehearsal)',
    "[2/10] The client's OAuth app at QuickBooks Online, with the service's callback URL",
    `[3/10] Sandbox: ${COMPANIES} QuickBooks Online companies and a CSV of their tokens`,
    '[4/10] ferry managed init: the plan',
  ]);
  expect(headings.slice(4)).toEqual([
    '[5/10] Step 1 of 6: Platform details supplied',
    '[6/10] Step 2 of 6: Migration scheduled',
    "[7/10] Step 3 of 6: Callback URL added to the client's app",
    "[8/10] Step 4 of 6: Syncing disabled in the client's existing application",
    '[9/10] Step 5 of 6: Pilot company migrated and checked end to end',
    '[10/10] Step 6 of 6: Remaining companies migrated, checked and handed over',
  ]);
  // Each stage ends with its result line: steps 1-5 done, step 6 failed by one company.
  for (let n = 1; n <= 5; n += 1) expect(stderr).toMatch(new RegExp(`\\[${4 + n}/10\\] Step ${n} of 6[^\\n]*\\n(?:.*\\n)*?  done: `));
  expect(stderr).toMatch(/registered on app [0-9A-F]{32} \(checked with the platform\)/);
  expect(stderr).toMatch(/pilot .* passed the end-to-end check/);
  expect(stderr).toMatch(new RegExp(`  failed: 1 of ${COMPANIES} companies failed \\(${COMPANIES - 1} passed\\); see the handover report`));
}

/** The company the legacy application spoiled after step 4, as the demo says it. */
export function spoiledCompany(stderr: string): { name: string; tenant: string } {
  const meanwhile = /^Meanwhile, the client's old application still syncs (.+): it refreshes that company's token after step 4 \(ferry sandbox tenants legacy-refresh ([0-9a-f-]{36})\): rotated\.$/m.exec(stderr);
  expect(meanwhile, stderr).not.toBeNull();
  // After step 4's result and before step 5's heading.
  expect(stderr.indexOf(meanwhile![0])).toBeGreaterThan(stderr.indexOf('[8/10] Step 4 of 6'));
  expect(stderr.indexOf(meanwhile![0])).toBeLessThan(stderr.indexOf('[9/10] Step 5 of 6'));
  return { name: meanwhile![1]!, tenant: meanwhile![2]! };
}
