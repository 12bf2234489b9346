// `ferry demo --data-dir DIR` ends with "Try next" commands: each runs as printed, pasted
// into a shell from the same directory (the client id is this demo's, not a placeholder),
// except `serve`, which would run until stopped. So do the "Next:" lines its stages print
// as their commands do: they name the demo's data dir and client.
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runPrinted } from '../helpers/cli.js';
import { tempDir } from '../helpers/service.js';

describe('ferry demo: what to try next', () => {
  const work = tempDir('ferry-demo-next-');
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('prints commands that run as printed, with the demo client id', async () => {
    const cwd = join(work, 'here');
    mkdirSync(cwd);
    const demo = await runPrinted('ferry demo --data-dir ./kept', { cwd, timeoutMs: 90_000 });
    expect(demo.code, demo.stderr).toBe(0);
    const next = demo.stderr.split('Try next:\n')[1]!.split('\n').map((l) => l.trim()).filter((l) => l.startsWith('ferry '));
    expect(next.length).toBeGreaterThanOrEqual(4);
    // No placeholder (<…>) and no elided id (…): a redirection to tokens.csv is the only >.
    for (const line of next) expect(line.replace(/ > tokens\.csv/, '')).not.toMatch(/[<>…]/);
    expect(next[0]).toMatch(/^ferry --data-dir kept --client [0-9a-f-]{36} companies list$/);
    const stages = demo.stderr.split('\n').filter((l) => l.includes('Next: ')).map((l) => l.slice(l.indexOf('Next: ') + 'Next: '.length));
    expect(stages).toHaveLength(2);
    expect(stages[0]).toMatch(/^ferry --data-dir kept --client [0-9a-f-]{36} migrate tokens \S+tokens\.csv --dry-run$/);
    expect(stages[1]).toMatch(/^ferry --data-dir kept --client [0-9a-f-]{36} sync --from-results \S+tokens\.results\.csv --wait$/);
    for (const line of [...stages, ...next.filter((l) => !/ serve\b/.test(l))]) {
      const run = await runPrinted(line, { cwd, timeoutMs: 60_000 });
      expect(run.code, `${line}\n${run.stderr}`).toBe(0);
    }
  }, 240_000);
});
