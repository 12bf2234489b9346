// `ferry sandbox tenants create` as the real binary (bin/ferry.js → dist/) against a real
// `ferry serve` (in this process): its bar on a real terminal (script(1) gives it a pty),
// its memory in a 20 MB heap, and Ctrl-C (SIGINT) stopping it after the calls under way.
// The rest of `ferry sandbox` runs in this process in sandbox.test.ts.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FERRY_BIN, cleanEnv, printedAfter, runFerry, runPrinted, type RunResult } from '../helpers/cli.js';
import { type ServeHandle, startTestStack } from '../helpers/stack.js';
import { waitFor } from '../helpers/sync.js';
import { csvRows, useProxiedServe } from './sandbox-support.js';

describe('ferry sandbox tenants create, the binary', () => {
  let serve: ServeHandle;
  let work: string;
  const create = (args: string[], env?: Record<string, string>) => runFerry([...serve.target(), 'sandbox', 'tenants', 'create', '--platform', 'gbol', '--invoices', '1', ...args], env ? { env } : {});
  beforeAll(async () => {
    serve = await startTestStack('serve');
    work = serve.dir;
  });
  afterAll(async () => {
    await serve.stop();
  });

  it('shows a bar on a terminal, and on a pipe only the final lines', async () => {
    const piped = await create(['--count', '2001', '--out', join(work, 'piped.csv')]);
    expect(piped.code).toBe(0);
    expect(piped.stderr.trim().split('\n')).toEqual([
      'Created 2,001 Xero sandbox tenants (1 invoice each).',
      `Tokens written to ${join(work, 'piped.csv')} (mode 0600). Next: ferry ${serve.target().join(' ')} migrate tokens ${join(work, 'piped.csv')} --dry-run`,
    ]);
    // As printed, pasted into a shell: the dry run reaches the same service and checks every row.
    const next = await runPrinted(printedAfter(piped.stderr, 'Next:'), { timeoutMs: 60_000 });
    expect(next.code, next.stderr).toBe(0);
    expect(next.stderr).toContain('Dry run: 2,001 valid rows of 2,001');
    // A real terminal (util-linux `script` gives the child a pty), 100 columns wide.
    const out = join(work, 'tty.csv');
    const command = [process.execPath, FERRY_BIN, ...serve.target(), 'sandbox', 'tenants', 'create', '--platform', 'gbol', '--invoices', '1', '--count', '2001', '--out', out]
      .map((a) => `'${a}'`).join(' ');
    const tty = await new Promise<RunResult>((resolve, reject) => {
      // stdin stays open: `script` stops relaying the terminal's output once its stdin ends.
      const child = spawn('script', ['-qec', `stty cols 100 rows 30; ${command}`, '/dev/null'], { env: cleanEnv({ TERM: 'xterm-256color' }), stdio: ['pipe', 'pipe', 'pipe'] });
      let stdout = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.on('error', reject);
      child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr: '' }));
    });
    expect(tty.code).toBe(0);
    const screen = tty.stdout.replace(/\x1b\[[0-9;?]*[a-zA-Z]/g, ''); // eslint-disable-line no-control-regex
    // The spinner draws the batches' frames on its own clock, so which ones a quick run shows
    // varies; its first line and its last (the full bar) are always drawn.
    expect(screen).toContain('Creating 2,001 Xero sandbox tenants…');
    expect(screen).toMatch(/✔ \[█{20}\] 2,001 tenants in \d+s\.\r?\nCreated 2,001 Xero sandbox tenants \(1 invoice each\)\./);
    expect(csvRows(out)).toHaveLength(2001);
  });

  it('keeps the memory flat: 30,000 tenants in a 20 MB heap', async () => {
    // Kept in memory, 30,000 tenants need more than that (the command aborts out of heap);
    // streamed, the CLI's heap stays about where it starts (~12 MB).
    const out = join(work, 'flat.csv');
    const made = await create(['--count', '30000', '--invoices', '0', '--out', out], { NODE_OPTIONS: '--max-old-space-size=20' });
    expect(made.stderr).not.toContain('heap out of memory');
    expect(made.code).toBe(0);
    expect(csvRows(out)).toHaveLength(30_000);
  });

  describe('stopped midway', () => {
    const midway = useProxiedServe(() => serve);

    it('stops on Ctrl-C after the calls under way, with --out not written', async () => {
      const out = join(work, 'interrupted.csv');
      const start = midway.proxy.calls();
      let release!: () => void;
      const released = new Promise<'forward'>((resolve) => (release = () => resolve('forward')));
      // The first two calls go through; the rest wait for the test's Ctrl-C.
      midway.decide = (call) => (call - start <= 2 ? 'forward' : released);
      const child = spawn(process.execPath, [FERRY_BIN, ...midway.proxied.target(), 'sandbox', 'tenants', 'create', '--platform', 'gbol', '--invoices', '0', '--count', '100000', '--out', out], { env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
      await waitFor('a third call to the sandbox', async () => midway.proxy.calls() - start >= 3);
      child.kill('SIGINT');
      release();
      expect(await exited).toBe(130);
      expect(stderr).toContain('Stopping once the calls under way to the sandbox have answered (Ctrl-C again to quit at once)');
      const said = /Interrupted: ([\d,]+) of 100,000 tenants were created \(they exist in the sandbox, unused\); .*interrupted\.csv was not written\./.exec(stderr);
      expect(said, stderr).not.toBeNull();
      // Every call that reached the sandbox finished and is counted; none was started after the Ctrl-C was seen.
      const created = Number(said![1]!.replace(/,/g, ''));
      expect(created).toBe((midway.proxy.calls() - start) * 1000);
      expect(created).toBeLessThan(100_000);
      expect(existsSync(out)).toBe(false);
      expect(readdirSync(work).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    });
  });
});
