// Pull leases with several workers on one database: on SQLite two connections to one file
// (as the request and worker threads have), on PostgreSQL two pools (as two processes).
// The platform is a fake whose pages a test can hold, so a worker can be "paused" mid-pull
// at a chosen page. A worker paused past its lease loses the pull to another, which goes on
// from the cursor; the late page of the first changes nothing, and the pull ends with every
// record once. A slow page never loses the lease: the heartbeat renews it. (The embedded
// service frees the leases a killed process left before its threads start:
// sync-threads.test.ts.)
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { isoSeconds } from '../../src/lib/clock.js';
import type { PlatformAdapter, PlatformPage } from '../../src/service/adapters/adapter.js';
import type { Tokens } from '../../src/service/adapters/verifier.js';
import { ReadOnlyPlatform } from '../helpers/read-only-platform.js';
import { FERRY_EVENTS } from '../../src/service/events/catalogue.js';
import { createSealer } from '../../src/service/secrets.js';
import type { AsyncStore } from '../../src/service/store/async-store.js';
import type { PullRow } from '../../src/service/store/pulls.js';
import type { SyncDeps } from '../../src/service/sync/deps.js';
import { queuePull } from '../../src/service/sync/enqueue.js';
import { SyncLoop } from '../../src/service/sync/loop.js';
import { LeaseHeartbeat, leaseUntil } from '../../src/service/sync/pull-lease.js';
import { syncOnce } from '../../src/service/sync/sync-once.js';
import { describePostgres } from '../helpers/postgres.js';
import { twoPgWorkers, twoSqliteWorkers, type OpenTwoWorkers } from './two-workers-support.js';
import { FakeClock, waitFor } from '../helpers/sync.js';

const RECORDS = 30;
const T0 = '2026-01-01T00:00:00Z';
const sealer = createSealer(randomBytes(32));

type Open = OpenTwoWorkers;
const openSqlite: Open = twoSqliteWorkers('ferry-leases-');
const openPg: Open = twoPgWorkers;

/** A page fetch the test holds until it opens it. */
class Gate {
  reached!: Promise<void>;
  private arrive!: () => void;
  private release!: () => void;
  private readonly released = new Promise<void>((resolve) => (this.release = resolve));

  constructor() {
    this.reached = new Promise<void>((resolve) => (this.arrive = resolve));
  }

  async pass(): Promise<void> {
    this.arrive();
    await this.released;
  }

  open(): void {
    this.release();
  }
}

/** A platform serving RECORDS invoices, inv-0… in order; its cursor is the offset of the next page. */
class FakePlatform extends ReadOnlyPlatform {
  private readonly gates = new Map<number, Gate>();
  refreshes = 0;

  constructor(private readonly refresh = false) {
    super();
  }

  /** Holds the fetch of the page that starts at `offset`. */
  holdAt(offset: number): Gate {
    const gate = new Gate();
    this.gates.set(offset, gate);
    return gate;
  }

  override needsRefresh(): boolean {
    return this.refresh;
  }

  override async ensureFresh(_key: string, tokens: Tokens): Promise<Tokens> {
    this.refreshes += 1;
    return { ...tokens, accessToken: `access-${this.refreshes}` };
  }

  async fetchPage(_key: string, _tokens: Tokens, _type: string, cursor: string | undefined, pageSize: number): Promise<PlatformPage> {
    const start = Number(cursor ?? 0);
    await this.gates.get(start)?.pass();
    const end = Math.min(RECORDS, start + pageSize);
    const records = Array.from({ length: end - start }, (_, i) => ({ id: `inv-${start + i}`, invoiceNumber: `N${start + i}`, modifiedDate: T0 }));
    return { records, total: RECORDS, ...(end < RECORDS ? { next: String(end) } : {}) };
  }
}

/** A Linked connection with tokens; its invoices (and `more` data types) queued. */
async function queued(store: AsyncStore, clock: FakeClock, more: string[] = []): Promise<{ companyId: string; connectionId: string; pulls: PullRow[] }> {
  const client = await store.insertClient({ name: 'Lease Ltd', plan: 'Paid', created: T0 });
  const company = await store.insertCompany(client.id, { name: 'Leased', tags: {} }, T0);
  const made = await store.insertConnection(company.id, 'gbol', 'xero', T0);
  await store.markLinked(made.id, null);
  await store.storeTokens(made.id, sealer.seal({ accessToken: 'access-0', refreshToken: 'refresh-0' }, made.id), T0);
  const connection = (await store.getConnectionById(made.id))!;
  const pulls: PullRow[] = [];
  for (const dataType of ['invoices', ...more]) pulls.push(await queuePull(store, clock, connection, dataType));
  return { companyId: company.id, connectionId: made.id, pulls };
}

const isoNow = (clock: FakeClock) => isoSeconds(clock.now());

const worker = (store: AsyncStore, clock: FakeClock, adapter: PlatformAdapter, extra: Partial<SyncDeps> = {}): SyncDeps => ({
  store, clock, sealer, adapter, pageSize: 10, ...extra,
});

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
  const pullOf = async (store: AsyncStore, id: string) => (await store.getPull(id))!;

  it(`${name}: a worker paused past its lease loses the pull; its late page changes nothing, and the new holder ends it with every record once`, async () => {
    const { stores: [first, second], clock } = await setup();
    const { companyId, pulls: [pull] } = await queued(first, clock);
    const id = pull!.id;
    // Leases far longer than the test: no heartbeat beats in it, as if the first worker were frozen.
    const platformA = new FakePlatform();
    const heldA = platformA.holdAt(10);
    const passA = syncOnce(worker(first, clock, platformA, { leaseSeconds: 600 }));
    await heldA.reached;
    await waitFor('the first page written', async () => (await pullOf(second, id)).cursor === '10');
    expect((await syncOnce(worker(second, clock, new FakePlatform(), { leaseSeconds: 600 }))).pulls).toBe(0);

    clock.advance(601);
    // The second worker reads pages of 5: its writes and the first's differ.
    const platformB = new FakePlatform();
    const heldB = platformB.holdAt(15);
    const passB = syncOnce(worker(second, clock, platformB, { leaseSeconds: 600, pageSize: 5 }));
    await heldB.reached;
    await waitFor('the second worker\'s page from the cursor', async () => (await pullOf(second, id)).cursor === '15');
    const taken = await pullOf(second, id);
    expect(taken).toMatchObject({ status: 'Fetching', fetched: 15, lease_until: leaseUntil(clock, 600) });

    heldA.open();
    expect((await passA).pulls).toBe(1);
    expect(await pullOf(second, id)).toEqual(taken);

    heldB.open();
    expect((await passB).pulls).toBe(1);
    const done = await pullOf(first, id);
    expect(done).toMatchObject({ status: 'Complete', fetched: RECORDS, progress: 100, cursor: null, lease_until: null });
    expect(await first.countRecords(companyId, 'invoices', done.generation)).toBe(RECORDS);
    expect((await first.getDataset(companyId, 'invoices'))?.visible_generation).toBe(done.generation);
    expect(await first.companyEventsAfter(companyId, FERRY_EVENTS.dataTypeReadCompleted, 0)).toHaveLength(1);
  });

  it(`${name}: the heartbeat keeps a slow page's lease, so no other worker takes the pull`, async () => {
    const { stores: [first, second], clock } = await setup();
    const { companyId, pulls: [pull] } = await queued(first, clock);
    const id = pull!.id;
    const platform = new FakePlatform();
    const held = platform.holdAt(10);
    // A 3 s lease, renewed every second.
    const pass = syncOnce(worker(first, clock, platform, { leaseSeconds: 3 }));
    await held.reached;
    const claimed = (await pullOf(second, id)).lease_until!;
    expect(claimed).toBe(leaseUntil(clock, 3));
    clock.advance(2);
    await waitFor('a renewal', async () => (await pullOf(second, id)).lease_until! > claimed, 10_000, 20);
    clock.advance(2);
    expect(isoNow(clock) > claimed).toBe(true);
    expect((await syncOnce(worker(second, clock, new FakePlatform(), { leaseSeconds: 3 }))).pulls).toBe(0);
    held.open();
    expect((await pass).pulls).toBe(1);
    expect(await pullOf(second, id)).toMatchObject({ status: 'Complete', lease_until: null, fetched: RECORDS });
    expect(await first.countRecords(companyId, 'invoices', pull!.generation)).toBe(RECORDS);
  });

  it(`${name}: the heartbeat renews a job's pulls in one statement, only those this worker still holds, and stops with the last job`, async () => {
    const { stores: [first, second], clock } = await setup();
    const { pulls } = await queued(first, clock, ['customers', 'payments']);
    const [mine, takenOver, ended] = pulls.map((p) => p.id) as [string, string, string];
    const claimedUntil = leaseUntil(clock, 30);
    for (const id of [mine, takenOver, ended]) expect(await first.leasePull(id, isoNow(clock), claimedUntil)).toBe(true);
    const heartbeat = new LeaseHeartbeat({ store: first, clock }, 30);
    const job = heartbeat.hold(claimedUntil);
    const held = [mine, takenOver, ended].map((id) => job.pull(id));
    expect(heartbeat.beating).toBe(true);

    // Another worker takes one over (its lease ran out meanwhile); another pull ended.
    clock.advance(31);
    expect(await second.leasePull(takenOver, isoNow(clock), leaseUntil(clock, 30))).toBe(true);
    await second.updatePull(ended, { status: 'Complete', completed: isoNow(clock), lease_until: null });
    const theirs = (await pullOf(second, takenOver)).lease_until;
    clock.advance(5);
    await heartbeat.beat();
    expect((await pullOf(second, mine)).lease_until).toBe(leaseUntil(clock, 30));
    expect((await pullOf(second, takenOver)).lease_until).toBe(theirs);
    expect((await pullOf(second, ended)).lease_until).toBeNull();
    expect(held.map((h) => h.lost)).toEqual([false, true, true]);

    expect([...job.open.keys()]).toEqual([mine]);
    heartbeat.drop(job);
    expect(heartbeat.beating).toBe(false);
  });

  it(`${name}: a refresh lease left by a killed worker holds a pull's refresh only until it runs out`, async () => {
    const { stores: [first, second], clock } = await setup();
    const { connectionId, pulls: [pull] } = await queued(first, clock);
    // A worker took the refresh lease and was killed: its LOCK_MS (30 s) ends in 1.5 s.
    const start = Date.now();
    expect(await second.takeRefreshLease(connectionId, start, start + 1_500)).toBe(true);
    const platform = new FakePlatform(true);
    expect((await syncOnce(worker(first, clock, platform))).pulls).toBe(1);
    expect(Date.now() - start).toBeGreaterThanOrEqual(1_400);
    expect(platform.refreshes).toBe(1);
    expect(await pullOf(second, pull!.id)).toMatchObject({ status: 'Complete', fetched: RECORDS });
    // Freed by the refresh that ran: the next takes it at once.
    expect(await second.takeRefreshLease(connectionId, Date.now(), Date.now() + 1_000)).toBe(true);
  });
}

// The 'postgres' project of vitest.config.ts runs this file again: each half runs once.
const onPostgres = process.env.FERRY_TEST_STORE === 'postgres';

if (!onPostgres) describe('pull leases on SQLite', () => {
  scenarios('SQLite', openSqlite);

  it('refuses a lease the heartbeat could not keep ahead of', () => {
    const deps = worker({} as AsyncStore, new FakeClock(), new FakePlatform());
    expect(() => new SyncLoop({ ...deps, leaseSeconds: 2 })).toThrow(RangeError);
    expect(() => new SyncLoop({ ...deps, leaseSeconds: 4.5 })).toThrow(RangeError);
    expect(() => new SyncLoop({ ...deps, leaseSeconds: 3 })).not.toThrow();
  });
});

if (onPostgres) describePostgres('pull leases on PostgreSQL', () => {
  scenarios('PostgreSQL', openPg);
});
