// Runs the CLI in this process with captured streams: fast, and the same code path as
// the binary (runCli is what main.ts calls).
import { PassThrough } from 'node:stream';
import { runCli } from '../../src/cli/program.js';
import { scratchStateHome } from './cli.js';

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

export async function ferry(args: string[], options: InProcessOptions = {}): Promise<InProcessResult> {
  const capture = () => {
    const stream = new PassThrough() as PassThrough & { isTTY?: boolean };
    stream.isTTY = options.tty ?? false;
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
  };
  const out = capture();
  const err = capture();
  const stdin = new PassThrough() as PassThrough & { isTTY?: boolean };
  stdin.isTTY = options.tty ?? false;
  stdin.end(options.stdin ?? '');
  // HOME and XDG dirs default to a scratch place so no test reads a real user's config, and
  // what a run keeps (sync journals) goes to this test process's own state dir.
  const env = { HOME: '/nonexistent-ferry-home', XDG_STATE_HOME: scratchStateHome(), ...options.env };
  const code = await runCli(args, { stdin, stdout: out.stream, stderr: err.stream, env }, options.signal ?? new AbortController().signal);
  return { code, stdout: out.text(), stderr: err.text() };
}
