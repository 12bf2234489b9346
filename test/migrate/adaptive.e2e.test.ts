// `ferry migrate tokens` with its adaptive concurrency, through the latency-and-limit proxy
// (bench/lib/latency-proxy.mjs) in front of a real `ferry serve`: every request 50 ms late,
// as across the internet. With no limit the run grows past the old fixed 8 rows in flight;
// behind a token bucket it keeps 429s rare, with the X-Rate-Limit-* headers (the pacer) and
// without them (learned from 429s and Retry-After). Assertions are on counts, never on time.
import { afterEach, describe, expect, it } from 'vitest';
import { startLatencyProxy, type LatencyProxy, type LatencyProxyOptions } from '../../bench/lib/latency-proxy.mjs';
import { runFerry } from '../helpers/cli.js';
import { type ServeProcess, startTestStack } from '../helpers/stack.js';
import { expectMigratedOnce, extKeys, makeTenants, stopCleanly, tokensCsv, writeCsv } from './support.js';

let stack: ServeProcess | undefined;
let proxy: LatencyProxy | undefined;

afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
  await stopCleanly(stack);
  stack = undefined;
});

async function migrateThrough(rows: number, seed: number, options: Omit<LatencyProxyOptions, 'target'>, args: string[] = []) {
  stack = await startTestStack('process');
  const tenants = await makeTenants(stack.sandboxUrl, rows, { seed, invoices: 0 });
  const input = writeCsv(stack.dir, 'tokens.csv', tokensCsv(tenants));
  proxy = await startLatencyProxy({ target: stack.baseUrl, ...options });
  const run = await runFerry([...stack.target(stack.adminKeyFile, proxy.url), '--json', 'migrate', 'tokens', input, '--yes', '--no-sync', ...args], { timeoutMs: 120_000 });
  expect(run.code, run.stderr).toBe(0);
  const summary = JSON.parse(run.stdout) as { migrated: number; failed: number; concurrency: { final: number; peak: number }; rate: number };
  expect(summary.migrated).toBe(rows);
  await expectMigratedOnce(stack.api, extKeys(tenants));
  return { summary, stats: proxy.stats() };
}

describe('migrate tokens: adaptive concurrency through the latency proxy', () => {
  it('50 ms per request, no limit: the window grows past the old fixed 8', async () => {
    const { summary, stats } = await migrateThrough(160, 61_000, { delayMs: 50 });
    expect(summary.concurrency.final, JSON.stringify(summary)).toBeGreaterThan(8);
    expect(summary.concurrency.peak).toBeGreaterThanOrEqual(summary.concurrency.final);
    expect(summary.rate).toBeGreaterThan(0);
    expect(stats.answered429).toBe(0);
    // Three calls per row (company, connection, authorize), the company index page, the integrations.
    expect(stats.requests).toBeGreaterThanOrEqual(3 * 160);
  }, 120_000);

  it('a 40/s bucket with X-Rate-Limit-* headers: paced, no 429', async () => {
    const { stats } = await migrateThrough(60, 62_000, { delayMs: 50, rateLimit: { perSecond: 40, headers: true } });
    expect(stats.answered429, JSON.stringify(stats)).toBe(0);
  }, 120_000);

  it('a 40/s bucket without the headers: learned from 429s and Retry-After, few 429s; --concurrency pins the window', async () => {
    const { summary, stats } = await migrateThrough(100, 63_000, { delayMs: 50, rateLimit: { perSecond: 40, headers: false } });
    expect(stats.answered429, JSON.stringify(stats)).toBeLessThanOrEqual(Math.ceil(stats.requests * 0.08));
    expect(summary.concurrency.final).toBeGreaterThanOrEqual(1);
    await proxy!.close();
    await stopCleanly(stack);
    stack = undefined;
    const pinned = await migrateThrough(20, 64_000, { delayMs: 50 }, ['--concurrency', '3']);
    expect(pinned.summary.concurrency).toEqual({ final: 3, peak: 3 });
  }, 180_000);
});
