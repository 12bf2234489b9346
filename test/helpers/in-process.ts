// Runs the CLI in this process with captured streams: fast, and the same code path as
// the binary (runCli is what main.ts calls). A Ctrl-C or SIGTERM is the abort of the
// command's signal, as main.ts turns the real signals into it. A Node warning emitted
// while a command runs is what a child would print on stderr (`(node:1234) …Warning: …`):
// ferry() fails on one, as runFerry does, and long-running commands show it in stderr().
import { PassThrough } from 'node:stream';
import { runCli } from '../../src/cli/program.js';
import { scratchStateHome, type RunResult } from './cli.js';

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

/** The runs watching for process warnings now: one listener on the process serves them all. */
const watching = new Set<(line: string) => void>();
const onWarning = (warning: Error) => {
  for (const watch of watching) watch(`(node:${process.pid}) ${warning.name}: ${warning.message}`);
};

/**
 * The process warnings emitted from now until `stop`, worded as Node prints them. They
 * are emitted on a later tick, so `stop` lets pending ones arrive first.
 */
export function watchWarnings(): { lines(): string[]; stop(): Promise<string[]> } {
  const seen: string[] = [];
  const watch = (line: string) => void seen.push(line);
  if (watching.size === 0) process.on('warning', onWarning);
  watching.add(watch);
  return {
    lines: () => [...seen],
    async stop() {
      await new Promise((resolve) => setImmediate(resolve));
      watching.delete(watch);
      if (watching.size === 0) process.off('warning', onWarning);
      return seen;
    },
  };
}

/** HOME and XDG dirs default to a scratch place so no test reads a real user's config. */
// HOME and XDG dirs default to a scratch place so no test reads a real user's config, and
// what a run keeps (sync journals) goes to this test process's own state dir.
const environment = (env: Record<string, string> = {}) => ({ HOME: '/nonexistent-ferry-home', XDG_STATE_HOME: scratchStateHome(), ...env });

export async function ferry(args: string[], options: InProcessOptions = {}): Promise<InProcessResult> {
  const out = capture(options.tty ?? false);
  const err = capture(options.tty ?? false);
  const stdin = new PassThrough() as PassThrough & { isTTY?: boolean };
  stdin.isTTY = options.tty ?? false;
  stdin.end(options.stdin ?? '');
  const warnings = watchWarnings();
  const code = await runCli(args, { stdin, stdout: out.stream, stderr: err.stream, env: environment(options.env) }, options.signal ?? new AbortController().signal);
  // No Node warning may reach a user's terminal.
  const [warning] = await warnings.stop();
  if (warning) throw new Error(`ferry ${args.join(' ')} printed a Node warning: ${warning}`);
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
  const warnings = watchWarnings();
  const running = runCli([...args, '--json'], { stdin, stdout: out.stream, stderr: err.stream, env: environment(env) }, controller.signal);
  const stderr = () => [err.text(), ...warnings.lines().map((line) => `${line}\n`)].join('');
  const result = async (): Promise<RunResult> => {
    const code = await running;
    await warnings.stop();
    return { code, signal: null, stdout: out.text(), stderr: stderr() };
  };
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
      void warnings.stop();
      reject(new Error(`ferry ${args[0]} exited with ${code} before it was ready: ${err.text()}`));
    }, reject);
  });
  return {
    ready,
    stdout: () => out.text(),
    stderr,
    async stop(signal = 'SIGTERM') {
      controller.abort(signal);
      return result();
    },
  };
}

/** `ferry sandbox serve --port 0 …` in this process, ready once it listens (its listening line's url). */
export async function startSandboxInProcess(args: string[]): Promise<InProcessCommand & { url: string }> {
  const sandbox = await startInProcess(['sandbox', 'serve', '--port', '0', ...args]);
  return { ...sandbox, url: String(sandbox.ready.baseUrl) };
}
