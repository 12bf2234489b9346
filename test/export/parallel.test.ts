// Parallel paged export against a real service and sandbox, through proxies on 127.0.0.1:
// pages answered out of order (a page held until the one after it was answered, so no
// timing is involved) are written in order, byte for byte what a one-request-at-a-time
// export writes; injected resets and 503s change nothing; a resync while pages are in
// flight is detected as it is for a sequential export; the reorder window never holds more
// pages than its bound (the engine's own counter, and what the proxy sees requested); a
// page that finally fails leaves the pages before it written and checkpointed.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLatencyProxy } from '../../bench/lib/latency-proxy.mjs';
import { AdaptiveLimit } from '../../src/client/adaptive-limit.js';
import { ApiClient } from '../../src/client/client.js';
import { partPaths } from '../../src/ops/export/checkpoint.js';
import { runExportPlan } from '../../src/ops/export/engine.js';
import type { ExportEnv, ExportPlan, ExportSummary } from '../../src/ops/export/types.js';
import type { Format } from '../../src/ops/export/writers.js';
import { startPageProxy, type PageProxy, type PageProxyOptions } from '../helpers/page-proxy.js';
import { tempDir } from '../helpers/service.js';
import { linkedCompany, readAll, sampleInvoice, type Linked } from '../helpers/sync.js';
import { type Harness, startTestStack } from '../helpers/stack.js';

const INVOICES = 2_950;
const PAGE_SIZE = 100;
const PAGES = Math.ceil(INVOICES / PAGE_SIZE);

describe('parallel paged export', () => {
  let h: Harness;
  let work: string;
  let company: Linked;
  const clients: ApiClient[] = [];
  const proxies: Array<{ close(): Promise<void> }> = [];

  const client = (baseUrl: string, extra: { maxRetries?: number } = {}) => {
    const made = new ApiClient({ baseUrl, apiKey: h.adminKey, ...extra });
    clients.push(made);
    return made;
  };
  const proxy = async (options: PageProxyOptions): Promise<PageProxy> => {
    const started = await startPageProxy(h.baseUrl, options);
    proxies.push(started);
    return started;
  };
  const plan = (over: Partial<ExportPlan> = {}): ExportPlan => ({
    dataType: 'invoices', dataPath: 'invoices', companyId: company.companyId, allCompanies: false, pageSize: PAGE_SIZE, format: 'ndjson', force: false, resume: false, ...over,
  });

  async function run(baseUrl: string, over: Partial<ExportPlan>, extra: Partial<ExportEnv> = {}, clientOptions: { maxRetries?: number } = {}) {
    const notes: string[] = [];
    const chunks: Buffer[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _enc, done) {
        chunks.push(chunk);
        done();
      },
    });
    const env: ExportEnv = { client: client(baseUrl, clientOptions), stream, signal: new AbortController().signal, note: (line) => notes.push(line), progress: () => undefined, ...extra };
    const summary = await runExportPlan(plan(over), env);
    return { summary, notes, stdout: Buffer.concat(chunks).toString('utf8') };
  }

  /** One request at a time, straight to the service: what an export without parallel pages writes. */
  async function sequential(format: Format, over: Partial<ExportPlan> = {}): Promise<{ text: string; summary: ExportSummary }> {
    const out = join(work, `sequential-${format}-${Math.random().toString(36).slice(2)}.${format}`);
    const { summary } = await run(h.baseUrl, { out, format, ...over }, { limit: new AdaptiveLimit({ pinned: 1 }), window: 2 });
    return { text: readFileSync(out, 'utf8'), summary };
  }

  async function resync(): Promise<void> {
    const queued = await h.api.call('POST', `/companies/${company.companyId}/data/queue/invoices`);
    expect(queued.status, queued.text).toBe(200);
    await h.drain();
  }

  /** Holds each even page until the page after it has been answered: every such pair arrives reversed. */
  const evenAfterOdd: PageProxyOptions = {
    before: ({ page }, self) => (page !== undefined && page % 2 === 0 && page < PAGES ? self.whenAnswered(page + 1) : undefined),
  };

  beforeAll(async () => {
    h = await startTestStack('fake-clocks');
    work = tempDir('ferry-export-parallel-');
    company = await linkedCompany(h.api, h.sandboxUrl, 'gbol', INVOICES, { seed: 51 });
    await resync();
  }, 120_000);
  afterAll(async () => {
    for (const p of proxies) await p.close();
    for (const c of clients) await c.close();
    await h?.stop();
  });

  it('pages answered out of order are written in order: ndjson, csv and json identical to a sequential export', async () => {
    const expected = (await readAll(h.api, company.companyId, 'invoices', { pageSize: 5000 })).map((r) => `${JSON.stringify(r)}\n`).join('');
    for (const format of ['ndjson', 'csv', 'json'] as const) {
      const reference = await sequential(format);
      if (format === 'ndjson') expect(reference.text === expected).toBe(true);
      const reordering = await proxy(evenAfterOdd);
      const out = join(work, `parallel.${format}`);
      const { summary } = await run(reordering.url, { out, format }, { limit: new AdaptiveLimit({ pinned: 4 }), window: 8 });
      expect(readFileSync(out, 'utf8') === reference.text, format).toBe(true);
      expect(summary).toMatchObject({ records: INVOICES, restarts: 0, pages: { requested: PAGES + 1, window: 8 } });
      expect(summary.pages.peakWindow).toBeLessThanOrEqual(8);
      // Every even page was answered after the odd page following it.
      for (let page = 2; page < PAGES; page += 2) expect(reordering.answered.indexOf(page + 1)).toBeLessThan(reordering.answered.indexOf(page));
    }
    // To stdout as well.
    const reordering = await proxy(evenAfterOdd);
    const piped = await run(reordering.url, {}, { limit: new AdaptiveLimit({ pinned: 3 }), window: 4 });
    expect(piped.stdout === expected).toBe(true);
  });

  it('the reorder window never holds more pages than its bound', async () => {
    const WINDOW = 4;
    const violations: string[] = [];
    const held = await proxy({
      async before({ page }, self) {
        if (page === undefined) return;
        // Pages n-WINDOW+1 … n may be held when page n is requested, so n-WINDOW must be written, hence answered.
        if (page > WINDOW && !self.answered.includes(page - WINDOW)) violations.push(`page ${page} requested before page ${page - WINDOW} was answered`);
        // Fill the window: hold the page next to be written until the others it may hold are answered.
        if (page % WINDOW === 2 && page + WINDOW - 1 <= PAGES) {
          for (let later = page + 1; later < page + WINDOW; later++) await self.whenAnswered(later);
          if (self.arrived.includes(page + WINDOW)) violations.push(`page ${page + WINDOW} requested while page ${page} was held`);
        }
      },
    });
    const out = join(work, 'bounded.ndjson');
    const { summary } = await run(held.url, { out }, { limit: new AdaptiveLimit({ pinned: 8 }), window: WINDOW });
    expect(violations).toEqual([]);
    // Every page once, and page 1 a second time (read beside the snapshot, then vouched for).
    expect(summary.pages).toEqual({ requested: PAGES + 1, window: WINDOW, peakWindow: WINDOW });
    expect(readFileSync(out, 'utf8') === (await sequential('ndjson')).text).toBe(true);
  });

  it('resets and 503s on the way (the adaptive limiter, default window): complete and identical', async () => {
    const faulty = await startLatencyProxy({ target: h.baseUrl, faults: { rate: 0.12, kinds: ['reset', '503'], seed: 13 } });
    proxies.push(faulty);
    const out = join(work, 'faults.csv');
    const { summary } = await run(faulty.url, { out, format: 'csv' });
    expect(faulty.stats().faults).toBeGreaterThan(0);
    expect(summary).toMatchObject({ records: INVOICES, restarts: 0 });
    expect(summary.concurrency.final).toBeGreaterThanOrEqual(1);
    expect(readFileSync(out, 'utf8') === (await sequential('csv')).text).toBe(true);
  });

  it('the data set\'s snapshot is read again only once every page has been answered', async () => {
    // The last page is held until all the others were answered; a snapshot read that
    // arrives before the last page was answered would vouch for a page it never saw.
    const statusAfterAnswers: number[] = [];
    const watching = await proxy({
      before: ({ path, page }, self) => {
        if (path.includes('/dataStatus')) statusAfterAnswers.push(new Set(self.answered).size);
        return page === PAGES ? Promise.all(Array.from({ length: PAGES - 1 }, (_, i) => self.whenAnswered(i + 1))).then(() => undefined) : undefined;
      },
    });
    const out = join(work, 'snapshot-order.ndjson');
    const { summary } = await run(watching.url, { out }, { limit: new AdaptiveLimit({ pinned: 6 }), window: 8 });
    expect(summary.records).toBe(INVOICES);
    // The first read goes out beside page 1; the second after every page, page 1's second read included.
    expect(statusAfterAnswers).toHaveLength(2);
    expect(statusAfterAnswers[0]).toBeLessThanOrEqual(1);
    expect(statusAfterAnswers[1]).toBe(PAGES);
    expect(watching.answered.filter((p) => p === 1)).toHaveLength(2);
  });

  it('a resync while pages are in flight is detected: a file export starts again, a stdout export fails', async () => {
    let resynced = false;
    const resyncing = await proxy({
      async before({ page }) {
        // Page 5 is read from the new snapshot; pages requested with it may be read from the old one.
        if (page === 5 && !resynced) {
          resynced = true;
          await resync();
        }
      },
    });
    const out = join(work, 'resynced.ndjson');
    const file = await run(resyncing.url, { out }, { limit: new AdaptiveLimit({ pinned: 4 }), window: 8 });
    expect(resynced).toBe(true);
    expect(file.summary).toMatchObject({ records: INVOICES, restarts: 1 });
    expect(file.notes.join('\n')).toContain('was resynced while it was being exported; exporting it again from its first page');
    expect(readFileSync(out, 'utf8') === (await sequential('ndjson')).text).toBe(true);

    resynced = false;
    await expect(run(resyncing.url, {}, { limit: new AdaptiveLimit({ pinned: 4 }), window: 8 })).rejects.toThrow(/mixes two snapshots/);
    expect(resynced).toBe(true);
  });

  it('a page that finally fails stops the export with the pages before it written and checkpointed; --resume completes it', async () => {
    const FAILING = 7;
    let failing = true;
    const broken = await proxy({ before: ({ page }) => (failing && page === FAILING ? { status: 503 } : undefined) });
    const out = join(work, 'failed.ndjson');
    const reference = (await sequential('ndjson')).text;
    const first = run(broken.url, { out }, { limit: new AdaptiveLimit({ pinned: 4 }), window: 8 }, { maxRetries: 0 });
    await expect(first).rejects.toMatchObject({ status: 503 });
    const paths = partPaths(out);
    const checkpoint = JSON.parse(readFileSync(paths.checkpoint, 'utf8'));
    const before = reference.split('\n').slice(0, (FAILING - 1) * PAGE_SIZE).map((l) => `${l}\n`).join('');
    expect(checkpoint).toMatchObject({ records: (FAILING - 1) * PAGE_SIZE, company: { pagesDone: FAILING - 1 } });
    expect(checkpoint.bytes).toBe(Buffer.byteLength(before));
    expect(readFileSync(paths.part, 'utf8') === before).toBe(true);
    expect(existsSync(out)).toBe(false);

    failing = false;
    const resumed = await run(broken.url, { out, resume: true }, { limit: new AdaptiveLimit({ pinned: 4 }), window: 8 });
    expect(resumed.summary).toMatchObject({ resumed: true, records: INVOICES, resumedRecords: (FAILING - 1) * PAGE_SIZE });
    expect(readFileSync(out, 'utf8') === reference).toBe(true);
    expect(existsSync(paths.part)).toBe(false);
  });

  it('--state through pages out of order: the same records and bookmark as a sequential run', async () => {
    const statePath = (name: string) => join(work, `${name}.state.json`);
    const reference = await sequential('ndjson', { statePath: statePath('sequential') });
    const reordering = await proxy(evenAfterOdd);
    const out = join(work, 'state.ndjson');
    await run(reordering.url, { out, statePath: statePath('parallel') }, { limit: new AdaptiveLimit({ pinned: 4 }), window: 6 });
    expect(readFileSync(out, 'utf8') === reference.text).toBe(true);
    const bookmark = (name: string) => {
      const { exportedAt: _, ...rest } = JSON.parse(readFileSync(statePath(name), 'utf8')).bookmarks.invoices[company.companyId];
      return rest;
    };
    expect(bookmark('parallel')).toEqual(bookmark('sequential'));
    expect(statSync(out).size).toBeGreaterThan(0);
  });
  it('a first page read before a resync that the snapshot read then sees is caught: read again, it differs, and the export starts again', async () => {
    const firstPage = await h.api.call('GET', `/companies/${company.companyId}/data/invoices?page=1&pageSize=1`);
    const first = firstPage.body.results[0];
    let resynced = false;
    const racing = await proxy({
      before: async ({ path }, self) => {
        // The snapshot is read once page 1 was answered, from the snapshot a resync just
        // published, in which page 1's first invoice has changed on the platform.
        if (path.includes('/dataStatus') && !resynced) {
          resynced = true;
          await self.whenAnswered(1);
          const edited = await h.api.call('PUT', `/companies/${company.companyId}/connections/${company.connectionId}/push/invoices/${first.id}?forceUpdate=true`, {
            body: sampleInvoice(first.customerRef.id, { invoiceNumber: `${first.invoiceNumber}-R` }),
          });
          expect(edited.body.status, edited.text).toBe('Success');
          await resync();
        }
      },
    });
    const out = join(work, 'first-page-race.ndjson');
    const file = await run(racing.url, { out }, { limit: new AdaptiveLimit({ pinned: 4 }), window: 8 });
    expect(resynced).toBe(true);
    expect(file.summary).toMatchObject({ records: INVOICES, restarts: 1 });
    expect(readFileSync(out, 'utf8') === (await sequential('ndjson')).text).toBe(true);
  });
});
