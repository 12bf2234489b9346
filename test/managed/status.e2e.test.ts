// `ferry managed status --watch` as the binary: on a pseudo-terminal (script from
// util-linux), where Ctrl-C is the terminal's, and on a pipe; and a real step 6 saving its
// counts while a watch on a pseudo-terminal follows it. The rest of managed status runs in
// this process in status.test.ts.
import { spawn, spawnSync } from 'node:child_process';
import { hostname } from 'node:os';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HIDE_CURSOR, SHOW_CURSOR } from '../../src/cli/managed/watch-status.js';
import { writePlan, type Plan, type StepProgress } from '../../src/ops/managed/plan.js';
import type { Stack } from '../../src/stack.js';
import { cleanEnv, FERRY_BIN, runFerry } from '../helpers/cli.js';
import { ferry } from '../helpers/in-process.js';
import { tempDir } from '../helpers/service.js';
import { waitFor } from '../helpers/sync.js';
import { startTestStack } from '../helpers/stack.js';
import { keyFile, managedFixture } from './helpers.js';
import { FULL_CLEAR, planAt, plain, progress, screenOf } from './status-support.js';

/** The real CLI on a pseudo-terminal (script from util-linux) of 100x40; `input` is typed into it. */
function onTerminal(args: string[], env: Record<string, string> = {}) {
  const quoted = [process.execPath, FERRY_BIN, ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(' ');
  const child = spawn('script', ['-qfec', `stty cols 100 rows 40; exec ${quoted}`, '/dev/null'], { env: cleanEnv({ TERM: 'xterm-256color', ...env }), stdio: 'pipe' });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const done = new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve(code));
  });
  return { child, done, output: () => output, type: (keys: string) => child.stdin.write(keys) };
}

const hasScript = spawnSync('script', ['--version']).status === 0;

describe.skipIf(!hasScript)('managed status --watch: the real CLI', () => {
  const work = tempDir('ferry-managed-status-');
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('on a terminal: redraws the counts as the plan changes, ends when step 6 is done, never clears the screen', async () => {
    const plan = join(work, 'tty', 'plan.json');
    mkdirSync(join(work, 'tty'));
    // The recording process is this test's: alive on this host, so the step shows as running.
    writePlan(plan, planAt({ progress: progress({ checked: 3, passed: 3 }) }, 4));
    const watch = onTerminal(['managed', 'status', '--watch', '--file', plan]);
    await waitFor('the first frame', async () => plain(watch.output()).includes('3 of 19 checked · 3 passed · 0 failed'), 30_000);
    writePlan(plan, planAt({ progress: progress({ checked: 12, passed: 11, failed: 1 }) }, 13));
    await waitFor('the counts redrawn', async () => plain(watch.output()).includes('12 of 19 checked · 11 passed · 1 failed'), 30_000);
    writePlan(plan, planAt({ state: 'done', at: '2026-11-25T12:00:00.000Z', by: 'Sam Support', notes: '19 of 20 companies passed; report in acme-report' }, 20));
    expect(await watch.done).toBe(0);
    const output = watch.output();
    expect(output).not.toMatch(FULL_CLEAR);
    expect(output.indexOf(HIDE_CURSOR)).toBeGreaterThanOrEqual(0);
    expect(output.lastIndexOf(SHOW_CURSOR)).toBeGreaterThan(output.lastIndexOf(HIDE_CURSOR));
    const screen = screenOf(output);
    expect(screen).toContain(`  ✓ 5  ${'Pilot company migrated and checked end to end'.padEnd(53)}  2026-11-25 10:05 UTC by Sam Support`);
    expect(screen).toContain(`  ✓ 6  ${'Remaining companies migrated, checked and handed over'.padEnd(53)}  2026-11-25 12:00 UTC by Sam Support`);
    expect(screen).toContain('       19 of 20 companies passed; report in acme-report');
    expect(screen).toContain('All six steps are done. 19 of 20 companies passed the end-to-end check.');
    // One checklist on the screen: every frame was drawn over the one before.
    expect(screen.filter((l) => l.startsWith('Managed migration:'))).toHaveLength(1);
    expect(screen.join('\n')).not.toContain('checked ·');
  });

  it('on a terminal: Ctrl-C stops it with 130 and the cursor shown', async () => {
    const plan = join(work, 'ctrl-c', 'plan.json');
    mkdirSync(join(work, 'ctrl-c'));
    writePlan(plan, planAt({ progress: progress({ checked: 1, passed: 1 }) }, 2));
    const watch = onTerminal(['managed', 'status', '--watch', '--file', plan]);
    await waitFor('the first frame', async () => plain(watch.output()).includes('Ctrl-C to stop'), 30_000);
    watch.type('\x03');
    expect(await watch.done).toBe(130);
    const output = watch.output();
    expect(output.lastIndexOf(SHOW_CURSOR)).toBeGreaterThan(output.lastIndexOf(HIDE_CURSOR));
    expect(plain(output)).toContain('Stopped watching; the steps go on.');
  });

  it('on a pipe: a line per change and no escape codes', async () => {
    const plan = join(work, 'pipe', 'plan.json');
    mkdirSync(join(work, 'pipe'));
    writePlan(plan, planAt({ progress: progress({ checked: 3, passed: 3 }) }, 4));
    const child = spawn(process.execPath, [FERRY_BIN, 'managed', 'status', '--watch', '--file', plan], { env: cleanEnv({ TERM: 'xterm-256color' }), stdio: 'pipe' });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    const code = new Promise<number | null>((resolve) => child.on('close', resolve));
    await waitFor('the status lines', async () => /^next\t6\t/m.test(stdout), 30_000);
    writePlan(plan, planAt({ progress: progress({ checked: 9, passed: 8, failed: 1 }) }, 10));
    await waitFor('the progress line', async () => /^progress\t6\tchecking\t19\t19\t0\t9\t8\t1\t/m.test(stdout), 30_000);
    writePlan(plan, planAt({ state: 'done', at: '2026-11-25T12:00:00.000Z', by: 'Sam', notes: 'handed over' }, 20));
    expect(await code).toBe(0);
    expect(stdout).not.toContain('\x1b');
    const lines = stdout.trim().split('\n');
    expect(lines).toHaveLength(11);
    expect(lines.slice(-2)).toEqual(['step\t6\tmigrate-and-hand-over\tdone\t2026-11-25T12:00:00.000Z\tSam\tRemaining companies migrated, checked and handed over\thanded over', 'next\t\tferry managed report']);
  });
});

describe.skipIf(!hasScript)('managed step 6 saves its counts as it goes, and a watch on a terminal follows it to the end', () => {
  const work = tempDir('ferry-managed-watch-');
  let stack: Stack;
  let target: string[];
  beforeAll(async () => {
    stack = await startTestStack('threads', { dataDir: join(work, 'data'), rateLimit: 0 });
    target = ['--base-url', stack.baseUrl, '--api-key-file', keyFile(work, stack.adminKey)];
  });
  afterAll(async () => {
    await stack?.close();
    rmSync(work, { recursive: true, force: true });
  });

  it('step 6 in a child process, the plan read while it runs, the watch on a pseudo-terminal', async () => {
    const run = (args: string[]) => ferry([...target, ...args]);
    const fixture = await managedFixture(run, { baseUrl: stack.baseUrl, sandboxUrl: stack.sandboxUrl, work, name: 'Watch Ltd', count: 12, invoices: 3 });
    const plan = join(work, 'watch', 'plan.json');
    expect((await run(['managed', 'init', '--platform', 'qhyg', '--client', fixture.clientId, '--name', 'Watch Ltd', '--companies', fixture.companies, '--file', plan])).code).toBe(0);
    const steps: Array<[number, string[]]> = [[1, ['--app-client-id', fixture.appClientId]], [2, ['--date', '2026-12-01', '--contact', 'Jo <jo@watch.example>']], [3, []], [4, []], [5, []]];
    for (const [n, flags] of steps) {
      const result = await run(['managed', 'step', String(n), '--confirm', '--file', plan, '--by', 'Sam', '--poll-ms', '50', ...flags]);
      expect(result.code, `step ${n}: ${result.stderr}`).toBe(0);
    }

    const watch = onTerminal(['managed', 'status', '--watch', '--file', plan]);
    await waitFor('the watch\'s first frame', async () => plain(watch.output()).includes('Ctrl-C to stop'), 30_000);
    // One company at a time, so the checks take a while and every outcome is a save to see.
    const six = runFerry([...target, 'managed', 'step', '6', '--confirm', '--file', plan, '--by', 'Sam', '--poll-ms', '50', '--concurrency', '1'], { timeoutMs: 120_000 });
    let finished = false;
    void six.finally(() => (finished = true));
    const seen: StepProgress[] = [];
    await waitFor('step 6 to end', async () => {
      try {
        const p = (JSON.parse(readFileSync(plan, 'utf8')) as Plan).steps[5]!.progress;
        if (p && (seen.length === 0 || JSON.stringify(seen[seen.length - 1]) !== JSON.stringify(p))) seen.push(p);
      } catch {
        // The plan is renamed into place: a read may race the rename, never see half a file.
      }
      return finished;
    }, 120_000, 10);
    const result = await six;
    expect(result.code, result.stderr).toBe(0);
    expect(await watch.done).toBe(0);

    // The counts were in the plan while the step ran: checking, some companies checked and not yet all.
    const checking = seen.filter((p) => p.phase === 'checking');
    expect(checking.some((p) => p.checked > 0 && p.checked < 11), JSON.stringify(seen.map((p) => [p.phase, p.checked]))).toBe(true);
    expect(seen[0]).toMatchObject({ total: 11, by: 'Sam', host: hostname() });
    for (const p of checking) expect(p).toMatchObject({ migrated: 11, migrationFailed: 0, toMigrate: 11, failed: 0, passed: p.checked });
    const final = JSON.parse(readFileSync(plan, 'utf8')) as Plan;
    expect(final.steps.every((s) => s.progress === undefined)).toBe(true);
    expect(final.steps[5]!.state).toBe('done');

    const screen = screenOf(watch.output());
    expect(watch.output()).not.toMatch(FULL_CLEAR);
    expect(screen.filter((l) => l.startsWith('Managed migration:'))).toHaveLength(1);
    expect(screen.some((l) => /^ {2}✓ 6 {2}Remaining companies migrated, checked and handed over/.test(l))).toBe(true);
    expect(screen).toContain('All six steps are done. 12 of 12 companies passed the end-to-end check.');
  }, 180_000);
});
