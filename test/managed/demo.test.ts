// `ferry demo` in this process: the whole main job on the embedded service, within its
// two-minute budget, in a temp data dir it removes at the end.
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ferry } from '../helpers/in-process.js';

const BUDGET_MS = 120_000;

describe('ferry demo', () => {
  it('runs every stage, ends with what to try next, and cleans up, within its budget', async () => {
    const started = Date.now();
    const result = await ferry(['demo']);
    const elapsed = Date.now() - started;
    expect(result.code, result.stderr).toBe(0);
    expect(elapsed).toBeLessThan(BUDGET_MS);
    for (const stage of ['[1/5] Sandbox: 20 Xero organisations', '[2/5] ferry migrate tokens', '[3/5] ferry sync --from-results', '[4/5] ferry export invoices --all-companies', '[5/5] Summary']) {
      expect(result.stderr).toContain(stage);
    }
    expect(result.stderr).toMatch(/20 companies synced: every data type Complete/);
    expect(result.stderr).toMatch(/Try next:\n {2}ferry demo --data-dir \.\/ferry-demo/);
    expect(result.stdout).toMatch(/^companies\t20$/m);
    expect(result.stdout).toMatch(/^invoices\t4000$/m);
    const dataDir = /^data dir\t(.+) \(removed\)$/m.exec(result.stdout)?.[1];
    expect(dataDir).toBeDefined();
    expect(existsSync(dataDir!)).toBe(false);
  }, BUDGET_MS + 10_000);
});
