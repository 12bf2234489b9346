// Runs the CLI in this process with captured streams: fast, and the same code path as
// the binary (runCli is what main.ts calls). A Ctrl-C or SIGTERM is the abort of the
// command's signal, as main.ts turns the real signals into it.
import { PassThrough } from 'node:stream';
import { runCli } from '../../src/cli/program.js';
import type { RunResult } from './cli.js';

export interface InProcessResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface InProcessOptions {
  env?: Record<string, string>;
  stdin?: string;
  /** Pretend stdout/stderr (and stdin) are terminals. */
  tty?: boolean;
  signal?: AbortSignal;
}

interface Capture {
  stream: PassThrough & { isTTY?: boolean };
  text(): string;
}

function capture(tty: boolean): Capture {
  const stream = new PassThrough() as PassThrough & { isTTY?: boolean };
  stream.isTTY = tty;
  const chunks: Buffer[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c));
  return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
}

/** HOME and XDG dirs default to a scratch place so no test reads a real user's config. */
const environment = (env: Record<string, string> = {}) => ({ HOME: '/nonexistent-ferry-home', ...env });

export async function ferry(args: string[], options: InProcessOptions = {}): Promise<InProcessResult> {
  const out = capture(options.tty ?? false);
  const err = capture(options.tty ?? false);
  const stdin = new PassThrough() as PassThrough & { isTTY?: boolean };
  stdin.isTTY = options.tty ?? false;
  stdin.end(options.stdin ?? '');
  const code = await runCli(args, { stdin, stdout: out.stream, stderr: err.stream, env: environment(options.env) }, options.signal ?? new AbortController().signal);
  return { code, stdout: out.text(), stderr: err.text() };
}

export interface InProcessCommand {
  /** The first JSON line it printed (its listening or working event). */
  ready: Record<string, unknown>;
  stdout(): string;
  stderr(): string;
  /** Aborts the command as main.ts does on `signal` (unless it has ended), and waits for its exit code. */
  stop(signal?: NodeJS.Signals): Promise<RunResult>;
}

/**
 * A long-running command (`ferry serve`, `ferry worker`, `ferry sandbox serve`) in this
 * process with --json, ready once its first line has come, with a deadline: what
 * processes.ts startFerry does with a child, for tests not about the process itself.
 */
export async function startInProcess(args: string[], env: Record<string, string> = {}, deadlineMs = 30_000): Promise<InProcessCommand> {
  const out = capture(false);
  const err = capture(false);
  const stdin = new PassThrough();
  stdin.end();
  const controller = new AbortController();
  const running = runCli([...args, '--json'], { stdin, stdout: out.stream, stderr: err.stream, env: environment(env) }, controller.signal);
  const result = async (): Promise<RunResult> => ({ code: await running, signal: null, stdout: out.text(), stderr: err.text() });
  const ready = await new Promise<Record<string, unknown>>((resolve, reject) => {
    const timer = setTimeout(() => {
      controller.abort('SIGTERM');
      reject(new Error(`ferry ${args[0]} was not ready within ${deadlineMs} ms: ${err.text()}`));
    }, deadlineMs);
    const onData = () => {
      const text = out.text();
      const end = text.indexOf('\n');
      if (end < 0) return;
      clearTimeout(timer);
      out.stream.off('data', onData);
      resolve(JSON.parse(text.slice(0, end)) as Record<string, unknown>);
    };
    out.stream.on('data', onData);
    void running.then((code) => {
      clearTimeout(timer);
      reject(new Error(`ferry ${args[0]} exited with ${code} before it was ready: ${err.text()}`));
    }, reject);
  });
  return {
    ready,
    stdout: () => out.text(),
    stderr: () => err.text(),
    async stop(signal = 'SIGTERM') {
      controller.abort(signal);
      return result();
    },
  };
}
