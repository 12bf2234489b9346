// Errors that say what to do, as the real binary prints them: a server that is not the API
// at --base-url (a plain HTTP server, or the sandbox platforms' JSON), a --data-dir that is
// a file, and the person's own Ctrl-C (a plain "Stopped; …" line with exit 130, not an
// error): listen's, and the demo's, which must not send anyone to a temp data dir it has
// removed, and which starts afresh when run again in a kept one. (migrate tokens' Ctrl-C is
// in test/migrate/crash-resume.e2e.test.ts, export's in export-kill.e2e.test.ts.)
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { existsSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, FERRY_BIN, runFerry, type RunResult } from '../helpers/cli.js';
import { startSandboxServe } from '../helpers/processes.js';
import { tempDir } from '../helpers/service.js';
import { waitFor } from '../helpers/sync.js';

let dir: string;

beforeAll(() => {
  dir = tempDir('ferry-errors-');
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** A plain HTTP server that is not the API: every request gets `status` and `body` as text/html. */
async function notTheApi(status: number, body: string): Promise<{ url: string; seen: string[]; server: Server }> {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, seen, server };
}

/** `ferry ARGS` as a child, stopped with SIGINT once its stderr shows `when`. */
async function interruptedAt(args: string[], when: RegExp): Promise<RunResult> {
  const child = spawn(process.execPath, [FERRY_BIN, ...args], { env: cleanEnv(), stdio: 'pipe' });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<RunResult>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
  try {
    await waitFor(`ferry ${args[0]} to show ${when}`, async () => when.test(stderr), 60_000);
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  child.kill('SIGINT');
  return done;
}

describe('a server that is not the API at --base-url', () => {
  it('a 501 page: one error naming the URL and the route, the status once, a --base-url hint, not retried', async () => {
    const { url, seen, server } = await notTheApi(501, '<html><body>Error response: 501 Unsupported method</body></html>');
    try {
      const key = join(dir, 'key');
      writeFileSync(key, 'not-a-real-key', { mode: 0o600 });
      const run = await runFerry(['--base-url', url, '--api-key-file', key, 'companies', 'list']);
      expect(run.code).toBe(1);
      const errors = run.stderr.match(/^error: .*$/gm) ?? [];
      expect(errors).toEqual([`error: ${url} answered GET /companies with 501 and text/html that is not the service's JSON.`]);
      expect(run.stderr.match(/501/g)).toHaveLength(1);
      expect(run.stderr).toMatch(/^hint: Is --base-url \(or FERRY_BASE_URL\) the API's own address/m);
      expect(seen).toEqual(['GET /companies']);
    } finally {
      server.close();
    }
  });
});

describe('another JSON server at --base-url: the sandbox platforms that ferry serve also prints', () => {
  it('is one error naming the URL and the route, with the --base-url hint', async () => {
    const sandbox = await startSandboxServe(['--data-dir', join(dir, 'sandbox-data')]);
    try {
      const key = join(dir, 'key-sandbox');
      writeFileSync(key, 'not-a-real-key', { mode: 0o600 });
      const run = await runFerry(['--base-url', sandbox.url, '--api-key-file', key, 'companies', 'list']);
      expect(run.code).toBe(1);
      expect(run.stderr.match(/^error: .*$/gm)).toEqual([`error: ${sandbox.url} answered GET /companies with 404 and application/json that is not the service's JSON.`]);
      expect(run.stderr).toMatch(/^hint: Is --base-url \(or FERRY_BASE_URL\) the API's own address/m);
    } finally {
      await sandbox.stop();
    }
  }, 60_000);
});

describe('an error answer without the service\'s words', () => {
  it('says its status once, with the route', async () => {
    const { url, server } = await notTheApi(400, 'bad request');
    try {
      const key = join(dir, 'key-400');
      writeFileSync(key, 'not-a-real-key', { mode: 0o600 });
      const run = await runFerry(['--base-url', url, '--api-key-file', key, 'companies', 'get', 'c0ffee']);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('error: HTTP 400 from GET /companies/c0ffee\n');
      expect(run.stderr.match(/400/g)).toHaveLength(1);
    } finally {
      server.close();
    }
  });
});

describe('--data-dir that is a file', () => {
  it('is a usage error naming it, for the service commands and the demo', async () => {
    const file = join(dir, 'not-a-dir');
    writeFileSync(file, 'x');
    for (const args of [['companies', 'list', '--data-dir', file], ['demo', '--data-dir', file], ['serve', '--port', '0', '--data-dir', file]]) {
      const run = await runFerry(args);
      expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(2);
      expect(run.stderr).toContain(`error: --data-dir ${file} is a file, not a directory.`);
      expect(run.stderr).not.toContain('EEXIST');
    }
    const below = await runFerry(['companies', 'list', '--data-dir', join(file, 'sub')]);
    expect(below.code).toBe(2);
    expect(below.stderr).toContain(`error: --data-dir ${join(file, 'sub')} passes through a file`);
    const fromEnv = await runFerry(['companies', 'list'], { env: { FERRY_DATA_DIR: file } });
    expect(fromEnv.code).toBe(2);
    expect(fromEnv.stderr).toContain(`error: FERRY_DATA_DIR ${file} is a file, not a directory.`);
  });
});

describe('the person\'s own Ctrl-C in listen', () => {
  it('a plain Stopped line saying how to go on, exit 130, no error', async () => {
    const run = await interruptedAt(['listen', '--data-dir', join(dir, 'listen-data')], /Press Ctrl-C to stop/);
    expect(run.code, run.stderr).toBe(130);
    expect(run.stderr.trimEnd().split('\n').at(-1)).toBe('Stopped listening after 0 events; rerun the same command to listen again.');
    expect(run.stderr).not.toMatch(/^(error|hint):/m);
  }, 60_000);
});

describe('the person\'s own Ctrl-C in the demo', () => {
  it('a temp data dir: a plain Stopped line, exit 130, and no pointer into the removed dir', async () => {
    const run = await interruptedAt(['demo'], /\[3\/5\]/);
    expect(run.code, run.stderr).toBe(130);
    const dataDir = /on the embedded service in (\S+) \(temporary\)/.exec(run.stderr)?.[1];
    expect(dataDir).toBeDefined();
    expect(existsSync(dataDir!)).toBe(false);
    const last = run.stderr.trimEnd().split('\n').at(-1);
    expect(last).toBe('Stopped; the demo\'s temporary data dir is removed: rerun the same command to start again (add --data-dir DIR to keep its data).');
    expect(run.stderr).not.toMatch(/^(error|hint):/m);
    // The temp dir is the demo's own, owner-only from the start: nothing for the service to tighten.
    expect(run.stderr).not.toContain('tightened permissions');
  }, 90_000);

  it('a kept data dir: the dir is owner-only from the start, a rerun starts afresh, and Ctrl-C says so', async () => {
    const kept = join(dir, 'kept', 'demo-data');
    const args = ['demo', '--data-dir', kept, '--companies', '3', '--invoices', '5'];
    const first = await runFerry(args, { timeoutMs: 90_000 });
    expect(first.code, first.stderr).toBe(0);
    // The demo made the dir itself: nothing for the service to tighten, and none of its files left readable by others.
    expect(first.stderr).not.toContain('tightened permissions');
    expect(statSync(kept).mode & 0o077).toBe(0);
    expect(statSync(join(kept, 'demo', 'invoices.ndjson')).mode & 0o077).toBe(0);

    const again = await runFerry(args, { timeoutMs: 90_000 });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain(`(the earlier demo's files in ${join(kept, 'demo')} are replaced; its companies stay, under their own client)`);
    expect(again.stderr).not.toContain('tightened permissions');
    expect(again.stderr).toContain('Done in');

    const stopped = await interruptedAt(args, /\[2\/5\]/);
    expect(stopped.code, stopped.stderr).toBe(130);
    expect(stopped.stderr.trimEnd().split('\n').at(-1)).toBe(`Stopped; rerun the same command to run the demo again in ${kept} (it starts afresh there).`);
    expect(stopped.stderr).not.toMatch(/^error:/m);
  }, 240_000);
});
