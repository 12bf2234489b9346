// `ferry demo --managed` in this process: its refusals. The rehearsal itself (20
// companies through the six steps, without a terminal, from a directory, on a
// pseudo-terminal) is in demo-managed.e2e.test.ts.
import { describe, expect, it } from 'vitest';
import { ferry } from '../helpers/in-process.js';
import { BUDGET_MS } from './demo-managed-support.js';

describe('ferry demo --managed', () => {
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
