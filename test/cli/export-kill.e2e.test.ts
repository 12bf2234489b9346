// `ferry export` as a real child process (bin/ferry.js → dist/; run `node scripts/build.mjs`
// first) against a real service and sandbox: SIGKILL in the middle of an export leaves
// nothing under the final name, and `--resume` completes a file identical to a fresh
// export, without duplicates (also when pages arrive out of order through a proxy, so the
// kill lands while later pages wait in the reorder window); SIGINT stops it cleanly with
// exit 130.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, FERRY_BIN, runFerry } from '../helpers/cli.js';
import { startPageProxy } from '../helpers/page-proxy.js';
import { linkedCompany, readAll, waitFor, type Linked } from '../helpers/sync.js';
import type { Harness } from '../helpers/stack.js';
import { startExportHarness } from './export-support.js';

const INVOICES = 20_000;
/** Pages of 100 answered at once before the proxy slows the rest (slowProxy), and by how much. */
const SLOW_AFTER = 20;
const SLOW_MS = 300;

describe('ferry export killed mid-way, then --resume', () => {
  let h: Harness;
  let remote: string[];
  let work: string;
  let company: Linked;
  let expected: string;

  beforeAll(async () => {
    ({ h, work, remote } = await startExportHarness('ferry-export-kill-'));
    company = await linkedCompany(h.api, h.sandboxUrl, 'gbol', INVOICES, { seed: 41 });
    expect((await h.api.call('POST', `/companies/${company.companyId}/data/queue/invoices`)).status).toBe(200);
    await h.drain();
    expected = (await readAll(h.api, company.companyId, 'invoices', { pageSize: 5000 })).map((r) => `${JSON.stringify(r)}\n`).join('');
  }, 120_000);
  afterAll(async () => {
    await h?.stop();
  });

  /** Has the export checkpointed more than one page (checkpoints go out a few times a second, not per page)? */
  const checkpointedPages = (part: string) => {
    try {
      return (JSON.parse(readFileSync(`${part}.json`, 'utf8')) as { company: { pagesDone: number } }).company.pagesDone > 1;
    } catch {
      return false; // not written yet, or being replaced
    }
  };

  /**
   * Data pages past `SLOW_AFTER` are answered `SLOW_MS` late by a proxy, so the export is
   * mid-way when the test sees its checkpoint, however fast the service is (unslowed, 20,000
   * invoices take a fraction of a second, which a poll of the part file can miss). Holding
   * them instead would fill the export's window, and its first page's second read (which
   * checkpoints wait for) would never go out.
   */
  async function slowProxy() {
    let slow = true;
    const proxy = await startPageProxy(h.baseUrl, {
      before: ({ page }) => (slow && page !== undefined && page > SLOW_AFTER ? new Promise<void>((resolve) => setTimeout(resolve, SLOW_MS)) : undefined),
    });
    return { proxy, release: () => (slow = false), via: ['--base-url', proxy.url, ...remote.slice(2)] };
  }

  /** Starts the export as a child; resolves once the part file has grown past `bytes` and a checkpoint past page 1 is out, then sends `signal`. */
  async function interrupt(out: string, args: string[], bytes: number, signal: NodeJS.Signals) {
    const part = join(work, `.${out.split('/').at(-1)}.ferry-part`);
    const slowed = await slowProxy();
    const child = spawn(process.execPath, [FERRY_BIN, ...slowed.via, 'export', 'invoices', '--company', company.companyId, '--out', out, ...args], {
      env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    try {
      await waitFor(`the part file past ${bytes} bytes`, async () => existsSync(part) && statSync(part).size > bytes && checkpointedPages(part), 30_000, 2);
    } finally {
      child.kill(signal);
      slowed.release();
    }
    const code = await exited;
    await slowed.proxy.close();
    return { code, stderr: () => stderr, part };
  }

  it('SIGKILL: no file under the final name; --resume completes it byte for byte, no duplicates', async () => {
    const out = join(work, 'killed.ndjson');
    const killed = await interrupt(out, ['--page-size', '100'], 300_000, 'SIGKILL');
    expect(killed.code).toBe(null);
    expect(existsSync(out)).toBe(false);
    const checkpoint = JSON.parse(readFileSync(`${killed.part}.json`, 'utf8'));
    expect(checkpoint.company.pagesDone).toBeGreaterThan(1);
    expect(checkpoint.company.pagesDone).toBeLessThan(INVOICES / 100);
    // The part file may hold a page past the checkpoint (written, not yet checkpointed): resume cuts it off.
    expect(statSync(killed.part).size).toBeGreaterThanOrEqual(checkpoint.bytes);

    const resumed = await runFerry([...remote, 'export', 'invoices', '--company', company.companyId, '--out', out, '--page-size', '100', '--resume']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain('Resuming the export');
    const text = readFileSync(out, 'utf8');
    expect(text === expected).toBe(true);
    const ids = text.trim().split('\n').map((l) => JSON.parse(l).id);
    expect(new Set(ids).size).toBe(INVOICES);
    expect(existsSync(killed.part)).toBe(false);
  }, 120_000);

  it('SIGKILL of a parallel export with pages arriving out of order, then --resume: byte-identical to an uninterrupted export', async () => {
    // Even pages wait a little at the proxy, so the odd page after each overtakes it.
    const proxy = await startPageProxy(h.baseUrl, {
      before: ({ page }) => (page !== undefined && page % 2 === 0 ? new Promise<void>((resolve) => setTimeout(resolve, 15)) : undefined),
    });
    try {
      const via = ['--base-url', proxy.url, ...remote.slice(2)];
      const args = ['export', 'invoices', '--company', company.companyId, '--page-size', '100'];
      const whole = join(work, 'parallel-whole.ndjson');
      const uninterrupted = await runFerry([...via, ...args, '--out', whole]);
      expect(uninterrupted.code, uninterrupted.stderr).toBe(0);
      expect(readFileSync(whole, 'utf8') === expected).toBe(true);

      const out = join(work, 'parallel-killed.ndjson');
      const part = join(work, '.parallel-killed.ndjson.ferry-part');
      const child = spawn(process.execPath, [FERRY_BIN, ...via, ...args, '--out', out], { env: cleanEnv(), stdio: 'ignore' });
      const exited = new Promise((resolve) => child.on('close', resolve));
      try {
        await waitFor('the part file to grow', async () => existsSync(part) && statSync(part).size > 300_000 && checkpointedPages(part), 30_000, 2);
      } finally {
        child.kill('SIGKILL');
      }
      await exited;
      expect(existsSync(out)).toBe(false);
      const checkpoint = JSON.parse(readFileSync(`${part}.json`, 'utf8'));
      expect(checkpoint.company.pagesDone).toBeGreaterThan(1);
      expect(checkpoint.company.pagesDone).toBeLessThan(INVOICES / 100);

      const resumed = await runFerry([...via, ...args, '--out', out, '--resume']);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stderr).toContain('Resuming the export');
      expect(readFileSync(out, 'utf8') === readFileSync(whole, 'utf8')).toBe(true);
      expect(existsSync(part)).toBe(false);
    } finally {
      await proxy.close();
    }
  }, 120_000);

  it('SIGKILL of a CSV export with --all-companies, then --resume: identical to a fresh export', async () => {
    const fresh = join(work, 'fresh.csv');
    const whole = await runFerry([...remote, 'export', 'invoices', '--all-companies', '--page-size', '100', '--out', fresh]);
    expect(whole.code, whole.stderr).toBe(0);
    const out = join(work, 'killed.csv');
    const part = join(work, '.killed.csv.ferry-part');
    const slowed = await slowProxy();
    const child = spawn(process.execPath, [FERRY_BIN, ...slowed.via, 'export', 'invoices', '--all-companies', '--page-size', '100', '--out', out], { env: cleanEnv(), stdio: 'ignore' });
    const exited = new Promise((resolve) => child.on('close', resolve));
    try {
      await waitFor('the part file to grow', async () => existsSync(part) && statSync(part).size > 300_000, 30_000, 2);
    } finally {
      child.kill('SIGKILL');
      slowed.release();
    }
    await exited;
    await slowed.proxy.close();
    expect(existsSync(out)).toBe(false);
    const resumed = await runFerry([...remote, 'export', 'invoices', '--all-companies', '--page-size', '100', '--out', out, '--resume']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(readFileSync(out, 'utf8') === readFileSync(fresh, 'utf8')).toBe(true);
  }, 120_000);

  it('SIGINT stops cleanly (exit 130), keeps the partial export and says how to resume', async () => {
    const out = join(work, 'interrupted.json');
    const stopped = await interrupt(out, ['--page-size', '100'], 300_000, 'SIGINT');
    expect(stopped.code).toBe(130);
    expect(stopped.stderr()).toMatch(/^Stopped after [\d,]+ records written; rerun the same command with --resume to continue/m);
    expect(stopped.stderr()).not.toContain('error:');
    expect(existsSync(out)).toBe(false);
    expect(existsSync(stopped.part)).toBe(true);
    const resumed = await runFerry([...remote, 'export', 'invoices', '--company', company.companyId, '--out', out, '--page-size', '100', '--resume']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect((JSON.parse(readFileSync(out, 'utf8')) as unknown[]).map((r) => `${JSON.stringify(r)}\n`).join('')).toBe(expected);
  }, 120_000);

  it('refuses while another live export writes the same file', async () => {
    const out = join(work, 'locked.ndjson');
    writeFileSync(join(work, '.locked.ndjson.ferry-part.lock'), String(process.pid));
    const refused = await runFerry([...remote, 'export', 'invoices', '--company', company.companyId, '--out', out]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`Another ferry export (pid ${process.pid}) is writing`);
    // A lock left by a process that died is taken over.
    writeFileSync(join(work, '.locked.ndjson.ferry-part.lock'), '999999999');
    const taken = await runFerry([...remote, 'export', 'invoices', '--company', company.companyId, '--out', out, '--query', 'status=void']);
    expect(taken.code, taken.stderr).toBe(0);
  });
});
