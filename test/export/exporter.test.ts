// The export engine against a scripted fake service, for the cases a real one cannot
// produce on cue: a resync landing between two pages, a service without /dataStatus
// whose totalResults changes, a part file holding a page past its checkpoint, a slow
// stdout reader. Pages follow the wire contract (offsets, `_links.next`).
import { appendFileSync, existsSync, readFileSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ApiRequestError } from '../../src/client/errors.js';
import type { ApiClient } from '../../src/client/client.js';
import { partPaths } from '../../src/ops/export/checkpoint.js';
import { runExportPlan } from '../../src/ops/export/engine.js';
import { followingPage } from '../../src/ops/export/look-ahead.js';
import { lastPage, MAX_WINDOW, pagesByNumber, windowFor, WINDOW_BYTES } from '../../src/ops/export/page-window.js';
import { MAX_RESTARTS, type ExportEnv, type ExportPlan } from '../../src/ops/export/types.js';
import { tempDir } from '../helpers/service.js';

interface FakeDataSet {
  records: Array<Record<string, unknown>>;
  syncId: string;
  status?: number;
  error?: string;
}

interface Fake {
  client: ApiClient;
  sets: Map<string, FakeDataSet>;
  requests: string[];
  /** Called before a data page is served (page number, company id). */
  beforePage?: (page: number, companyId: string) => void;
  dataStatus: boolean;
  /** Rewrites each `_links.next` href (a service with links of its own style). */
  nextHref?: (href: string, page: number) => string;
}

function records(n: number, tag = 'a'): Array<Record<string, unknown>> {
  return Array.from({ length: n }, (_, i) => ({ id: `${tag}-${i}`, n: i, nested: { x: i % 3 }, modifiedDate: `2026-01-01T00:00:${String(i % 60).padStart(2, '0')}Z` }));
}

function fakeService(companies: Record<string, FakeDataSet>): Fake {
  const fake = { sets: new Map(Object.entries(companies)), requests: [], dataStatus: true } as unknown as Fake;
  const get = async (path: string, options: { query?: Record<string, unknown>; raw?: boolean } = {}) => {
    const body = await answer(path, options);
    return options.raw ? Buffer.from(JSON.stringify(body)) : body;
  };
  const answer = async (path: string, options: { query?: Record<string, unknown> } = {}): Promise<any> => {
    const url = new URL(path, 'http://fake');
    for (const [k, v] of Object.entries(options.query ?? {})) if (v !== undefined && v !== '') url.searchParams.set(k, String(v));
    fake.requests.push(url.pathname + url.search);
    const page = Number(url.searchParams.get('page') ?? 1);
    const pageSize = Number(url.searchParams.get('pageSize') ?? 100);
    const envelope = (all: unknown[]) => {
      const results = all.slice((page - 1) * pageSize, page * pageSize);
      const next = page * pageSize < all.length ? new URLSearchParams(url.searchParams) : undefined;
      next?.set('page', String(page + 1));
      const nextHref = next ? (fake.nextHref ?? ((h: string) => h))(`${url.pathname}?${next}`, page + 1) : undefined;
      return { results, pageNumber: page, pageSize, totalResults: all.length, _links: { self: { href: url.pathname }, current: { href: path }, ...(nextHref ? { next: { href: nextHref } } : {}) } };
    };
    if (url.pathname === '/companies') return envelope([...fake.sets.keys()].map((id) => ({ id, name: `Company ${id}` })));
    const match = /^\/companies\/([^/]+)\/(dataStatus|data\/([^/]+))$/.exec(url.pathname);
    const set = match ? fake.sets.get(decodeURIComponent(match[1]!)) : undefined;
    if (!match || !set) throw new ApiRequestError('GET', path, 404, { error: 'Company not found' });
    if (match[2] === 'dataStatus') {
      if (!fake.dataStatus) throw new ApiRequestError('GET', path, 404, { error: 'No route' });
      return { things: { dataType: 'things', currentStatus: 'Complete', latestSuccessfulSyncId: set.syncId } };
    }
    if (set.status) throw new ApiRequestError('GET', path, set.status, { error: set.error ?? 'nope' });
    fake.beforePage?.(page, decodeURIComponent(match[1]!));
    return envelope(set.records);
  };
  fake.client = {
    get,
    useGate: () => undefined,
    async *pages(path: string, options: { query?: Record<string, unknown> } = {}) {
      let page: any = await get(path, options);
      yield page;
      while (page._links.next) {
        page = await get(page._links.next.href);
        yield page;
      }
    },
  } as unknown as ApiClient;
  return fake;
}

function env(fake: Fake, extra: Partial<ExportEnv> = {}): ExportEnv & { notes: string[]; stdout: () => string } {
  const notes: string[] = [];
  const chunks: Buffer[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      chunks.push(chunk);
      done();
    },
  });
  return {
    client: fake.client, stream, signal: new AbortController().signal,
    note: (line) => notes.push(line), progress: () => undefined, notes, stdout: () => Buffer.concat(chunks).toString(), ...extra,
  };
}

const plan = (over: Partial<ExportPlan>): ExportPlan => ({
  dataType: 'things', dataPath: 'things', companyId: 'c1', allCompanies: false, pageSize: 10, format: 'ndjson', force: false, resume: false, ...over,
});

const ndjson = (rows: Array<Record<string, unknown>>) => rows.map((r) => `${JSON.stringify(r)}\n`).join('');

describe('export engine: snapshots', () => {
  it('a resync between two pages makes a file export start the company again', async () => {
    const fake = fakeService({ c1: { records: records(35), syncId: 's1' } });
    const fresh = records(35, 'b');
    fake.beforePage = (page) => {
      if (page === 3 && fake.sets.get('c1')!.syncId === 's1') fake.sets.set('c1', { records: fresh, syncId: 's2' });
    };
    const out = join(tempDir(), 'out.ndjson');
    const e = env(fake);
    const summary = await runExportPlan(plan({ out }), e);
    expect(readFileSync(out, 'utf8')).toBe(ndjson(fresh));
    expect(summary).toMatchObject({ records: 35, restarts: 1 });
    expect(e.notes.join('\n')).toContain('was resynced while it was being exported; exporting it again from its first page');
  });

  it('a resync between two pages fails a stdout export (it cannot take back what it wrote)', async () => {
    const fake = fakeService({ c1: { records: records(35), syncId: 's1' } });
    fake.beforePage = (page) => {
      if (page === 2) fake.sets.get('c1')!.syncId = 's2';
    };
    await expect(runExportPlan(plan({}), env(fake))).rejects.toThrow(/mixes two snapshots/);
  });

  it('without /dataStatus, a change of totalResults between pages is the sign', async () => {
    const fake = fakeService({ c1: { records: records(35), syncId: 's1' } });
    fake.dataStatus = false;
    const grown = records(36, 'g');
    fake.beforePage = (page) => {
      if (page === 2 && fake.sets.get('c1')!.records.length === 35) fake.sets.get('c1')!.records = grown;
    };
    const out = join(tempDir(), 'out.ndjson');
    const summary = await runExportPlan(plan({ out }), env(fake));
    expect(readFileSync(out, 'utf8')).toBe(ndjson(grown));
    expect(summary.restarts).toBe(1);
  });

  it(`gives up after ${MAX_RESTARTS} restarts of one company, keeping the partial export`, async () => {
    const fake = fakeService({ c1: { records: records(35), syncId: 's0' } });
    let n = 0;
    fake.beforePage = (page) => {
      if (page === 2) fake.sets.get('c1')!.syncId = `s${++n}`;
    };
    const out = join(tempDir(), 'out.ndjson');
    const failed = runExportPlan(plan({ out }), env(fake));
    await expect(failed).rejects.toThrow(/again and again/);
    // The hint names the company's status; the command line adds its target flags.
    await expect(failed).rejects.toMatchObject({ hint: 'Export it when no sync is running (ferry status c1 shows its data sets), then --resume.', suggests: { args: ['status', 'c1'] } });
    expect(existsSync(out)).toBe(false);
  });
});

describe('export engine: pages requested ahead', () => {
  it('guesses the page after a link by its page parameter, never past the last page', () => {
    const meta = { totalResults: 35, pageSize: 10 };
    expect(followingPage('/c/1/data/x?page=2&pageSize=10&query=a%20b%20%26%26%20c', meta)).toBe('/c/1/data/x?page=3&pageSize=10&query=a%20b%20%26%26%20c');
    expect(followingPage('/c/1/data/x?pageSize=10&page=3', meta)).toBe('/c/1/data/x?pageSize=10&page=4');
    expect(followingPage('/c/1/data/x?page=4&pageSize=10', meta)).toBeUndefined();
    expect(followingPage('/c/1/data/x?cursor=abc', meta)).toBeUndefined();
    expect(followingPage('/c/1/data/x?subpage=2', meta)).toBeUndefined();
  });

  it('requests pages by number only when the links are plain page numbers with the parameters sent', () => {
    const sent = { pageSize: 10, query: 'a b && c', orderBy: undefined };
    expect(pagesByNumber('/c/1/data/x?page=3&pageSize=10&query=a%20b%20%26%26%20c', 2, sent)).toBe(true);
    expect(pagesByNumber('/c/1/data/x?query=a+b+%26%26+c&pageSize=10&page=3', 2, sent)).toBe(true);
    expect(pagesByNumber('/c/1/data/x?page=3&pageSize=10&query=a%20b%20%26%26%20c&token=t', 2, sent)).toBe(false);
    expect(pagesByNumber('/c/1/data/x?page=3&pageSize=20&query=a%20b%20%26%26%20c', 2, sent)).toBe(false);
    expect(pagesByNumber('/c/1/data/x?page=4&pageSize=10&query=a%20b%20%26%26%20c', 2, sent)).toBe(false);
    expect(pagesByNumber('/c/1/data/x?cursor=abc', 2, sent)).toBe(false);
    expect(lastPage({ totalResults: 35, pageSize: 10 }, 10)).toBe(4);
    expect(lastPage({ totalResults: 0 }, 10)).toBe(1);
    expect(lastPage({ totalResults: -1 }, 10)).toBeUndefined();
    // The window holds at most WINDOW_BYTES of pages, never fewer than two, never more than the ceiling.
    expect(windowFor(1_000_000)).toBe(Math.min(MAX_WINDOW, Math.floor(WINDOW_BYTES / 1_000_000)));
    expect(windowFor(50 * 1024 * 1024)).toBe(2);
    expect(windowFor(100, 6)).toBe(6);
  });

  it('follows _links.next whatever they look like; a wrong guess is dropped, never written', async () => {
    const fake = fakeService({ c1: { records: records(95), syncId: 's1' } });
    fake.nextHref = (href, page) => `${href}&token=t${page * 7}`;
    const e = env(fake);
    await runExportPlan(plan({}), e);
    expect(e.stdout()).toBe(ndjson(records(95)));
    const data = fake.requests.filter((r) => r.includes('/data/'));
    // Each real link was requested; the guesses (carrying the previous token) were extra requests.
    for (let page = 2; page <= 10; page++) expect(data.some((r) => r.includes(`page=${page}&`) && r.endsWith(`token=t${page * 7}`))).toBe(true);
  });

  it('asks for each page once, by number (page 1 twice: read beside the snapshot, then again to vouch for it)', async () => {
    const fake = fakeService({ c1: { records: records(95), syncId: 's1' } });
    const e = env(fake);
    await runExportPlan(plan({}), e);
    expect(e.stdout()).toBe(ndjson(records(95)));
    const pages = fake.requests.filter((r) => r.includes('/data/')).map((r) => Number(new URL(r, 'http://x').searchParams.get('page')));
    expect(pages.sort((a, b) => a - b)).toEqual([1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });
});

describe('export engine: resume', () => {
  it('cuts off bytes past the checkpoint (a page written but not checkpointed) and continues', async () => {
    const fake = fakeService({ c1: { records: records(55), syncId: 's1' } });
    const out = join(tempDir(), 'out.json');
    const controller = new AbortController();
    const stopAt = (records: number) => ({ signal: controller.signal, progress: (info: { records: number }) => info.records >= records && controller.abort('SIGINT') });
    await expect(runExportPlan(plan({ out, format: 'json' }), env(fake, stopAt(30)))).rejects.toThrow(/Stopped after 30 records/);
    const paths = partPaths(out);
    const checkpoint = JSON.parse(readFileSync(paths.checkpoint, 'utf8'));
    expect(checkpoint).toMatchObject({ records: 30, company: { pagesDone: 3 } });
    appendFileSync(paths.part, ',\n{"torn":');
    fake.requests.length = 0;
    const e = env(fake);
    const summary = await runExportPlan(plan({ out, format: 'json', resume: true }), e);
    expect(summary).toMatchObject({ resumed: true, records: 55, resumedRecords: 30 });
    expect(JSON.parse(readFileSync(out, 'utf8'))).toEqual(records(55));
    // Only the pages after the checkpoint were asked for again.
    const pages = fake.requests.filter((r) => r.includes('/data/')).map((r) => Number(new URL(r, 'http://x').searchParams.get('page')));
    expect(pages[0]).toBe(4);
    expect(Math.min(...pages)).toBe(4);
  });

  it('--state across an interruption: the bookmark covers the records of both runs, and moves only at the end', async () => {
    const fake = fakeService({ c1: { records: records(130), syncId: 's1' } });
    const dir = tempDir();
    const out = join(dir, 'out.ndjson');
    const statePath = join(dir, 'state.json');
    const controller = new AbortController();
    const progress = (info: { records: number }) => info.records >= 80 && controller.abort('SIGINT');
    await expect(runExportPlan(plan({ out, statePath }), env(fake, { signal: controller.signal, progress }))).rejects.toThrow(/Stopped after 80 records/);
    expect(existsSync(statePath)).toBe(false);
    await runExportPlan(plan({ out, statePath, resume: true }), env(fake));
    expect(readFileSync(out, 'utf8')).toBe(ndjson(records(130)));
    const state = JSON.parse(readFileSync(statePath, 'utf8'));
    expect(state.bookmarks.things.c1).toMatchObject({ modifiedDate: '2026-01-01T00:00:59Z', ids: ['a-59', 'a-119'] });
    // The next run asks for modifiedDate>= the bookmark and leaves out what it already has.
    fake.requests.length = 0;
    const next = join(dir, 'next.ndjson');
    const summary = await runExportPlan(plan({ out: next, statePath }), env(fake));
    expect(decodeURIComponent(fake.requests.find((r) => r.includes('/data/'))!)).toContain('query=modifiedDate>=2026-01-01T00:00:59Z');
    expect(summary.records).toBe(128); // the fake ignores the query: everything but the two boundary records comes back
  });

  it('starts over when the part file is shorter than its checkpoint says', async () => {
    const fake = fakeService({ c1: { records: records(55), syncId: 's1' } });
    const out = join(tempDir(), 'out.ndjson');
    const controller = new AbortController();
    fake.beforePage = (page) => {
      if (page === 3) controller.abort('SIGINT');
    };
    await expect(runExportPlan(plan({ out }), env(fake, { signal: controller.signal }))).rejects.toThrow(/^Stopped/);
    truncateSync(partPaths(out).part, 5);
    fake.beforePage = undefined;
    const e = env(fake);
    const summary = await runExportPlan(plan({ out, resume: true }), e);
    expect(summary.resumed).toBe(false);
    expect(e.notes.join('\n')).toContain('shorter than its checkpoint');
    expect(readFileSync(out, 'utf8')).toBe(ndjson(records(55)));
  });

  it('--resume with nothing to resume starts a fresh export', async () => {
    const fake = fakeService({ c1: { records: records(5), syncId: 's1' } });
    const out = join(tempDir(), 'out.ndjson');
    const e = env(fake);
    await runExportPlan(plan({ out, resume: true }), e);
    expect(e.notes.join('\n')).toContain('No interrupted export');
    expect(readFileSync(out, 'utf8')).toBe(ndjson(records(5)));
  });

  it('an --all-companies export resumed after a company was skipped keeps the skip and the company list', async () => {
    const fake = fakeService({
      c1: { records: records(25, 'x'), syncId: 's1' },
      c2: { records: [], syncId: 's1', status: 409, error: 'not synced' },
      c3: { records: records(25, 'z'), syncId: 's1' },
    });
    const out = join(tempDir(), 'all.csv');
    const controller = new AbortController();
    fake.beforePage = (page, companyId) => {
      if (companyId === 'c3' && page === 2) controller.abort('SIGINT');
    };
    await expect(runExportPlan(plan({ out, allCompanies: true, companyId: undefined, format: 'csv' }), env(fake, { signal: controller.signal }))).rejects.toThrow(/^Stopped/);
    fake.sets.set('c4', { records: records(3, 'new'), syncId: 's1' }); // created after the export began: not part of it
    fake.beforePage = undefined;
    const summary = await runExportPlan(plan({ out, allCompanies: true, companyId: undefined, format: 'csv', resume: true }), env(fake));
    expect(summary).toMatchObject({ records: 50, companies: { total: 3, exported: 2, skipped: 1 }, skipped: [{ companyId: 'c2', reason: 'notSynced', status: 409 }] });
    const rows = readFileSync(out, 'utf8').trim().split('\n');
    expect(rows[0]).toBe('companyId,id,n,nested.x,modifiedDate,_extra');
    expect(rows.slice(1).map((r) => r.split(',').slice(0, 2).join(' '))).toEqual([
      ...records(25, 'x').map((r) => `c1 ${r.id}`), ...records(25, 'z').map((r) => `c3 ${r.id}`),
    ]);
  });
});

describe('export engine: stdout', () => {
  it('waits for a slow reader instead of buffering pages', async () => {
    const fake = fakeService({ c1: { records: records(2000), syncId: 's1' } });
    let maxBuffered = 0;
    const received: Buffer[] = [];
    const stream = new Writable({
      highWaterMark: 16 * 1024,
      write(chunk: Buffer, _enc, done) {
        received.push(chunk);
        maxBuffered = Math.max(maxBuffered, stream.writableLength);
        setTimeout(done, 1);
      },
    });
    await runExportPlan(plan({ pageSize: 100 }), env(fake, { stream }));
    await new Promise((resolve) => stream.end(resolve));
    expect(Buffer.concat(received).toString()).toBe(ndjson(records(2000)));
    const pageBytes = Buffer.byteLength(ndjson(records(100)));
    // A stream buffers up to its highWaterMark, and ferry adds at most one page on top before it waits.
    expect(maxBuffered).toBeLessThanOrEqual(16 * 1024 + pageBytes);
  });

  it('stops with an error when the reader goes away (EPIPE)', async () => {
    const fake = fakeService({ c1: { records: records(500), syncId: 's1' } });
    const stream = new Writable({
      highWaterMark: 1024,
      write(_chunk, _enc, done) {
        done(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
      },
    });
    stream.on('error', () => undefined);
    await expect(runExportPlan(plan({}), env(fake, { stream }))).rejects.toThrow(/EPIPE/);
  });
});
