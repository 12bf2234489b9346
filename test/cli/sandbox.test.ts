// `ferry sandbox …` as real child processes, against a remote `ferry serve` (found through
// GET /admin/sandbox) and on the embedded target.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FERRY_BIN, cleanEnv, runFerry, type RunResult } from '../helpers/cli.js';
import { basic, tempDir } from '../helpers/service.js';
import { waitFor } from '../helpers/sync.js';
import { integrationByKey } from '../../src/platforms/registry.js';
import { type ServeProcess, startTestStack } from '../helpers/stack.js';

describe('ferry sandbox against a remote ferry serve', () => {
  const dataDir = tempDir();
  const work = tempDir();
  let serve: ServeProcess;
  let remote: string[];
  beforeAll(async () => {
    serve = await startTestStack('process', { dataDir });
    remote = ['--base-url', serve.listening.baseUrl!, '--api-key-file', join(dataDir, 'admin.key')];
  });
  afterAll(async () => {
    await serve.stop();
  });

  it('tenants create writes a 0600 CSV with the integration token columns', async () => {
    const out = join(work, 'xero.csv');
    const result = await runFerry([...remote, 'sandbox', 'tenants', 'create', '--platform', 'gbol', '--count', '3', '--invoices', '20', '--out', out]);
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toBe(out);
    expect(statSync(out).mode & 0o777).toBe(0o600);
    const [header, ...rows] = readFileSync(out, 'utf8').trim().split('\n');
    const tokenFields = integrationByKey('gbol')!.tokenFields.map((f) => f.name);
    expect(header!.split(',')).toEqual(['companyName', 'externalId', 'platformKey', ...tokenFields]);
    expect(rows).toHaveLength(3);
    // Tokens are the file's content, never the command's output.
    const accessToken = rows[0]!.split(',')[3]!;
    expect(result.stdout + result.stderr).not.toContain(accessToken);
  });

  it('refuses to replace the CSV without --force, before creating anything', async () => {
    const out = join(work, 'xero.csv');
    const before = JSON.parse((await runFerry([...remote, '--json', 'sandbox', 'tenants', 'list'])).stdout).length;
    const refused = await runFerry([...remote, 'sandbox', 'tenants', 'create', '--platform', 'gbol', '--out', out]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('already exists');
    expect(JSON.parse((await runFerry([...remote, '--json', 'sandbox', 'tenants', 'list'])).stdout)).toHaveLength(before);
    expect((await runFerry([...remote, 'sandbox', 'tenants', 'create', '--platform', 'gbol', '--out', out, '--force'])).code).toBe(0);
  });

  it('lists tenants, simulates a legacy refresh and changes settings', async () => {
    const tenants = JSON.parse((await runFerry([...remote, '--json', 'sandbox', 'tenants', 'list', '--platform', 'gbol'])).stdout);
    expect(tenants.length).toBeGreaterThanOrEqual(3);
    expect(JSON.stringify(tenants)).not.toContain('accessToken');
    const refreshed = await runFerry([...remote, '--json', 'sandbox', 'tenants', 'legacy-refresh', tenants[0].id]);
    expect(JSON.parse(refreshed.stdout)).toMatchObject({ tenantId: tenants[0].id, outcome: 'rotated' });
    const settings = await runFerry([...remote, '--json', 'sandbox', 'settings', '--latency', '5', '--push-mode', 'async']);
    expect(JSON.parse(settings.stdout)).toMatchObject({ latencyMs: 5, pushMode: 'async' });
  });

  it('explains an unknown platform and an unknown tenant', async () => {
    const unknown = await runFerry([...remote, 'sandbox', 'tenants', 'create', '--platform', 'zzzz', '--out', join(work, 'z.csv')]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('Integration zzzz not found');
    expect(existsSync(join(work, 'z.csv'))).toBe(false);
    const missing = await runFerry([...remote, 'sandbox', 'tenants', 'legacy-refresh', 'no-such-tenant']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('404');
  });

  it('is refused to a non-admin key', async () => {
    const created = await runFerry([...remote, '--json', 'admin', 'clients', 'create', '--name', 'C', '--plan', 'Paid']);
    const key = JSON.parse(created.stdout).apiKey;
    const denied = await runFerry(['--base-url', serve.listening.baseUrl!, 'sandbox', 'tenants', 'list'], { env: { FERRY_API_KEY: key } });
    expect(denied.code).toBe(4);
  });
});

describe('ferry sandbox on the embedded target', () => {
  it('creates tenants with no service running', async () => {
    const work = tempDir();
    const out = join(work, 'tokens.csv');
    const result = await runFerry(['--data-dir', join(work, 'data'), 'sandbox', 'tenants', 'create', '--platform', 'qhyg', '--count', '2', '--out', out]);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('Using the embedded ferry service');
    expect(readFileSync(out, 'utf8').trim().split('\n')).toHaveLength(3);
  });
});

/** The CSV's data rows as [companyName, externalId, …] (token values hold no commas or quotes). */
function csvRows(path: string): string[][] {
  return readFileSync(path, 'utf8').trim().split('\n').slice(1).map((line) => line.split(','));
}

/**
 * A stand-in for the sandbox, in front of a real one: each POST /admin/tenants is forwarded
 * (with the admin key the real one takes) or dropped mid-request, as `decide` says by its
 * number (1, 2, …). A `ferry serve --sandbox-url` pointed here makes every `ferry sandbox`
 * command use it.
 */
async function tenantsProxy(upstream: string, adminKey: string, decide: (call: number) => 'forward' | 'drop' | Promise<'forward' | 'drop'>) {
  let calls = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => void (async () => {
      const call = req.method === 'POST' && req.url === '/admin/tenants' ? ++calls : 0;
      if (call && (await decide(call)) === 'drop') return void req.socket.destroy();
      const body = chunks.length ? Buffer.concat(chunks) : null;
      const answer = await fetch(upstream + req.url, { method: req.method!, headers: { authorization: basic(adminKey), 'content-type': 'application/json' }, body });
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(await answer.text());
    })().catch(() => req.socket.destroy()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls: () => calls,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

describe('ferry sandbox tenants create in batches, up to 100,000', () => {
  let serve: ServeProcess;
  let work: string;
  const create = (args: string[], env?: Record<string, string>) => runFerry([...serve.target(), 'sandbox', 'tenants', 'create', '--platform', 'gbol', '--invoices', '1', ...args], env ? { env } : {});
  const tenantCount = async () => JSON.parse((await runFerry([...serve.target(), '--json', 'sandbox', 'tenants', 'list', '--platform', 'gbol'])).stdout).length as number;
  beforeAll(async () => {
    serve = await startTestStack('process');
    work = serve.dir;
  });
  afterAll(async () => {
    await serve.stop();
  });

  it('makes 2,500 in calls of 1,000 whose seeds run on, into a CSV that migrate tokens --dry-run takes', async () => {
    const out = join(work, 'many.csv');
    const made = await create(['--count', '2500', '--seed', '500', '--out', out, '--json']);
    expect(made.code).toBe(0);
    const rows = csvRows(out);
    expect(rows).toHaveLength(2500);
    expect(new Set(rows.map((r) => r[1])).size).toBe(2500);
    expect(statSync(out).mode & 0o777).toBe(0o600);
    // --json is a summary, whatever the count: never the tenants themselves.
    expect(JSON.parse(made.stdout)).toEqual({
      platform: 'gbol', out, count: 2500, invoices: 1, seed: 500,
      first: { id: rows[0]![1], name: rows[0]![0] }, last: { id: rows[2499]![1], name: rows[2499]![0] },
    });

    // Tenant k has seed 500 + k, as one call of 2,500 would give it: the second batch is
    // the same organisations as a call starting at seed 1,500.
    const second = join(work, 'second.csv');
    expect((await create(['--count', '1000', '--seed', '1500', '--out', second])).code).toBe(0);
    expect(csvRows(second).map((r) => r[0])).toEqual(rows.slice(1000, 2000).map((r) => r[0]));

    const dryRun = await runFerry([...serve.target(), 'migrate', 'tokens', out, '--dry-run']);
    expect(dryRun.code).toBe(0);
    expect(dryRun.stderr).toContain('2,500 valid rows of 2,500');
  });

  it('shows a bar on a terminal, and on a pipe only the final lines', async () => {
    const piped = await create(['--count', '2001', '--out', join(work, 'piped.csv')]);
    expect(piped.code).toBe(0);
    expect(piped.stderr.trim().split('\n')).toEqual([
      'Created 2,001 Xero sandbox tenants (1 invoice each).',
      `Tokens written to ${join(work, 'piped.csv')} (mode 0600). Next: ferry migrate tokens ${join(work, 'piped.csv')}`,
    ]);
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

  it('replaces the file with --force only once the new one is complete', async () => {
    const out = join(work, 'many.csv');
    const before = readFileSync(out, 'utf8');
    const refused = await create(['--count', '1500', '--out', out]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('already exists');
    expect(readFileSync(out, 'utf8')).toBe(before);
    const replaced = await create(['--count', '1500', '--out', out, '--force']);
    expect(replaced.code).toBe(0);
    const rows = csvRows(out);
    expect(rows).toHaveLength(1500);
    expect(before).not.toContain(rows[0]![1]);
    expect(statSync(out).mode & 0o777).toBe(0o600);
    expect(readdirSync(work).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('refuses 0 and 100,001 before creating anything', async () => {
    const before = await tenantCount();
    for (const count of ['0', '100001']) {
      const refused = await create(['--count', count, '--out', join(work, 'refused.csv')]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('--count must be a whole number from 1 to 100000');
    }
    expect(existsSync(join(work, 'refused.csv'))).toBe(false);
    expect(await tenantCount()).toBe(before);
    const help = await runFerry(['sandbox', 'tenants', 'create', '--help']);
    expect(help.stdout).toContain('1-100,000');
    expect(help.stdout).toContain('--count 2500');
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
    let proxied: ServeProcess | undefined;
    let proxy: Awaited<ReturnType<typeof tenantsProxy>> | undefined;
    let decide: (call: number) => 'forward' | 'drop' | Promise<'forward' | 'drop'> = () => 'forward';
    beforeAll(async () => {
      proxy = await tenantsProxy(serve.sandboxUrl, serve.adminKey, (call) => decide(call));
      proxied = await startTestStack('process', { args: ['--sandbox-url', proxy.url] });
    });
    afterAll(async () => {
      await proxied?.stop();
      await proxy?.close();
    });

    it('leaves --out as it was when the sandbox stops answering, and says how many exist', async () => {
      const out = join(work, 'kept.csv');
      writeFileSync(out, 'the old file\n', { mode: 0o600 });
      const before = await tenantCount();
      const start = proxy!.calls();
      decide = (call) => (call - start <= 2 ? 'forward' : 'drop');
      const failed = await runFerry([...proxied!.target(), 'sandbox', 'tenants', 'create', '--platform', 'gbol', '--invoices', '1', '--count', '5000', '--out', out, '--force']);
      expect(failed.code).toBe(1);
      expect(failed.stderr).toContain('Could not reach the sandbox platforms');
      expect(failed.stderr).toContain(`2,000 of 5,000 tenants were created (they exist in the sandbox, unused); ${out} was not written.`);
      expect(failed.stderr).toContain('hint: Run the same command again for a complete set; ferry sandbox tenants list --platform gbol shows the ones already made.');
      expect(readFileSync(out, 'utf8')).toBe('the old file\n');
      expect(readdirSync(work).filter((f) => f.endsWith('.tmp'))).toEqual([]);
      expect(await tenantCount()).toBe(before + 2000);
    });

    it('stops on Ctrl-C after the calls under way, with --out not written', async () => {
      const out = join(work, 'interrupted.csv');
      const start = proxy!.calls();
      let release!: () => void;
      const released = new Promise<'forward'>((resolve) => (release = () => resolve('forward')));
      // The first two calls go through; the rest wait for the test's Ctrl-C.
      decide = (call) => (call - start <= 2 ? 'forward' : released);
      const child = spawn(process.execPath, [FERRY_BIN, ...proxied!.target(), 'sandbox', 'tenants', 'create', '--platform', 'gbol', '--invoices', '0', '--count', '100000', '--out', out], { env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
      await waitFor('a third call to the sandbox', async () => proxy!.calls() - start >= 3);
      child.kill('SIGINT');
      release();
      expect(await exited).toBe(130);
      expect(stderr).toContain('Stopping once the calls under way to the sandbox have answered (Ctrl-C again to quit at once)');
      const said = /Interrupted: ([\d,]+) of 100,000 tenants were created \(they exist in the sandbox, unused\); .*interrupted\.csv was not written\./.exec(stderr);
      expect(said, stderr).not.toBeNull();
      // Every call that reached the sandbox finished and is counted; none was started after the Ctrl-C was seen.
      const created = Number(said![1]!.replace(/,/g, ''));
      expect(created).toBe((proxy!.calls() - start) * 1000);
      expect(created).toBeLessThan(100_000);
      expect(existsSync(out)).toBe(false);
      expect(readdirSync(work).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    });
  });
});
