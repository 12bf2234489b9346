// `ferry managed status` on a terminal and with --watch: the checklist's lines and how
// they fit the width, the frame diffing (replayed on a small terminal model), and the watch
// loop with an injected clock and IO. The binary under a pseudo-terminal and on a pipe, and
// a real step 6 followed by a watch, are in status.e2e.test.ts.
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { EXIT, InterruptedError, type CliError } from '../../src/cli/errors.js';
import { createIO, type IO } from '../../src/cli/io.js';
import { fitLine, statusLines, visibleWidth } from '../../src/cli/managed/print-status.js';
import { FrameWriter, HIDE_CURSOR, SHOW_CURSOR, watchStatus } from '../../src/cli/managed/watch-status.js';
import type { Plan } from '../../src/ops/managed/plan.js';
import { liveness } from '../../src/ops/managed/view.js';
import { FULL_CLEAR, planAt, plain, progress, screenOf } from './status-support.js';

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

  it('counts as 1,200, one way throughout', () => {
    const plan = planAt({ state: 'done', at: '2026-11-25T12:00:00.000Z', by: 'Ann', notes: 'done' }, 1200);
    plan.companies.count = 1200;
    const lines = statusLines(plan, '/p/plan.json', '', { color: false, columns: 140 });
    expect(lines.some((l) => l.includes('1,200 companies'))).toBe(true);
    expect(lines).toContain('All six steps are done. 1,199 of 1,200 companies passed the end-to-end check.');
    expect(lines.join('\n')).not.toMatch(/\b1200\b|\b1199\b/);
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
