// Helpers of the managed-migration tests: a fake terminal that answers real
// @inquirer/prompts as they appear, a killable `ferry` child, and a small fixture that
// makes a client, an OAuth app and sandbox tenants.
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { runCli } from '../../src/cli/program.js';
import { cleanEnv, FERRY_BIN, runFerry, type RunResult } from '../helpers/cli.js';
import type { InProcessResult } from '../helpers/in-process.js';
import { sandboxCall } from '../helpers/sync.js';

// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-9;?]*[A-Za-z]/g;

export interface Answer {
  /** Text the prompt shows (ANSI codes removed) before the answer is typed. */
  when: string | RegExp;
  /** Keystrokes: the answer and '\r' for Enter. */
  send: string;
}

/**
 * Runs ferry in-process on a fake terminal (stdin, stdout and stderr report isTTY) and
 * types each answer once its prompt has been drawn on stderr.
 */
export async function interactive(args: string[], answers: Answer[], options: { env?: Record<string, string>; deadlineMs?: number } = {}): Promise<InProcessResult & { answered: number }> {
  const capture = () => {
    const stream = new PassThrough() as PassThrough & { isTTY?: boolean; columns?: number; rows?: number };
    stream.isTTY = true;
    stream.columns = 120;
    stream.rows = 40;
    // A prompt ends its output stream when done; a terminal's stderr is stdio, which
    // pipe() never ends (legacy Stream#pipe checks _isStdio), so neither does this one.
    (stream as unknown as { _isStdio: boolean })._isStdio = true;
    // What a spinner (ora) asks of a terminal.
    Object.assign(stream, { cursorTo: () => true, clearLine: () => true, moveCursor: () => true, getColorDepth: () => 8, hasColors: () => true });
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
  };
  const out = capture();
  const err = capture();
  const stdin = new PassThrough() as PassThrough & { isTTY?: boolean; setRawMode?: (mode: boolean) => void };
  stdin.isTTY = true;
  stdin.setRawMode = () => {};
  const env = { HOME: '/nonexistent-ferry-home', TERM: 'xterm-256color', ...options.env };
  let finished = false;
  const run = runCli(args, { stdin, stdout: out.stream, stderr: err.stream, env }, new AbortController().signal).finally(() => (finished = true));
  let answered = 0;
  let seen = 0;
  const deadline = Date.now() + (options.deadlineMs ?? 60_000);
  for (const answer of answers) {
    for (;;) {
      if (finished) break;
      const text = err.text().replace(ANSI, '').slice(seen);
      const at = typeof answer.when === 'string' ? text.indexOf(answer.when) : text.search(answer.when);
      if (at >= 0) {
        seen += at + 1;
        break;
      }
      if (Date.now() > deadline) throw new Error(`prompt ${String(answer.when)} never appeared; stderr so far:\n${err.text().replace(ANSI, '')}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    if (finished) break;
    // The prompt defers its first render by a tick; let it settle before typing.
    await new Promise((resolve) => setTimeout(resolve, 30));
    stdin.write(answer.send);
    answered += 1;
  }
  const code = await run;
  stdin.end();
  return { code, stdout: out.text(), stderr: err.text().replace(ANSI, ''), answered };
}

/** A `ferry` child process that the test may kill; resolves when it exits. */
export function spawnFerry(args: string[], env: Record<string, string> = {}): { child: ChildProcess; done: Promise<RunResult>; stderr: () => string } {
  const child = spawn(process.execPath, [FERRY_BIN, ...args], { env: cleanEnv(env), stdio: 'pipe' });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdin!.end();
  const done = new Promise<RunResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return { child, done, stderr: () => stderr };
}

export interface Fixture {
  clientId: string;
  appClientId: string;
  companies: string;
}

/** `ferry admin clients create --json`, an OAuth app (its callback URL registered or not) and sandbox tenants. */
export async function managedFixture(ferry: (args: string[]) => Promise<{ code: number | null; stdout: string; stderr: string }>, options: {
  baseUrl: string; sandboxUrl: string; work: string; name: string; count: number; invoices?: number; registerCallback?: boolean; platform?: string;
}): Promise<Fixture> {
  const platform = options.platform ?? 'qhyg';
  const created = await ferry(['admin', 'clients', 'create', '--name', options.name, '--plan', 'Paid', '--json']);
  if (created.code !== 0) throw new Error(`clients create: ${created.stderr}`);
  const clientId = JSON.parse(created.stdout).id as string;
  const callbackUrls = options.registerCallback === false ? [] : [`${options.baseUrl}/callback/${platform}`];
  const app = await sandboxCall(options.sandboxUrl, 'POST', '/admin/apps', { platform, name: `${options.name} app`, callbackUrls });
  if (app.status !== 201) throw new Error(`app: ${JSON.stringify(app.body)}`);
  const companies = join(options.work, `${options.name.replace(/\W+/g, '-').toLowerCase()}.csv`);
  const tenants = await ferry(['sandbox', 'tenants', 'create', '--platform', platform, '--count', String(options.count), '--invoices', String(options.invoices ?? 10), '--out', companies]);
  if (tenants.code !== 0) throw new Error(`tenants: ${tenants.stderr}`);
  return { clientId, appClientId: app.body.clientId as string, companies };
}

export function keyFile(work: string, key: string): string {
  const path = join(work, 'admin.key');
  writeFileSync(path, key, { mode: 0o600 });
  return path;
}

export { runFerry };
