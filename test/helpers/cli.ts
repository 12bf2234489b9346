// Runs the real `ferry` binary (bin/ferry.js → dist/) as a child process.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** How Node prints a process warning: `(node:1234) MaxListenersExceededWarning: …`. */
const NODE_WARNING = /\(node:\d+\) \w*Warning: .*/;

export const FERRY_BIN = fileURLToPath(new URL('../../bin/ferry.js', import.meta.url));

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

let stateHome: string | undefined;

/** $XDG_STATE_HOME of the ferry runs of this test process (sync journals): made on first use, in the run's temp dir (vitest.config.ts), which goes when the run ends. */
export function scratchStateHome(): string {
  stateHome ??= mkdtempSync(join(tmpdir(), 'ferry-state-'));
  return stateHome;
}

/** A clean environment: no inherited FERRY_* or CI settings leak into a test, nor a sync journal into the user's state dir. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('FERRY_') && k !== 'CI' && k !== 'NO_COLOR') env[k] = v;
  return { ...env, XDG_STATE_HOME: scratchStateHome(), ...extra };
}

export function runFerry(args: string[], options: { env?: Record<string, string>; input?: string; timeoutMs?: number } = {}): Promise<RunResult> {
  const child = spawn(process.execPath, [FERRY_BIN, ...args], { env: cleanEnv(options.env), stdio: 'pipe' });
  return outcome(child, options).then((result) => {
    // No Node warning may reach a user's terminal: every child-process test checks it.
    const warning = NODE_WARNING.exec(result.stderr);
    if (warning) throw new Error(`ferry ${args.join(' ')} printed a Node warning: ${warning[0]}`);
    return result;
  });
}

/** A child's exit and all it wrote, its stdin fed `input`; killed after `timeoutMs`. */
function outcome(child: ChildProcessWithoutNullStreams, options: { input?: string; timeoutMs?: number }): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    child.stdin.end(options.input ?? '');
  });
}

let shimDir: string | undefined;

/**
 * Runs a command line exactly as ferry printed it ("Next: ferry …"), through /bin/sh with
 * `ferry` on PATH (a shim for bin/ferry.js), in `cwd`: what a user pasting it would get.
 */
export function runPrinted(line: string, options: { cwd?: string; env?: Record<string, string>; input?: string; timeoutMs?: number } = {}): Promise<RunResult> {
  if (shimDir === undefined) {
    const dir = mkdtempSync(join(tmpdir(), 'ferry-bin-'));
    writeFileSync(join(dir, 'ferry'), `#!/bin/sh\nexec "${process.execPath}" "${FERRY_BIN}" "$@"\n`, { mode: 0o755 });
    shimDir = dir;
  }
  const env = cleanEnv(options.env);
  env.PATH = `${shimDir}:${env.PATH ?? ''}`;
  return outcome(spawn('/bin/sh', ['-c', line], { env, cwd: options.cwd, stdio: 'pipe' }), options);
}

/** The command after `label` (e.g. "Next:") on a line of `text`. */
export function printedAfter(text: string, label: string): string {
  const line = text.split('\n').find((l) => l.includes(label));
  if (!line) throw new Error(`no "${label}" line in:\n${text}`);
  return line.slice(line.indexOf(label) + label.length).trim();
}
