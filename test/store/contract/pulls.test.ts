// The pull group: the sync queue, its leases and its pages answer on PostgreSQL as on SQLite.
import { describe, expect, it } from 'vitest';
import type { AsyncStore } from '../../../src/service/store/async-store.js';
import type { PagePlan } from '../../../src/service/store/paging.js';
import { runPgPagePlan } from '../../../src/service/store/pg/paging.js';
import { jobMethods, newQueueFloor } from '../../../src/service/store/pg/jobs.js';
import { pullMethods } from '../../../src/service/store/pg/pulls.js';
import type { Queryable } from '../../../src/service/store/pg/query.js';
import type { PullJob, PullRow } from '../../../src/service/store/pulls.js';
import { describePostgres } from '../../helpers/postgres.js';
import { makeOwners, outcome, pgOwners, relabel, secondPool, type Owners } from './owners.js';
import { freshPostgres, onBoth } from './stores.js';

const methods = (db: Queryable) => ({ ...pullMethods(db), ...jobMethods(db, newQueueFloor()), ...pgOwners(db), runPage: <Row>(plan: PagePlan) => runPgPagePlan<Row>(db, plan) });
type Store = ReturnType<typeof methods> & Pick<AsyncStore, 'runPage'>;

const T0 = '2024-03-01T10:00:00Z';
const at = (minutes: number) => new Date(Date.parse(T0) + minutes * 60_000).toISOString().replace('.000Z', 'Z');

/** Queued pulls of both companies, a finished one, and one per other open status. */
async function seedPulls(store: Store, o: Owners): Promise<PullRow[]> {
  const made: PullRow[] = [];
  const add = async (id: string, companyId: string, connectionId: string, dataType: string, status: PullRow['status'], minute: number, statusDescription?: string) =>
    made.push(await store.insertPull({ id, companyId, connectionId, dataType, status, generation: minute + 1, requested: at(minute), statusDescription }));
  await add('p1', o.a, o.a1, 'invoices', 'Queued', 0);
  await add('p2', o.a, o.a1, 'bills', 'Queued', 1, 'waiting');
  await add('p3', o.a, o.a2, 'invoices', 'Queued', 2);
  await add('p4', o.a, o.a1, 'customers', 'Complete', 3, 'done');
  await add('p5', o.b, o.b1, 'invoices', 'Queued', 4);
  await add('p6', o.a, o.a1, 'suppliers', 'NotSupported', 5);
  await add('p7', o.a, o.a2, 'payments', 'Initial', 6);
  return made;
}

describePostgres('pull store contract', () => {
  it('inserts, reads and finds the open pulls of a company', async () => {
    const { sqlite, postgres } = await onBoth(methods, async (store) => {
      const o = await makeOwners(store);
      const inserted = await seedPulls(store as Store, o);
      const answers = {
        inserted,
        got: await store.getPull('p4'),
        missing: await store.getPull('nope'),
        duplicate: await outcome(() => store.insertPull({ id: 'p1', companyId: o.a, connectionId: o.a1, dataType: 'x', status: 'Queued', generation: 1, requested: T0 })),
        openA: await store.openPulls(o.a),
        openB: await store.openPulls(o.b),
        openNone: await store.openPulls('no-company'),
        openInvoices: await store.openPull(o.a, 'invoices'),
        openCustomers: await store.openPull(o.a, 'customers'),
        latestInvoices: await store.latestPullConnectionId(o.a, 'invoices'),
        latestCustomers: await store.latestPullConnectionId(o.a, 'customers'),
        latestMissing: await store.latestPullConnectionId(o.b, 'bills'),
      };
      return relabel(answers, o.names);
    });
    expect(postgres).toEqual(sqlite);
    expect(sqlite.openA.get('invoices')?.id).toBe('p1');
    expect(sqlite.duplicate).toBe('rejected');
  });

  it('updates pulls field by field', async () => {
    const { sqlite, postgres } = await onBoth(methods, async (store) => {
      const o = await makeOwners(store);
      await seedPulls(store as Store, o);
      await store.updatePull('p1', {});
      await store.updatePull('p1', { status: 'Mapping', cursor: 'page-3', fetched: 250, progress: 40, attempts: 2, not_before: at(30), error_message: 'slow' });
      await store.updatePull('p2', { status: 'Complete', completed: at(9), progress: 100, validation: '{"errors":[],"warnings":[{"w":1}]}', lease_until: null });
      await store.updatePull('missing', { status: 'Complete' });
      return relabel([await store.getPull('p1'), await store.getPull('p2'), await store.openPulls(o.a)], o.names);
    });
    expect(postgres).toEqual(sqlite);
  });

  it('claims jobs oldest first, a company\'s claimable pulls each under one lease', async () => {
    const { sqlite, postgres } = await onBoth(methods, async (store) => {
      const o = await makeOwners(store);
      await seedPulls(store as Store, o);
      await store.updatePull('p3', { not_before: at(20) });
      const answers: unknown[] = [];
      answers.push(await store.claimJobs(at(10), at(15), 0));
      answers.push(await store.claimJobs(at(10), at(15), 1)); // company a: p1 and p2, leased, and Fetching; p3 waits for its retry time
      answers.push(await store.claimJobs(at(11), at(16), 10)); // company b: p5; p1 and p2 are held
      answers.push(await store.claimJobs(at(12), at(17), 10)); // nothing left
      answers.push(await store.leasePull('p1', at(11), at(16))); // still held
      answers.push(await store.leasePull('p1', at(15), at(25))); // expired at 15: taken again, stays Fetching
      answers.push(await store.getPull('p1'));
      answers.push(await store.leasePull('p4', at(10), at(15))); // finished
      answers.push(await store.leasePull('p7', at(10), at(15))); // Initial is not open
      answers.push(await store.leasePull('missing', at(10), at(15)));
      await store.updatePull('p2', { status: 'Mapping' });
      answers.push(await store.claimJobs(at(20), at(30), 10)); // p2 and p5 ran out (Mapping stays Mapping), p3's retry time has come; p1 held
      return relabel(answers, o.names);
    });
    expect(postgres).toEqual(sqlite);
    const ids = (answer: unknown) => (answer as PullJob[]).map((job) => [job.companyId, job.lease, ...job.pulls.map((pull) => pull.id)]);
    expect(sqlite.slice(0, 4).map(ids)).toEqual([[], [['<a>', at(15), 'p1', 'p2']], [['<b>', at(16), 'p5']], []]);
    expect((sqlite[1] as PullJob[])[0]!.pulls).toMatchObject([{ status: 'Fetching', lease_until: at(15) }, { status: 'Fetching', lease_until: at(15) }]);
    expect(sqlite.slice(4, 6)).toEqual([false, true]);
    expect(ids(sqlite[10])).toEqual([['<a>', at(30), 'p2', 'p3'], ['<b>', at(30), 'p5']]);
    expect((sqlite[10] as PullJob[])[0]!.pulls[0]).toMatchObject({ status: 'Mapping', lease_until: at(30) });
  });

  it('writes a running pull only for the worker holding its lease: a write or renewal with a lease taken over, or of an ended pull, changes nothing', async () => {
    const { sqlite, postgres } = await onBoth(methods, async (store) => {
      const o = await makeOwners(store);
      await seedPulls(store as Store, o);
      const answers: unknown[] = [];
      answers.push(await store.leasePull('p1', at(10), at(15))); // the first worker's token: at(15)
      answers.push(await store.updatePull('p1', { cursor: 'a1', fetched: 10, progress: 30 }, at(15)));
      answers.push(await store.updatePull('p1', { lease_until: at(20) }, at(15))); // its heartbeat: token at(20)
      answers.push(await store.updatePull('p1', { cursor: 'stale' }, at(15))); // a token it no longer has
      answers.push(await store.leasePull('p1', at(21), at(26))); // ran out at 20: a second worker takes it
      answers.push(await store.updatePull('p1', { cursor: 'a2', fetched: 20, progress: 60 }, at(20))); // the first worker's late page
      answers.push(await store.updatePull('p1', { lease_until: at(30) }, at(20))); // and its late heartbeat
      answers.push(await store.getPull('p1'));
      answers.push(await store.updatePull('p1', { cursor: 'b2', fetched: 20, progress: 60 }, at(26)));
      answers.push(await store.updatePull('p1', { status: 'Complete', completed: at(27), progress: 100, lease_until: null }, at(26)));
      answers.push(await store.updatePull('p1', { lease_until: at(40) }, at(26))); // ended: no renewal
      await store.updatePull('p4', { lease_until: at(99) }); // finished, with a lease left on it
      answers.push(await store.updatePull('p4', { lease_until: at(100) }, at(99)));
      answers.push(await store.updatePull('missing', { cursor: 'x' }, at(15)));
      answers.push(await store.updatePull('p2', {}, at(15)), await store.updatePull('p2', { progress: 5 }));
      answers.push(await store.getPull('p1'), await store.getPull('p4'), await store.getPull('p2'));
      return relabel(answers, o.names);
    });
    expect(postgres).toEqual(sqlite);
    expect(sqlite.filter((answer) => typeof answer === 'boolean')).toEqual([true, true, true, false, true, false, false, true, true, false, false, false, false, true]);
    expect(sqlite[7]).toMatchObject({ cursor: 'a1', fetched: 10, lease_until: at(26) });
    expect(sqlite.at(-3)).toMatchObject({ status: 'Complete', cursor: 'b2', lease_until: null });
  });

  it('pages pulls newest first, with query= and orderBy=', async () => {
    const { sqlite, postgres } = await onBoth(methods, async (store) => {
      const o = await makeOwners(store);
      await seedPulls(store as Store, o);
      await store.updatePull('p2', { progress: 55, completed: at(40) });
      await store.updatePull('p3', { progress: 55 });
      const page = (request: Parameters<AsyncStore['pullsPage']>[1]) => store.runPage<PullRow>(store.pullsPage(o.a, request));
      const answers = [
        await page({ page: 1, pageSize: 2 }), await page({ page: 2, pageSize: 2 }), await page({ page: 3, pageSize: 2 }), await page({ page: 4, pageSize: 2 }),
        await page({ page: 1, pageSize: 10, query: 'dataType=INVOICES' }),
        await page({ page: 1, pageSize: 10, query: 'status!=queued&&requested>=2024-03-01T10:02:00Z' }),
        await page({ page: 1, pageSize: 10, query: 'progress>10||completed=null', orderBy: '-progress,dataType' }),
        await page({ page: 1, pageSize: 3, orderBy: 'completed' }), await page({ page: 2, pageSize: 3, orderBy: 'completed' }),
        await page({ page: 1, pageSize: 10, query: 'connectionId~' + JSON.stringify(o.a2.slice(2, 10).toUpperCase()) }),
        await store.runPage(store.pullsPage('no-company', { page: 1, pageSize: 10 })),
      ];
      return relabel(answers, o.names);
    });
    expect(postgres).toEqual(sqlite);
    expect((sqlite[0] as { total: number }).total).toBe(6);
    expect((sqlite[4] as { rows: PullRow[] }).rows.map((r) => r.id)).toEqual(['p3', 'p1']);
  });

  it('rejects a query on a field pulls do not have, on both', async () => {
    const { sqlite, postgres } = await onBoth(methods, async (store) => [
      await outcome(async () => store.pullsPage('c', { page: 1, pageSize: 1, query: 'nope=1' })),
      await outcome(async () => store.pullsPage('c', { page: 1, pageSize: 1, orderBy: 'nope' })),
    ]);
    expect(postgres).toEqual(sqlite);
    expect(sqlite).toEqual(['rejected', 'rejected']);
  });

  describe('on PostgreSQL alone', () => {
    it('gives each lease to exactly one of two processes racing for it', async () => {
      const pool = await freshPostgres();
      const other = secondPool(pool);
      try {
        const store = methods(pool);
        const o = await makeOwners(store);
        const ids = Array.from({ length: 40 }, (_, i) => `race-${i}`);
        for (const [i, id] of ids.entries()) {
          await store.insertPull({ id, companyId: o.a, connectionId: o.a1, dataType: `type${i}`, status: 'Queued', generation: 1, requested: T0 });
        }
        const first = pullMethods(pool);
        const second = pullMethods(other);
        const results = await Promise.all(ids.map((id) => Promise.all([first.leasePull(id, at(1), at(5)), second.leasePull(id, at(1), at(5))])));
        for (const pair of results) expect(pair.filter(Boolean)).toHaveLength(1);
        expect(results.filter(([mine]) => mine).length).toBeGreaterThan(0);
        const statuses = await Promise.all(ids.map(async (id) => (await first.getPull(id))!.status));
        expect(new Set(statuses)).toEqual(new Set(['Fetching']));
      } finally {
        await other.end();
        await pool.end();
      }
    });

    it('gives processes claiming at once other companies each, never one pull twice', async () => {
      const pool = await freshPostgres();
      const others = Array.from({ length: 5 }, () => secondPool(pool));
      try {
        const store = methods(pool);
        const o = await makeOwners(store);
        const claimers = [pool, ...others].map((db) => ({ ...pullMethods(db), ...jobMethods(db, newQueueFloor()) }));
        const companies: Array<[string, string]> = [];
        for (let i = 0; i < 24; i++) {
          const company = (await store.insertCompany(o.client, { name: `C${i}`, tags: {} }, T0)).id;
          companies.push([company, (await store.insertConnection(company, 'gbol', 'xero', T0)).id]);
        }
        const claimed: string[] = [];
        for (let round = 0; round < 10; round++) {
          for (const [i, [companyId, connectionId]] of companies.entries()) {
            for (const type of ['invoices', 'bills']) {
              await store.insertPull({ id: `r${round}-${i}-${type}`, companyId, connectionId, dataType: type, status: 'Queued', generation: 1, requested: T0 });
            }
          }
          // Six workers' passes at once, four jobs each: every one gets its four companies, both
          // pulls of each, though most of its reads find companies that others lease meanwhile.
          const passes = await Promise.all(claimers.map((claimer) => claimer.claimJobs(at(1), at(5), 4)));
          expect(passes.map((pass) => pass.length)).toEqual([4, 4, 4, 4, 4, 4]);
          const pulls = passes.flat().flatMap((job) => job.pulls);
          expect(pulls).toHaveLength(48);
          claimed.push(...pulls.map((pull) => pull.id));
          for (const pull of pulls) await store.updatePull(pull.id, { status: 'Complete', lease_until: null });
        }
        expect(new Set(claimed).size).toBe(480);
      } finally {
        for (const other of others) await other.end();
        await pool.end();
      }
    });

    it('lets exactly one of a lapsed holder\'s renewal and another process\'s takeover through, whichever comes first', async () => {
      const pool = await freshPostgres();
      const other = secondPool(pool);
      try {
        const store = methods(pool);
        const o = await makeOwners(store);
        const ids = Array.from({ length: 40 }, (_, i) => `race-${i}`);
        for (const [i, id] of ids.entries()) {
          await store.insertPull({ id, companyId: o.a, connectionId: o.a1, dataType: `type${i}`, status: 'Queued', generation: 1, requested: T0 });
          expect(await store.leasePull(id, at(0), at(5))).toBe(true);
        }
        const holder = pullMethods(pool);
        const taker = pullMethods(other);
        // At 6 the holder's lease (to 5) has run out: its heartbeat and the other's claim race.
        const results = await Promise.all(ids.map((id) => Promise.all([holder.updatePull(id, { lease_until: at(8) }, at(5)), taker.leasePull(id, at(6), at(9))])));
        for (const pair of results) expect(pair.filter(Boolean)).toHaveLength(1);
        const leases = await Promise.all(ids.map(async (id) => (await holder.getPull(id))!.lease_until));
        expect(leases).toEqual(results.map(([renewed]) => (renewed ? at(8) : at(9))));
      } finally {
        await other.end();
        await pool.end();
      }
    });
  });
});
