// Long-running ferry processes for the scale tests (`ferry serve`, `ferry worker`,
// `ferry sandbox serve`), each started with --json and ready once its first line (listening
// or working) has come, with a deadline.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import { FERRY_BIN, cleanEnv, type RunResult } from '../helpers/cli.js';

export interface FerryProcess {
  child: ChildProcess;
  /** The first JSON line it printed (its listening or working event). */
  ready: Record<string, unknown>;
  stderr(): string;
  /** Sends `signal` (SIGTERM by default) and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<RunResult>;
}

export async function startFerry(args: string[], env: Record<string, string> = {}, deadlineMs = 30_000): Promise<FerryProcess> {
  const child = spawn(process.execPath, [FERRY_BIN, ...args, '--json'], { env: cleanEnv(env), stdio: 'pipe' });
  let stdout = '';
  let stderr = '';
  const exited = new Promise<RunResult>((done) => child.on('close', (code, signal) => done({ code, signal, stdout, stderr })));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const ready = await new Promise<Record<string, unknown>>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`ferry ${args[0]} was not ready within ${deadlineMs} ms: ${stderr}`));
    }, deadlineMs);
    let started = false;
    createInterface({ input: child.stdout! }).on('line', (line) => {
      stdout += `${line}\n`;
      if (started) return;
      started = true;
      clearTimeout(timer);
      resolve(JSON.parse(line) as Record<string, unknown>);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (!started) reject(new Error(`ferry ${args[0]} exited with ${code} before it was ready: ${stderr}`));
    });
  });
  return {
    child,
    ready,
    stderr: () => stderr,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** A port free a moment ago: the OS picks it for port 0, and it is released at once. */
export async function reservePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Polls `check` until it returns true, or fails at the deadline saying what it waited for. */
export async function waitFor(what: string, check: () => boolean | Promise<boolean>, deadlineMs: number, everyMs = 250): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${deadlineMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
