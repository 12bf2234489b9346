// `ferry migrate tokens -`: the CSV read from stdin, in this process against a `ferry
// serve` in this process. stdin is spooled to a private file in the temp dir (a migration
// reads its input twice), which must be gone when the run ends.
import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ferry } from '../helpers/in-process.js';
import { type ServeHandle, startTestStack } from '../helpers/stack.js';
import { byRow, makeTenants, readResults, stopCleanly, tokensCsv } from './support.js';

let stack: ServeHandle;

beforeAll(async () => {
  stack = await startTestStack('serve');
});

afterAll(async () => {
  await stopCleanly(stack);
});

/** Runs `work` with the process's temp dir (TMPDIR, which os.tmpdir() reads) at `dir`, as a child given TMPDIR would have it. */
async function inTmp<T>(dir: string, work: () => Promise<T>): Promise<T> {
  const previous = process.env.TMPDIR;
  process.env.TMPDIR = dir;
  try {
    return await work();
  } finally {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
  }
}

describe('migrate tokens from stdin', () => {
  it('reads the CSV from stdin (-), and leaves no copy of it behind', async () => {
    const few = await makeTenants(stack.sandboxUrl, 10, { seed: 60_000 });
    const out = join(stack.dir, 'stdin.results.csv');
    const tmp = join(stack.dir, 'tmp');
    mkdirSync(tmp);
    const run = await inTmp(tmp, () => ferry([...stack.target(), 'migrate', 'tokens', '-', '--platform', 'gbol', '--results', out, '--yes'], { stdin: tokensCsv(few) }));
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe(`${out}\n`);
    const rows = [...byRow(readResults(out)).values()].sort((a, b) => Number(a.row) - Number(b.row));
    expect(rows.map((r) => r.externalId)).toEqual(few.map((t) => t.id));
    expect(rows.every((r) => r.status === 'migrated')).toBe(true);
    // The spooled copy of stdin holds tokens: it is gone when the run ends.
    expect(readdirSync(tmp)).toEqual([]);

    // A rerun reads stdin again; the same content resumes from the journal.
    const rerun = await inTmp(tmp, () => ferry([...stack.target(), 'migrate', 'tokens', '-', '--results', out, '--yes'], { stdin: tokensCsv(few) }));
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(rerun.stderr).toContain('10 done by earlier runs');
    expect(readdirSync(tmp)).toEqual([]);
  }, 60_000);
});
