// Long-running ferry processes as real children (`ferry serve`, `ferry worker`,
// `ferry sandbox serve`), each started with --json and ready once its first line (listening
// or working) has come, with a deadline; and the ports they are given. Polling with a
// deadline is waitFor in ./sync.ts.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { createInterface } from 'node:readline';
import { FERRY_BIN, cleanEnv, type RunResult } from './cli.js';

export interface FerryProcess {
  child: ChildProcess;
  /** The first JSON line it printed (its listening or working event). */
  ready: Record<string, unknown>;
  stderr(): string;
  /** Sends `signal` (SIGTERM by default) unless it has exited, and waits for the exit. */
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

export interface SandboxServe extends FerryProcess {
  /** Where it listens (its listening line's url). */
  url: string;
}

/** `ferry sandbox serve --port 0 …`, ready once it listens. */
export async function startSandboxServe(args: string[]): Promise<SandboxServe> {
  const sandbox = await startFerry(['sandbox', 'serve', '--port', '0', ...args]);
  return { ...sandbox, url: String(sandbox.ready.baseUrl) };
}

/** A server holding `port` on 127.0.0.1 (0: one the OS picks) until closed. */
export function listenOn(port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

/** A port free a moment ago: the OS picks it for port 0, and it is released at once. */
export async function reservePort(): Promise<number> {
  const server = await listenOn(0);
  const { port } = server.address() as { port: number };
  await closeServer(server);
  return port;
}
