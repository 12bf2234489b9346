// What both demos (`ferry demo`, `ferry demo --managed`) show of their stages: each stage's
// own lines as it goes, and its timing in the summary; and what a demo run holds from start
// to end (its data dir, the stages' IO over an environment that reaches only the embedded
// service). Loaded only once a demo runs: the command files import its types alone.
import chalk from 'chalk';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { InterruptedError, isInterruption } from '../errors.js';
import { checkDataDir } from '../globals.js';
import type { IO } from '../io.js';

/** A stage and how long it took. */
export interface StageTiming {
  stage: string;
  seconds: number;
}

/** How a stage ended: its line, marked as a failure when the demo expected one. */
export interface StageEnd {
  text: string;
  failed?: boolean;
}

export interface DemoRun {
  dataDir: string;
  /** --data-dir was given: everything stays there; otherwise a temp dir, removed at the end. */
  kept: boolean;
  /** The stages' IO (stageIO) over the demo's own environment. */
  sub: IO;
  stages: StageTiming[];
  /** A line for the person watching; nothing in --json mode. */
  say(line: string): void;
  bold(text: string): string;
  /** A stage: its title, the lines of what it stands for, its work, and how it ended. */
  stage<T>(n: number, title: string, work: () => Promise<T>, done: (value: T) => string | StageEnd, lines?: string[]): Promise<T>;
  /** Seconds since the run started, to a tenth. */
  seconds(): number;
  /** The error to end with: the person's Ctrl-C (whatever it broke off) says what a rerun does (a temp data dir is gone by then). */
  ended(err: unknown, signal: AbortSignal): unknown;
}

/** Names the data dir (a fresh temp one unless --data-dir) and the stages' IO; `stageCount` is the N of each `[n/N]`. */
export function startDemoRun(io: IO, dataDirFlag: string | undefined, stageCount: number): DemoRun {
  const started = Date.now();
  const kept = dataDirFlag !== undefined;
  if (kept) checkDataDir(dataDirFlag, '--data-dir');
  const dataDir = kept ? resolve(dataDirFlag) : mkdtempSync(join(tmpdir(), 'ferry-demo-'));
  // Owner-only from the start, as the service wants its data dir: nothing for it to tighten.
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  // Only the embedded service: no remote target, profile or client from the environment.
  const env: NodeJS.ProcessEnv = { ...io.env, XDG_CONFIG_HOME: join(dataDir, 'config') };
  for (const name of ['FERRY_BASE_URL', 'FERRY_PROFILE', 'FERRY_API_KEY', 'FERRY_CLIENT_ID', 'FERRY_DATA_DIR']) delete env[name];
  const say = (line: string) => {
    if (io.mode !== 'json') io.err(line);
  };
  const bold = (text: string) => (io.color ? chalk.bold(text) : text);
  const ok = (text: string) => (io.color ? `${chalk.green('✓')} ${text}` : `  ${text}`);
  const failedMark = (text: string) => (io.color ? `${chalk.red('✗')} ${text}` : `  ${text}`);
  const stages: StageTiming[] = [];
  return {
    dataDir, kept, sub: stageIO(io, env), stages, say, bold,
    async stage(n, title, work, done, lines = []) {
      say('');
      say(bold(`[${n}/${stageCount}] ${title}`));
      for (const line of lines) say(`  ${line}`);
      const at = Date.now();
      const value = await work();
      const seconds = tenths(Date.now() - at);
      stages.push({ stage: title, seconds });
      const ended = done(value);
      const end = typeof ended === 'string' ? { text: ended } : ended;
      say((end.failed ? failedMark : ok)(`${end.text} (${seconds}s)`));
      return value;
    },
    seconds: () => tenths(Date.now() - started),
    ended: (err, signal) => (isInterruption(err) || signal.aborted ? new InterruptedError(kept
      ? `Stopped; rerun the same command to run the demo again in ${dataDir} (it starts afresh there).`
      : 'Stopped; the demo\'s temporary data dir is removed: rerun the same command to start again (add --data-dir DIR to keep its data).') : err),
  };
}

function tenths(ms: number): number {
  return Math.round(ms / 100) / 10;
}

/** An IO for the stages: their data output is the demo's business, their progress shows as it goes. */
function stageIO(io: IO, env: NodeJS.ProcessEnv): IO {
  const silent = io.quiet || io.mode === 'json';
  return {
    ...io,
    env,
    quiet: silent,
    mode: io.mode === 'json' ? 'plain' : io.mode,
    canPrompt: false,
    out: () => {},
    json: () => {},
    err: (line) => {
      if (!silent) io.stderr.write(`${line}\n`);
    },
  };
}
