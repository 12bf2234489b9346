// `ferry managed status --watch`: follows a plan while another process runs its steps
// (steps 5 and 6 save their counts in the plan as they go). It polls the plan file, since
// fs.watch misses renames on some file systems and the plan is replaced by a rename on
// every save. On a terminal the checklist is redrawn in place; on a pipe each change is
// one more tab-separated line, with --json one more document: never an escape code there.
import { setTimeout as sleep } from 'node:timers/promises';
import { EXIT, CliError, InterruptedError } from '../errors.js';
import type { IO } from '../io.js';
import { stepOf, type Plan, type StepProgress } from '../../ops/managed/plan.js';
import { liveness, statusJson, type RunLiveness } from '../../ops/managed/view.js';
import { columnsOf, statusLines, statusTsv, stepTsv } from './print-status.js';

export const WATCH_INTERVAL_MS = 500;

export const HIDE_CURSOR = '\x1b[?25l';
export const SHOW_CURSOR = '\x1b[?25h';
const CLEAR_TO_LINE_END = '\x1b[K';
const up = (n: number) => `\x1b[${n}A`;

/**
 * Draws frames over one another without flicker: nothing when the frame is unchanged;
 * otherwise the cursor goes up to the first changed line and every line from there is
 * written over the old one and cleared to its end (never a screen clear), in one write.
 * Every line must fit the terminal's width, or a wrapped line would throw the count off.
 */
export class FrameWriter {
  private shown: string[] = [];

  constructor(private readonly write: (text: string) => void) {}

  /** Draws `lines`; false when they are what is on screen (nothing is written). */
  draw(lines: string[]): boolean {
    let first = 0;
    while (first < lines.length && first < this.shown.length && lines[first] === this.shown[first]) first += 1;
    if (first === lines.length && first === this.shown.length) return false;
    let out = this.shown.length > first ? up(this.shown.length - first) : '';
    out += '\r';
    for (const line of lines.slice(first)) out += `${line}${CLEAR_TO_LINE_END}\n`;
    // A shorter frame: blank the old frame's last lines, and come back under the new one.
    const left = this.shown.length - lines.length;
    if (left > 0) out += `${`${CLEAR_TO_LINE_END}\n`.repeat(left)}${up(left)}`;
    this.write(out);
    this.shown = [...lines];
    return true;
  }
}

export interface WatchDeps {
  read(): Plan;
  intervalMs?: number;
  /** Resolves after `ms`, rejects when the signal aborts. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  liveness?: (progress: StepProgress) => RunLiveness;
}

type End = { done: true } | { done: false; error: CliError };

/**
 * Why the watch ends, or undefined while it goes on: step 6 done; a step that failed while
 * watched (its run ended); or a run seen live whose process is now gone (killed).
 */
function endOf(plan: Plan, startAt: Map<number, string | null>, seenLive: Set<number>, live: (p: StepProgress) => RunLiveness, flag: string): End | undefined {
  if (stepOf(plan, 6).state === 'done') return { done: true };
  const failed = plan.steps.find((s) => s.state === 'failed' && s.at !== startAt.get(s.step) && !s.progress);
  if (failed) {
    const passed = plan.outcomes.some((o) => o.verdict === 'pass');
    return { done: false, error: new CliError(`Step ${failed.step} failed: ${failed.notes}`, failed.step === 6 && passed ? EXIT.partial : EXIT.error, failed.hint) };
  }
  for (const s of plan.steps) {
    if (!s.progress) continue;
    const state = live(s.progress);
    if (state === 'running') seenLive.add(s.step);
    else if (state === 'stopped' && seenLive.has(s.step)) {
      return { done: false, error: new CliError(`Step ${s.step} stopped: its process (${s.progress.pid}) is gone without finishing.`, EXIT.error, `Run it again to resume: ferry managed step ${s.step} --confirm${flag ? ` ${flag}` : ''}`) };
    }
  }
  return undefined;
}

const defaultSleep = (ms: number, signal: AbortSignal) => sleep(ms, undefined, { signal });

/**
 * Follows the plan until step 6 is done (exit 0), a step fails while watched (exit 1, or 3
 * when step 6 failed with some companies passed) or a watched run's process is gone (exit
 * 1); Ctrl-C stops it (exit 130).
 */
export async function watchStatus(io: IO, planPath: string, flag: string, signal: AbortSignal, deps: WatchDeps): Promise<void> {
  const interval = deps.intervalMs ?? WATCH_INTERVAL_MS;
  const wait = deps.sleep ?? defaultSleep;
  let plan = deps.read();
  const startAt = new Map(plan.steps.map((s) => [s.step, s.at]));
  const seenLive = new Set<number>();
  const live = deps.liveness ?? liveness;
  const show = showFor(io, planPath, flag, deps);
  try {
    for (;;) {
      const ended = endOf(plan, startAt, seenLive, live, flag);
      show.draw(plan, ended !== undefined);
      if (ended) {
        if (!ended.done) throw ended.error;
        return;
      }
      try {
        await wait(interval, signal);
      } catch {
        throw new InterruptedError('Stopped watching; the steps go on.');
      }
      plan = deps.read();
    }
  } finally {
    show.end?.();
  }
}

interface Show {
  /** `last`: the final frame (no "Watching" footer). */
  draw(plan: Plan, last: boolean): void;
  /** Puts the terminal back (the cursor shown); safe to call more than once. */
  end?(): void;
}

function showFor(io: IO, planPath: string, flag: string, deps: WatchDeps): Show {
  if (io.mode === 'json') {
    let last = '';
    return {
      draw(plan) {
        const doc = JSON.stringify(statusJson(plan, planPath, flag));
        if (doc !== last) io.out(doc);
        last = doc;
      },
    };
  }
  if (io.mode !== 'tty' || io.env.TERM === 'dumb') return pipeShow(io, planPath, flag);
  const writer = new FrameWriter((text) => void io.stdout.write(text));
  let hidden = true;
  io.stdout.write(HIDE_CURSOR);
  return {
    draw(plan, last) {
      const columns = columnsOf(io) ?? 80;
      const rows = (io.stdout as { rows?: number }).rows ?? 0;
      const view = { color: io.color, columns: columns - 1, watching: { last }, ...(deps.liveness ? { liveness: deps.liveness } : {}) };
      let lines = statusLines(plan, planPath, flag, view);
      // Taller than the terminal: the cursor cannot go up past its top, so the notes go.
      if (rows > 0 && lines.length >= rows) lines = statusLines(plan, planPath, flag, { ...view, compact: true }).slice(0, rows - 1);
      writer.draw(lines);
    },
    end() {
      if (hidden) io.stdout.write(SHOW_CURSOR);
      hidden = false;
    },
  };
}

/** Piped: the status lines once, then a line for each step, count or next command that changed. */
function pipeShow(io: IO, planPath: string, flag: string): Show {
  let steps: string[] | undefined;
  let progress = '';
  let next = '';
  const countsOf = (line: string) => line.split('\t').slice(0, -1).join('\t'); // without updatedAt
  return {
    draw(plan) {
      const lines = statusTsv(plan, flag, planPath);
      const nextLine = lines[lines.length - 1]!;
      const progressLine = lines.find((l) => l.startsWith('progress\t')) ?? '';
      if (!steps) {
        for (const line of lines) io.out(line);
      } else {
        plan.steps.forEach((s, i) => {
          const line = stepTsv(s);
          if (line !== steps![i]) io.out(line);
        });
        if (progressLine && countsOf(progressLine) !== countsOf(progress)) io.out(progressLine);
        if (nextLine !== next) io.out(nextLine);
      }
      steps = plan.steps.map(stepTsv);
      progress = progressLine;
      next = nextLine;
    },
  };
}
