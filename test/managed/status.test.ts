// `ferry managed status` on a terminal and with --watch: the checklist's lines and how
// they fit the width, the frame diffing (replayed on a small terminal model), the watch
// loop with an injected clock and IO, the real CLI under a pseudo-terminal (script from
// util-linux) and on a pipe, and a real step 6 saving its counts while a watch follows it.
import { spawn, spawnSync } from 'node:child_process';
import { hostname } from 'node:os';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT, InterruptedError, type CliError } from '../../src/cli/errors.js';
import { createIO, type IO } from '../../src/cli/io.js';
import { fitLine, statusLines, visibleWidth } from '../../src/cli/managed/print-status.js';
import { FrameWriter, HIDE_CURSOR, SHOW_CURSOR, watchStatus } from '../../src/cli/managed/watch-status.js';
import { templatePlan, writePlan, type Plan, type StepProgress } from '../../src/ops/managed/plan.js';
import { liveness } from '../../src/ops/managed/view.js';
import type { Stack } from '../../src/stack.js';
import { cleanEnv, FERRY_BIN, runFerry } from '../helpers/cli.js';
import { ferry } from '../helpers/in-process.js';
import { tempDir } from '../helpers/service.js';
import { waitFor } from '../helpers/sync.js';
import { startTestStack } from '../helpers/stack.js';
import { keyFile, managedFixture } from './helpers.js';

// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-9;?]*[A-Za-z]/g;
const plain = (text: string) => text.replace(ANSI, '');
/** What would clear the whole screen or jump home: a redraw must never need them. */
// eslint-disable-next-line no-control-regex
const FULL_CLEAR = /\x1b\[[0-3]?J|\x1b\[H|\x1b\[\d*;\d*H|\x1bc/;

/**
 * A terminal's screen after `output`: text overwrites, \r goes to column 0, \n to the next
 * line's start (a terminal's line discipline adds the \r),
 * ESC[nA up n lines, ESC[K clears to the end of the line; colours are dropped.
 */
function screenOf(output: string): string[] {
  const screen: string[] = [''];
  let row = 0;
  let col = 0;
  // eslint-disable-next-line no-control-regex
  const tokens = output.match(/\x1b\[[0-9;?]*[A-Za-z]|[\s\S]/gu) ?? [];
  for (const token of tokens) {
    if (token === '\r') col = 0;
    else if (token === '\n') {
      row += 1;
      col = 0;
      screen[row] ??= '';
    } else if (token.startsWith('\x1b[')) {
      const final = token[token.length - 1];
      if (final === 'A') row = Math.max(0, row - Number(token.slice(2, -1) || 1));
      else if (final === 'K') screen[row] = [...screen[row]!].slice(0, col).join('');
      else if (final !== 'm' && final !== 'l' && final !== 'h') throw new Error(`unexpected escape ${JSON.stringify(token)}`);
    } else {
      const chars = [...screen[row]!];
      while (chars.length < col) chars.push(' ');
      chars[col] = token;
      screen[row] = chars.join('');
      col += 1;
    }
  }
  while (screen.length > 0 && screen[screen.length - 1] === '') screen.pop();
  return screen.map((line) => line.trimEnd());
}

/** A plan at step 6: steps 1-5 done by Sam, step 6 as given. */
function planAt(step6: Partial<Plan['steps'][number]> = {}, outcomes = 0): Plan {
  const plan = templatePlan();
  plan.client = { id: 'c-1', name: 'Acme Accounting' };
  plan.platform = { key: 'qhyg', name: 'QuickBooks Online', migrationRoute: 'managed', appClientId: 'app-1' };
  plan.companies = { file: 'acme.csv', fingerprint: 'f', count: 20, pilot: { row: 2, key: 'ext:t-1', externalId: 't-1', companyName: 'Pilot Co' } };
  plan.schedule.date = '2026-12-01';
  for (const s of plan.steps.slice(0, 5)) Object.assign(s, { state: 'done', at: `2026-11-25T10:0${s.step}:00.000Z`, by: 'Sam Support', notes: `step ${s.step} notes` });
  Object.assign(plan.steps[5]!, step6);
  for (let row = 2; row < 2 + outcomes; row += 1) {
    plan.outcomes.push({ row, key: `ext:t-${row}`, companyName: `Company ${row}`, pilot: row === 2, migration: 'migrated', verdict: row === 7 ? 'fail' : 'pass', reasons: [], durations: {} });
  }
  return plan;
}

function progress(counts: Partial<StepProgress> = {}): StepProgress {
  return {
    phase: 'checking', total: 19, earlier: 0, heldBack: 0, toMigrate: 19, migrated: 19, migrationFailed: 0, checked: 0, passed: 0, failed: 0,
    by: 'Sam Support', startedAt: '2026-11-25T11:00:00.000Z', updatedAt: '2026-11-25T11:00:01.000Z', pid: process.pid, host: hostname(), ...counts,
  };
}

/** An IO whose stdout is a terminal of the given size (or a pipe), capturing what is written. */
function fakeIO(options: { tty: boolean; columns?: number; rows?: number; json?: boolean; color?: boolean }): { io: IO; out: () => string } {
  const stdout = new PassThrough() as PassThrough & { isTTY?: boolean; columns?: number; rows?: number };
  stdout.isTTY = options.tty;
  if (options.columns) stdout.columns = options.columns;
  if (options.rows) stdout.rows = options.rows;
  const chunks: Buffer[] = [];
  stdout.on('data', (c: Buffer) => chunks.push(c));
  const stderr = new PassThrough();
  stderr.resume();
  const env = options.color === false ? { TERM: 'xterm', NO_COLOR: '1' } : { TERM: 'xterm-256color' };
  const io = createIO({ stdin: new PassThrough(), stdout, stderr, env }, { json: options.json ?? false });
  return { io, out: () => Buffer.concat(chunks).toString('utf8') };
}

/** Plays plans one per poll: each sleep of the watch moves to the next plan (the injected clock). */
function playback(plans: Plan[], onSleep?: (index: number) => void) {
  let index = 0;
  return {
    read: () => structuredClone(plans[Math.min(index, plans.length - 1)]!),
    sleep: async (_ms: number, signal: AbortSignal) => {
      if (signal.aborted) throw new Error('aborted');
      index += 1;
      onSleep?.(index);
    },
    polls: () => index,
  };
}

describe('managed status: the checklist', () => {
  it('shows each step with its time and who confirmed it, beside the titles when they fit and under them when not', () => {
    const plan = planAt({ state: 'failed', at: '2026-11-25T12:00:00.000Z', by: 'Ann', notes: '1 of 19 companies failed (18 passed); see report.html', hint: 'fix it' }, 20);
    const wide = statusLines(plan, '/p/plan.json', '--file /p/plan.json', { color: true, columns: 140 }).map(plain);
    expect(wide).toContain(`  ✓ 1  ${'Platform details supplied'.padEnd(53)}  2026-11-25 10:01 UTC by Sam Support`);
    expect(wide.find((l) => l.startsWith('  ✗ 6'))).toBe(`  ✗ 6  ${'Remaining companies migrated, checked and handed over'.padEnd(53)}  2026-11-25 12:00 UTC by Ann`);
    expect(wide).toContain('       1 of 19 companies failed (18 passed); see report.html');
    expect(wide.some((l) => l.startsWith('Next: step 6,') && l.includes('It failed: 1 of 19 companies failed'))).toBe(true);

    const narrow = statusLines(plan, '/p/plan.json', '', { color: false, columns: 60 });
    const one = narrow.indexOf('  done    1  Platform details supplied');
    expect(one).toBeGreaterThan(0);
    expect(narrow[one + 1]).toBe('             2026-11-25 10:01 UTC by Sam Support');
    expect(narrow[one + 2]).toBe('             step 1 notes');
    expect(narrow).toContain('  failed  6  Remaining companies migrated, checked and handed over');
    // Every line but the header and the unbreakable ones (a long title, the command to copy) fits 60 columns.
    const over = narrow.filter((l) => visibleWidth(l) > 60);
    expect(over.every((l) => /^Managed migration|^plan |Remaining companies|Syncing disabled|ferry managed step/.test(l)), over.join('\n')).toBe(true);
  });

  it('a running step shows its phase and counts; a run whose process is gone says so; watching cuts every line to the width', () => {
    const running = planAt({ progress: progress({ phase: 'migrating', migrated: 7, migrationFailed: 1, checked: 1, failed: 1 }) });
    const lines = statusLines(running, '/p/plan.json', '', { color: true, columns: 200, liveness: () => 'running' }).map(plain);
    expect(lines).toContain(`  ▸ 6  ${'Remaining companies migrated, checked and handed over'.padEnd(53)}  started 2026-11-25 11:00 UTC by Sam Support`);
    expect(lines).toContain('       migrating 8 of 19 (1 failed) · 1 of 19 checked · 0 passed · 1 failed');
    expect(lines).toContain('Running: step 6, remaining companies migrated, checked and handed over.');
    expect(lines).toContain('  Follow it with: ferry managed status --watch');

    const stopped = statusLines(running, '/p/plan.json', '', { color: false, columns: 200, liveness: () => 'stopped' });
    expect(stopped).toContain('  pending 6  Remaining companies migrated, checked and handed over');
    expect(stopped.some((l) => l.includes(`stopped at 1 of 19 checked · 0 passed · 1 failed: its process (${process.pid}) is gone. Run step 6 again to resume.`))).toBe(true);
    expect(stopped.some((l) => l.startsWith('Next: step 6,'))).toBe(true);

    const watching = statusLines(running, '/a/very/long/path/to/the/plan/of/acme/accounting/plan.json', '', { color: true, columns: 50, watching: {}, liveness: () => 'running' });
    for (const line of watching) expect(visibleWidth(line), plain(line)).toBeLessThanOrEqual(50);
    expect(plain(watching[1]!)).toMatch(/^plan \/a\/very\/long.*…$/);
    expect(fitLine('\x1b[31mabcdef\x1b[39m', 4)).toBe('\x1b[31mabc…\x1b[0m');
  });

  it('a step is live only while its process runs on this host', () => {
    expect(liveness(progress())).toBe('running');
    expect(liveness(progress({ pid: 2 ** 22 + 1 }))).toBe('stopped');
    expect(liveness(progress({ host: 'elsewhere' }))).toBe('unknown');
  });
});

describe('managed status --watch: frames', () => {
  it('redraws only what changed, from the first changed line, clearing to each line\'s end and never the screen', () => {
    let written = '';
    const writes: string[] = [];
    const writer = new FrameWriter((text) => {
      writes.push(text);
      written += text;
    });
    expect(writer.draw(['title', 'a 1', 'b 1', 'footer'])).toBe(true);
    expect(writer.draw(['title', 'a 1', 'b 1', 'footer'])).toBe(false);
    expect(writes).toHaveLength(1);
    expect(writer.draw(['title', 'a 1', 'b 22', 'footer'])).toBe(true);
    expect(writes[1]).toBe('\x1b[2A\rb 22\x1b[K\nfooter\x1b[K\n');
    expect(screenOf(written)).toEqual(['title', 'a 1', 'b 22', 'footer']);
    // Shorter lines and a shorter frame leave nothing of the old one behind.
    writer.draw(['title', 'a', 'x']);
    expect(screenOf(written)).toEqual(['title', 'a', 'x']);
    writer.draw(['title', 'a', 'x', 'y', 'z']);
    expect(screenOf(written)).toEqual(['title', 'a', 'x', 'y', 'z']);
    expect(written).not.toMatch(FULL_CLEAR);
  });

  it('follows the plan on a terminal until step 6 is done: counts redrawn in place, the cursor hidden and then shown', async () => {
    const { io, out } = fakeIO({ tty: true, columns: 100, rows: 40 });
    const plans = [
      planAt({ progress: progress({ checked: 3, passed: 2, failed: 1 }) }, 4),
      planAt({ progress: progress({ checked: 3, passed: 2, failed: 1 }) }, 4),
      planAt({ progress: progress({ checked: 10, passed: 9, failed: 1 }) }, 11),
      planAt({ state: 'done', at: '2026-11-25T12:00:00.000Z', by: 'Sam Support', notes: '19 of 20 passed' }, 20),
    ];
    const frames: string[] = [];
    const play = playback(plans, () => frames.push(out()));
    await watchStatus(io, '/p/plan.json', '', new AbortController().signal, { read: play.read, sleep: play.sleep, liveness: () => 'running' });
    const written = out();
    expect(play.polls()).toBe(3);
    expect(written.startsWith(HIDE_CURSOR)).toBe(true);
    expect(written.endsWith(SHOW_CURSOR)).toBe(true);
    expect(written).not.toMatch(FULL_CLEAR);
    // The unchanged second poll wrote nothing.
    expect(frames[1]).toBe(frames[0]);
    expect(screenOf(frames[0]!)).toContain('       checking end to end · 3 of 19 checked · 2 passed · 1 failed');
    expect(screenOf(frames[2]!)).toContain('       checking end to end · 10 of 19 checked · 9 passed · 1 failed');
    const screen = screenOf(written);
    expect(screen).toContain(`  ✓ 6  ${'Remaining companies migrated, checked and handed over'.padEnd(53)}  2026-11-25 12:00 UTC by Sam Support`);
    expect(screen).toContain('All six steps are done. 19 of 20 companies passed the end-to-end check.');
    expect(screen.join('\n')).not.toMatch(/Watching|checking end to end/);
    for (const line of screen) expect(visibleWidth(line)).toBeLessThan(100);
  });

  it('a frame taller than the terminal leaves out the notes', async () => {
    const { io, out } = fakeIO({ tty: true, columns: 100, rows: 16 });
    const plan = planAt({ state: 'done', at: '2026-11-25T12:00:00.000Z', by: 'Sam', notes: 'all passed' }, 20);
    await watchStatus(io, '/p/plan.json', '', new AbortController().signal, { read: () => plan });
    const screen = screenOf(out());
    expect(screen.length).toBeLessThan(16);
    expect(screen.join('\n')).not.toMatch(/step \d notes/);
    expect(screen).toContain(`  ✓ 6  ${'Remaining companies migrated, checked and handed over'.padEnd(53)}  2026-11-25 12:00 UTC by Sam`);
  });

  it('ends when a step fails while watched (exit 3 when step 6 failed with some passed) or a watched run is killed, and Ctrl-C ends it with 130 and the cursor back', async () => {
    const { io, out } = fakeIO({ tty: true, columns: 100, rows: 40 });
    const plans = [
      planAt({ state: 'failed', at: '2026-11-25T09:00:00.000Z', notes: 'an earlier run' }, 4),
      planAt({ state: 'failed', at: '2026-11-25T09:00:00.000Z', notes: 'an earlier run', progress: progress({ checked: 4 }) }, 4),
      planAt({ state: 'failed', at: '2026-11-25T12:00:00.000Z', notes: '1 of 19 companies failed (18 passed)', hint: 'Fix the causes' }, 20),
    ];
    const play = playback(plans);
    const failed = await watchStatus(io, '/p/plan.json', '', new AbortController().signal, { read: play.read, sleep: play.sleep, liveness: () => 'running' }).catch((err: CliError) => err);
    expect(failed).toMatchObject({ message: 'Step 6 failed: 1 of 19 companies failed (18 passed)', exitCode: EXIT.partial, hint: 'Fix the causes' });
    expect(play.polls()).toBe(2);
    expect(out().endsWith(SHOW_CURSOR)).toBe(true);

    // A run seen live whose process is gone (killed) ends the watch too.
    const killed = fakeIO({ tty: true, columns: 100, rows: 40 });
    const states: Array<'running' | 'stopped'> = ['running', 'running', 'stopped'];
    let poll = 0;
    const gone = await watchStatus(killed.io, '/p/plan.json', '--file /p/plan.json', new AbortController().signal, {
      read: () => planAt({ progress: progress({ checked: 2, passed: 2 }) }),
      sleep: async () => void (poll += 1),
      liveness: () => states[Math.min(poll, states.length - 1)]!,
    }).catch((err: CliError) => err);
    expect(gone).toMatchObject({ message: `Step 6 stopped: its process (${process.pid}) is gone without finishing.`, exitCode: EXIT.error, hint: 'Run it again to resume: ferry managed step 6 --confirm --file /p/plan.json' });
    expect(screenOf(killed.out()).some((l) => l.includes('stopped at 2 of 19 checked'))).toBe(true);

    const second = fakeIO({ tty: true, columns: 100, rows: 40 });
    const stop = new AbortController();
    const interrupted = await watchStatus(second.io, '/p/plan.json', '', stop.signal, {
      read: () => planAt({ progress: progress({ checked: 1, passed: 1 }) }),
      sleep: async (_ms, signal) => {
        stop.abort('SIGINT');
        if (signal.aborted) throw new Error('aborted');
      },
    }).catch((err: unknown) => err);
    expect(interrupted).toBeInstanceOf(InterruptedError);
    expect((interrupted as CliError).exitCode).toBe(130);
    expect(second.out().endsWith(SHOW_CURSOR)).toBe(true);
  });

  it('on a pipe: the status lines once, then one line per change, no escape codes; --json: a document per change', async () => {
    const plans = [
      planAt({ progress: progress({ checked: 3, passed: 3 }) }),
      planAt({ progress: progress({ checked: 3, passed: 3, updatedAt: '2026-11-25T11:00:05.000Z' }) }),
      planAt({ progress: progress({ checked: 5, passed: 4, failed: 1 }) }),
      planAt({ state: 'done', at: '2026-11-25T12:00:00.000Z', by: 'Sam', notes: 'done' }, 20),
    ];
    const piped = fakeIO({ tty: false });
    await watchStatus(piped.io, '/p/plan.json', '', new AbortController().signal, playback(plans));
    const lines = piped.out().trim().split('\n');
    expect(piped.out()).not.toContain('\x1b');
    expect(lines.slice(0, 8).map((l) => l.split('\t')[0])).toEqual(['step', 'step', 'step', 'step', 'step', 'step', 'progress', 'next']);
    expect(lines[6]).toBe('progress\t6\tchecking\t19\t19\t0\t3\t3\t0\t2026-11-25T11:00:01.000Z');
    // A save that changed no count printed nothing.
    expect(lines.slice(8)).toEqual([
      'progress\t6\tchecking\t19\t19\t0\t5\t4\t1\t2026-11-25T11:00:01.000Z',
      'step\t6\tmigrate-and-hand-over\tdone\t2026-11-25T12:00:00.000Z\tSam\tRemaining companies migrated, checked and handed over\tdone',
      'next\t\tferry managed report',
    ]);

    const json = fakeIO({ tty: false, json: true });
    await watchStatus(json.io, '/p/plan.json', '', new AbortController().signal, playback(plans));
    const docs = json.out().trim().split('\n').map((l) => JSON.parse(l));
    expect(docs).toHaveLength(4);
    expect(docs[2].steps[5].progress).toMatchObject({ checked: 5, passed: 4, failed: 1 });
    expect(docs[3].next).toBeNull();
  });
});

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
