// A company's sync is one job (sync/job.ts), on both stores: one claim takes all its due
// pulls, their writes share a few transactions (job-writes.ts), and each data type keeps its
// own outcome: one that fails, or that another worker took over, ends only itself, while
// the others complete and report their events as they would alone.
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { isoSeconds } from '../../src/lib/clock.js';
import type { PlatformPage } from '../../src/service/adapters/adapter.js';
import { FERRY_EVENTS } from '../../src/service/events/catalogue.js';
import { createSealer } from '../../src/service/secrets.js';
import type { AsyncStore } from '../../src/service/store/async-store.js';
import type { SyncDeps } from '../../src/service/sync/deps.js';
import { queueAll } from '../../src/service/sync/enqueue.js';
import { SyncLoop } from '../../src/service/sync/loop.js';
import { leaseUntil } from '../../src/service/sync/pull-lease.js';
import { syncOnce } from '../../src/service/sync/sync-once.js';
import { describePostgres } from '../helpers/postgres.js';
import { ReadOnlyPlatform } from '../helpers/read-only-platform.js';
import { twoPgWorkers, twoSqliteWorkers, type OpenTwoWorkers } from './two-workers-support.js';
import { FakeClock, waitFor } from '../helpers/sync.js';

const T0 = '2026-01-01T00:00:00Z';
const T1 = '2026-01-02T00:00:00Z';
const INVOICES = 30;
const sealer = createSealer(randomBytes(32));

/**
 * INVOICES invoices in pages (the cursor is the next offset); bills always fail; every
 * other data type is empty. A fetch of a data type in `held` waits until it is let go.
 */
class Platform extends ReadOnlyPlatform {
  /** The last page of invoices gives the first invoice again, changed (as offset paging does when a record moves). */
  repeat = false;
  readonly held = new Map<string, { reached: () => void; go: Promise<void>; release: () => void }>();

  hold(dataType: string): { reached: Promise<void>; release: () => void } {
    let reached!: () => void;
    let release!: () => void;
    const arrived = new Promise<void>((resolve) => (reached = resolve));
    const go = new Promise<void>((resolve) => (release = resolve));
    this.held.set(dataType, { reached, go, release });
    return { reached: arrived, release };
  }

  async fetchPage(_key: string, _tokens: unknown, dataType: string, cursor: string | undefined, pageSize: number): Promise<PlatformPage> {
    const hold = this.held.get(dataType);
    if (hold) {
      hold.reached();
      await hold.go;
    }
    if (dataType === 'bills') throw new Error('the bills endpoint broke');
    if (dataType !== 'invoices') return { records: [] };
    const start = Number(cursor ?? 0);
    const end = Math.min(INVOICES, start + pageSize);
    const records: Array<Record<string, unknown>> = Array.from({ length: end - start }, (_, i) => ({ id: `inv-${start + i}`, modifiedDate: T0 }));
    if (this.repeat && end === INVOICES) records.push({ id: 'inv-0', modifiedDate: T1 });
    return { records, total: INVOICES, ...(end < INVOICES ? { next: String(end) } : {}) };
  }
}

type Open = OpenTwoWorkers;
const openSqlite: Open = twoSqliteWorkers('ferry-jobs-');
const openPg: Open = twoPgWorkers;

const TYPES = ['invoices', 'bills', 'customers', 'suppliers'];

/** A Linked company with tokens, its TYPES queued as POST /data/all queues them. */
async function company(store: AsyncStore, clock: FakeClock): Promise<{ companyId: string; pulls: Map<string, string> }> {
  const client = await store.insertClient({ name: 'Jobs Ltd', plan: 'Paid', created: T0 });
  const made = await store.insertCompany(client.id, { name: 'Jobbed', tags: {} }, T0);
  const connection = await store.insertConnection(made.id, 'gbol', 'xero', T0);
  await store.markLinked(connection.id, null);
  await store.storeTokens(connection.id, sealer.seal({ accessToken: 'a', refreshToken: 'r' }, connection.id), T0);
  const linked = (await store.getConnectionById(connection.id))!;
  const queued = await queueAll(store, clock, [linked]);
  const pulls = new Map(queued.filter((p) => TYPES.includes(p.data_type)).map((p) => [p.data_type, p.id]));
  // Only TYPES: the others of the platform end now, as if synced before.
  for (const pull of queued) if (!TYPES.includes(pull.data_type)) await store.updatePull(pull.id, { status: 'Complete', progress: 100, completed: T0 });
  return { companyId: made.id, pulls };
}

/** The store, its transactions counted. */
function counting(store: AsyncStore): { store: AsyncStore; transactions: () => number } {
  let count = 0;
  return { store: { ...store, transaction: (work) => ((count += 1), store.transaction(work)) }, transactions: () => count };
}

/** The store, the paths its transactions were asked to remember counted. */
function countingFields(store: AsyncStore): { store: AsyncStore; paths: () => number } {
  let count = 0;
  return {
    store: {
      ...store,
      // A proxy: PostgreSQL's transaction store keeps its methods on its prototype.
      transaction: (work) => store.transaction((tx) => work(new Proxy(tx, {
        get: (target, key) => (key === 'rememberAllFields'
          ? (fields: Parameters<AsyncStore['rememberAllFields']>[0]) => {
            for (const paths of fields.values()) count += paths.size;
            return target.rememberAllFields(fields);
          }
          : Reflect.get(target, key, target) as unknown),
      }))),
    },
    paths: () => count,
  };
}

function scenarios(name: string, open: Open): void {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  const setup = async () => {
    const opened = await open();
    cleanups.push(() => opened.close());
    return { stores: opened.stores, clock: new FakeClock(Date.parse(T0)) };
  };
  const worker = (store: AsyncStore, clock: FakeClock, platform: Platform): SyncDeps => ({ store, clock, sealer, adapter: platform, pageSize: 10, concurrency: 1 });

  it(`${name}: one claim runs every due data type of the company, in fewer transactions than one per write, each data type ending on its own`, async () => {
    const { stores: [store], clock } = await setup();
    const { companyId, pulls } = await company(store, clock);
    const counted = counting(store);
    const pass = await syncOnce(worker(counted.store, clock, new Platform()));
    expect(pass.pulls).toBe(TYPES.length);
    const ended = Object.fromEntries(await Promise.all(TYPES.map(async (type) => [type, (await store.getPull(pulls.get(type)!))!])));
    expect(ended.invoices).toMatchObject({ status: 'Complete', fetched: INVOICES, progress: 100, lease_until: null });
    expect(ended.bills).toMatchObject({ status: 'InternalError', lease_until: null });
    expect(ended.customers).toMatchObject({ status: 'Complete', fetched: 0, lease_until: null });
    expect(ended.suppliers).toMatchObject({ status: 'Complete', fetched: 0, lease_until: null });
    // Alone, each pull would have committed its own pages and ending: 3 + 1 + 1 + 1.
    expect(counted.transactions()).toBeLessThan(6);
    expect(await store.countRecords(companyId, 'invoices', ended.invoices.generation)).toBe(INVOICES);
    // The events a pull running alone records: one per data type, and read.completed once.
    const client = (await store.getCompany(companyId))!.client_id;
    const events = (await store.eventsAfter(client, 0, 1000)).map((e) => e.event_type);
    expect(events.filter((type) => type === FERRY_EVENTS.dataTypeReadCompleted)).toHaveLength(3);
    expect(events.filter((type) => type === FERRY_EVENTS.dataTypeReadFailed)).toHaveLength(1);
    expect(events.filter((type) => type === 'read.completed')).toHaveLength(1);
  });

  it(`${name}: a job ending claims the next in its last transaction, so the loop claims once for three companies run one after another`, async () => {
    const { stores: [store], clock } = await setup();
    const companies: Array<{ companyId: string; pulls: Map<string, string> }> = [];
    for (let i = 0; i < 3; i++) companies.push(await company(store, clock));
    // The loop's own claims, counted; a claim riding in a job's transaction goes through that transaction's store.
    let claims = 0;
    const counted: AsyncStore = { ...store, claimJobs: (...args) => ((claims += 1), store.claimJobs(...args)) };
    // Idle for longer than the test: only a job's end (or the stop) turns the loop again.
    const loop = new SyncLoop(worker(counted, clock, new Platform()), 60_000);
    loop.start();
    try {
      await waitFor('every company\'s pulls ended', async () => {
        const rows = await Promise.all(companies.flatMap(({ pulls }) => [...pulls.values()].map(async (id) => (await store.getPull(id))!)));
        return rows.every((pull) => pull.lease_until === null && ['Complete', 'InternalError'].includes(pull.status));
      });
    } finally {
      await loop.stop();
    }
    // The first job claimed by the loop, the second and third each by the job before; at
    // most one more claim by the loop, which found nothing (one a job would be four).
    expect(claims).toBeLessThanOrEqual(2);
    for (const { pulls } of companies) {
      expect(await store.getPull(pulls.get('invoices')!)).toMatchObject({ status: 'Complete', fetched: INVOICES });
      expect(await store.getPull(pulls.get('bills')!)).toMatchObject({ status: 'InternalError' });
    }
  });

  it(`${name}: an id given again on a later page is one record: in the place of the first, with the values given last`, async () => {
    const { stores: [store], clock } = await setup();
    const { companyId, pulls } = await company(store, clock);
    const platform = new Platform();
    platform.repeat = true;
    expect((await syncOnce(worker(store, clock, platform))).pulls).toBe(TYPES.length);
    const invoices = (await store.getPull(pulls.get('invoices')!))!;
    expect(invoices).toMatchObject({ status: 'Complete', fetched: INVOICES + 1, lease_until: null });
    expect(await store.countRecords(companyId, 'invoices', invoices.generation)).toBe(INVOICES);
    expect(JSON.parse((await store.getRecord(companyId, 'invoices', invoices.generation, 'inv-0'))!)).toMatchObject({ modifiedDate: T1 });
    const first = await store.listRecords(companyId, 'invoices', invoices.generation, { page: 1, pageSize: 1 });
    expect(JSON.parse(Buffer.from(first.rows[0]!.data).toString('utf8'))).toMatchObject({ id: 'inv-0', modifiedDate: T1 });
  });

  it(`${name}: a first page whose generation already holds records is written again as an upsert: one record an id, the pull Complete`, async () => {
    const { stores: [store], clock } = await setup();
    const { companyId, pulls } = await company(store, clock);
    const queued = (await store.getPull(pulls.get('invoices')!))!;
    // Nothing was committed by this pull (fetched 0), so its first page is taken as the
    // generation's first; a record of the generation is there all the same.
    await store.writeRecords([{ companyId, dataType: 'invoices', generation: queued.generation, connectionId: queued.connection_id,
      rows: [{ id: 'inv-3', data: '{"id":"inv-3","stale":true}' }] }]);
    expect((await syncOnce(worker(store, clock, new Platform()))).pulls).toBe(TYPES.length);
    expect(await store.getPull(queued.id)).toMatchObject({ status: 'Complete', fetched: INVOICES, lease_until: null });
    expect(await store.countRecords(companyId, 'invoices', queued.generation)).toBe(INVOICES);
    expect(JSON.parse((await store.getRecord(companyId, 'invoices', queued.generation, 'inv-3'))!)).toEqual({ id: 'inv-3', modifiedDate: T0 });
  });

  it(`${name}: a path the store holds already is not sent again: the second company's job remembers none`, async () => {
    const { stores: [store], clock } = await setup();
    const first = await company(store, clock);
    const counted = countingFields(store);
    await syncOnce(worker(counted.store, clock, new Platform()));
    const sent = counted.paths();
    expect(sent).toBeGreaterThan(0);
    expect(Object.fromEntries(await store.recordFields('invoices'))).toEqual({ id: 'string', modifiedDate: 'date' });
    const second = await company(store, clock);
    await syncOnce(worker(counted.store, clock, new Platform()));
    expect(counted.paths()).toBe(sent);
    for (const { companyId, pulls } of [first, second]) {
      const invoices = (await store.getPull(pulls.get('invoices')!))!;
      expect(invoices).toMatchObject({ status: 'Complete', fetched: INVOICES });
      const page = await store.runPage(await store.recordsPage(companyId, 'invoices', invoices.generation, { page: 1, pageSize: 5, query: 'id=inv-7' }));
      expect(page.rows).toHaveLength(1);
    }
  });

  it(`${name}: a data type another worker took over rolls back only itself: the job's other writes are tried again one by one and commit`, async () => {
    const { stores: [mine, theirs], clock } = await setup();
    const { pulls } = await company(mine, clock);
    const platform = new Platform();
    const customers = platform.hold('customers');
    const pass = syncOnce(worker(mine, clock, platform));
    await customers.reached;
    // This worker is paused past its lease; another takes one of its pulls over.
    clock.advance(31);
    const taken = leaseUntil(clock, 30);
    expect(await theirs.leasePull(pulls.get('customers')!, isoSeconds(clock.now()), taken)).toBe(true);
    customers.release();
    expect((await pass).pulls).toBe(TYPES.length);
    const status = async (type: string) => (await theirs.getPull(pulls.get(type)!))!;
    expect(await status('customers')).toMatchObject({ status: 'Fetching', lease_until: taken });
    expect(await status('invoices')).toMatchObject({ status: 'Complete', fetched: INVOICES });
    expect(await status('suppliers')).toMatchObject({ status: 'Complete' });
    expect(await status('bills')).toMatchObject({ status: 'InternalError' });
    // Once that lease runs out too, a worker resumes it as a job of its own, and it completes.
    clock.advance(31);
    expect((await syncOnce(worker(theirs, clock, platform))).pulls).toBe(1);
    expect(await status('customers')).toMatchObject({ status: 'Complete', lease_until: null });
  });
}

if (process.env.FERRY_TEST_STORE !== 'postgres') describe('jobs on SQLite', () => scenarios('SQLite', openSqlite));
describePostgres('jobs on PostgreSQL', () => scenarios('PostgreSQL', openPg));
