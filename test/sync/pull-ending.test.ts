// What a pull's end records, written in the one transaction of its last page: the pull's
// final state, the published generation, the last sync, and the event naming the records
// the generation holds. The count comes from the last page itself when it holds every
// record (a repeated id counted once), and from the database when earlier pages, this
// worker's or a previous holder's, wrote some. On SQLite, and on PostgreSQL when the
// 'postgres' project runs the file.
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isoSeconds } from '../../src/lib/clock.js';
import { FERRY_EVENTS } from '../../src/service/events/catalogue.js';
import { PlatformFetchError, type PlatformAdapter, type PlatformPage } from '../../src/service/adapters/adapter.js';
import type { Tokens } from '../../src/service/adapters/verifier.js';
import { ReadOnlyPlatform } from '../helpers/read-only-platform.js';
import { createSealer } from '../../src/service/secrets.js';
import { sqliteAsyncStore } from '../../src/service/store/sqlite/async-store.js';
import type { AsyncStore } from '../../src/service/store/async-store.js';
import { openDatabase } from '../../src/service/store/sqlite/db.js';
import { createPgStore } from '../../src/service/store/pg/pg-store.js';
import { openPostgres } from '../../src/service/store/pg/pool.js';
import type { SyncDeps } from '../../src/service/sync/deps.js';
import { queuePull } from '../../src/service/sync/enqueue.js';
import { syncOnce } from '../../src/service/sync/sync-once.js';
import { describePostgres, freshDatabase } from '../helpers/postgres.js';
import { tempDir } from '../helpers/service.js';
import { FakeClock } from '../helpers/sync.js';

const T0 = '2026-01-01T00:00:00Z';
const sealer = createSealer(randomBytes(32));

type Open = () => Promise<{ store: AsyncStore; close(): Promise<void> }>;

const openSqlite: Open = async () => {
  const dir = tempDir('ferry-pull-ending-');
  const store = sqliteAsyncStore(openDatabase(join(dir, 'ferry.db')));
  return {
    store,
    async close() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
};

const openPg: Open = async () => {
  const store = createPgStore(await openPostgres(await freshDatabase(), { max: 4 }));
  return { store, close: () => store.close() };
};

/** A platform serving the given pages of invoices (ids as given, repeats included); the cursor is the next page's index. */
class PagedPlatform extends ReadOnlyPlatform {
  /** From this page on, fetches fail (as a platform that went down), so the pull waits to be retried. */
  failFrom = Infinity;

  constructor(private readonly pages: string[][]) {
    super();
  }

  async fetchPage(_key: string, _tokens: Tokens, _type: string, cursor: string | undefined): Promise<PlatformPage> {
    const index = Number(cursor ?? 0);
    if (index >= this.failFrom) throw new PlatformFetchError('The platform is down for a while.');
    const records = this.pages[index]!.map((id) => ({ id, invoiceNumber: `N-${id}`, modifiedDate: T0 }));
    return { records, ...(index + 1 < this.pages.length ? { next: String(index + 1) } : {}) };
  }
}

function scenarios(open: Open): void {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /** A Linked connection with tokens, its invoices queued; then the pull run by a worker reading `pages`. */
  async function sync(pages: string[][]) {
    const opened = await open();
    cleanups.push(() => opened.close());
    const { store } = opened;
    const clock = new FakeClock(Date.parse(T0));
    const client = await store.insertClient({ name: 'Ending Ltd', plan: 'Paid', created: T0 });
    const company = await store.insertCompany(client.id, { name: 'Ending', tags: {} }, T0);
    const made = await store.insertConnection(company.id, 'gbol', 'xero', T0);
    await store.markLinked(made.id, null);
    await store.storeTokens(made.id, sealer.seal({ accessToken: 'access-0', refreshToken: 'refresh-0' }, made.id), T0);
    const pull = await queuePull(store, clock, (await store.getConnectionById(made.id))!, 'invoices');
    const worker = (adapter: PlatformAdapter, extra: Partial<SyncDeps> = {}): SyncDeps => ({ store, clock, sealer, adapter, ...extra });
    /** The event of the pull's end, the pull and the data set as stored, the last syncs. */
    const outcome = async () => {
      const events = await store.companyEventsAfter(company.id, FERRY_EVENTS.dataTypeReadCompleted, 0);
      const ended = (await store.getPull(pull.id))!;
      return {
        payloads: events.map((row) => (JSON.parse(row.body) as { payload: Record<string, unknown> }).payload),
        pull: ended,
        stored: await store.countRecords(company.id, 'invoices', ended.generation),
        dataset: await store.getDataset(company.id, 'invoices'),
        lastSync: [(await store.getCompany(company.id))?.last_sync, (await store.getConnectionById(made.id))?.last_sync],
        readCompleted: (await store.companyEventsAfter(company.id, 'read.completed', 0)).length,
      };
    };
    return { store, clock, pull, worker, outcome, platform: new PagedPlatform(pages) };
  }

  it('an empty data set: Complete, published, the last sync recorded and 0 records reported', async () => {
    const { worker, outcome, platform, pull, clock } = await sync([[]]);
    expect((await syncOnce(worker(platform))).pulls).toBe(1);
    const result = await outcome();
    const at = isoSeconds(clock.now());
    expect(result.pull).toMatchObject({ status: 'Complete', progress: 100, fetched: 0, cursor: null, lease_until: null, completed: at, attempts: 0 });
    expect(result.payloads).toEqual([expect.objectContaining({ pullOperationId: pull.id, status: 'Complete', records: 0, fetched: 0, completed: at })]);
    expect(result.dataset).toMatchObject({ visible_generation: pull.generation, latest_successful_sync_id: pull.id, last_successful_sync: at });
    expect(result.lastSync).toEqual([at, at]);
    expect(result.readCompleted).toBe(1);
  });

  it('one page with an id twice: the records stored, each once, are the records reported', async () => {
    const { worker, outcome, platform } = await sync([['a', 'b', 'a', 'c']]);
    await syncOnce(worker(platform));
    const result = await outcome();
    expect(result.stored).toBe(3);
    expect(result.payloads).toEqual([expect.objectContaining({ status: 'Complete', records: 3, fetched: 4 })]);
    expect(result.pull).toMatchObject({ status: 'Complete', fetched: 4, validation: expect.any(String) });
  });

  it('several pages, one id on two of them: counted where they are stored', async () => {
    const { worker, outcome, platform } = await sync([['a', 'b'], [], ['b', 'c', 'd']]);
    await syncOnce(worker(platform));
    const result = await outcome();
    expect(result.stored).toBe(4);
    expect(result.payloads).toEqual([expect.objectContaining({ status: 'Complete', records: 4, fetched: 5 })]);
  });

  it('a pull resumed from its cursor by another worker: its last page counts with those written before', async () => {
    const { store, worker, outcome, platform, pull, clock } = await sync([['a', 'b'], ['c', 'd', 'e']]);
    // The first worker writes the first page, then its platform fails until the pull waits to retry.
    platform.failFrom = 1;
    await syncOnce(worker(platform));
    expect(await store.getPull(pull.id)).toMatchObject({ status: 'Fetching', fetched: 2, cursor: '1', attempts: 1 });
    clock.advance(60);
    await syncOnce(worker(new PagedPlatform([['a', 'b'], ['c', 'd', 'e']])));
    const result = await outcome();
    expect(result.stored).toBe(5);
    expect(result.payloads).toEqual([expect.objectContaining({ status: 'Complete', records: 5, fetched: 5 })]);
  });
}

// The 'postgres' project of vitest.config.ts runs this file again: each half runs once.
const onPostgres = process.env.FERRY_TEST_STORE === 'postgres';

if (!onPostgres) describe('a pull\'s end on SQLite', () => scenarios(openSqlite));

if (onPostgres) describePostgres('a pull\'s end on PostgreSQL', () => scenarios(openPg));
