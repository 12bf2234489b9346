// The one IO object every command gets: streams, TTY facts, colour, and the output
// mode. Commands never touch process.stdout, process.env or console directly, so tests
// run them with buffers (test/helpers/in-process.ts).
import type { Readable, Writable } from 'node:stream';

export type OutputMode = 'tty' | 'plain' | 'json';

export interface IO {
  stdin: Readable;
  stdout: Writable;
  stderr: Writable;
  env: NodeJS.ProcessEnv;
  /** stdout is a terminal: tables and colour; otherwise stable tab-separated lines. */
  stdoutIsTTY: boolean;
  /** stderr is a terminal: spinners and progress bars may be drawn there. */
  stderrIsTTY: boolean;
  /** A person can answer a prompt (stdin is a TTY and --no-input/CI are not set). */
  canPrompt: boolean;
  color: boolean;
  mode: OutputMode;
  quiet: boolean;
  verbose: boolean;
  /** Writes one line of data to stdout. */
  out(line: string): void;
  /** Writes one line of progress, log or error text to stderr (suppressed by --quiet unless forced). */
  err(line: string, options?: { force?: boolean }): void;
  /** Writes one JSON document (one line) to stdout. */
  json(value: unknown): void;
}

export interface IOSettings {
  json?: boolean;
  noInput?: boolean;
  noColor?: boolean;
  quiet?: boolean;
  verbose?: boolean;
}

interface Streams {
  stdin: Readable & { isTTY?: boolean };
  stdout: Writable & { isTTY?: boolean };
  stderr: Writable & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
}

export function createIO(streams: Streams, settings: IOSettings = {}): IO {
  const { stdin, stdout, stderr, env } = streams;
  const json = settings.json ?? false;
  const stdoutIsTTY = Boolean(stdout.isTTY) && !json;
  const stderrIsTTY = Boolean(stderr.isTTY) && !json;
  const color = !settings.noColor && env.NO_COLOR === undefined && env.TERM !== 'dumb' && (stdoutIsTTY || stderrIsTTY);
  const canPrompt = Boolean(stdin.isTTY) && Boolean(stderr.isTTY) && !settings.noInput && !env.CI && !json;
  const quiet = settings.quiet ?? false;
  const verbose = (settings.verbose ?? false) || Boolean(env.FERRY_DEBUG);
  return {
    stdin, stdout, stderr, env,
    stdoutIsTTY, stderrIsTTY, canPrompt, color, quiet, verbose,
    mode: json ? 'json' : stdoutIsTTY ? 'tty' : 'plain',
    out: (line) => void stdout.write(`${line}\n`),
    err: (line, options) => {
      if (!quiet || options?.force) stderr.write(`${line}\n`);
    },
    json: (value) => void stdout.write(`${JSON.stringify(value)}\n`),
  };
}

/** A command's result: the JSON document with --json; otherwise what `human` prints for a person or a pipe. */
export function printResult(io: IO, json: unknown, human: () => void): void {
  if (io.mode === 'json') io.json(json);
  else human();
}
