// Runs the real `ferry` binary (bin/ferry.js → dist/) as a child process.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { trustSandbox } from './sync.js';

/** How Node prints a process warning: `(node:1234) MaxListenersExceededWarning: …`. */
const NODE_WARNING = /\(node:\d+\) \w*Warning: .*/;

export const FERRY_BIN = fileURLToPath(new URL('../../bin/ferry.js', import.meta.url));

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** A clean environment: no inherited FERRY_* or CI settings leak into a test. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('FERRY_') && k !== 'CI' && k !== 'NO_COLOR') env[k] = v;
  return { ...env, ...extra };
}

export function runFerry(args: string[], options: { env?: Record<string, string>; input?: string; timeoutMs?: number } = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [FERRY_BIN, ...args], { env: cleanEnv(options.env), stdio: 'pipe' });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      // No Node warning may reach a user's terminal: every child-process test checks it.
      const warning = NODE_WARNING.exec(stderr);
      if (warning) reject(new Error(`ferry ${args.join(' ')} printed a Node warning: ${warning[0]}`));
      else resolve({ code, signal, stdout, stderr });
    });
    child.stdin.end(options.input ?? '');
  });
}

export interface ServeProcess {
  child: ChildProcess;
  listening: Record<string, string>;
  /** Sends the signal and resolves with the exit code and everything printed after start. */
  stop(signal?: NodeJS.Signals): Promise<RunResult>;
}

/** Starts `ferry serve --port 0 --json …` and waits (with a deadline) for its listening line. */
export function startServe(args: string[], env: Record<string, string> = {}, deadlineMs = 30_000): Promise<ServeProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [FERRY_BIN, 'serve', '--port', '0', '--json', ...args], { env: cleanEnv(env), stdio: 'pipe' });
    let stdout = '';
    let stderr = '';
    const exited = new Promise<RunResult>((done) => child.on('close', (code, signal) => done({ code, signal, stdout, stderr })));
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`ferry serve did not report listening within ${deadlineMs} ms: ${stderr}`));
    }, deadlineMs);
    const lines = createInterface({ input: child.stdout! });
    let started = false;
    lines.on('line', (line) => {
      stdout += `${line}\n`;
      if (started) return;
      started = true;
      clearTimeout(timer);
      const listening = JSON.parse(line) as Record<string, string>;
      // Its sandbox's admin routes take this service's admin key.
      trustSandbox(listening.sandboxUrl!, readFileSync(join(listening.dataDir!, 'admin.key'), 'utf8').trim());
      resolve({
        child,
        listening,
        stop: (signal = 'SIGTERM') => {
          child.kill(signal);
          return exited;
        },
      });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (!started) reject(new Error(`ferry serve exited with ${code} before listening: ${stderr}`));
    });
  });
}
