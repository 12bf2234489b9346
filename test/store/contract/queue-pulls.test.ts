// Queuing a list of pulls in one call (queuePulls) answers on PostgreSQL as on SQLite, and
// as reserving each one's generation and inserting it one by one does.
import { describe, expect, it } from 'vitest';
import { datasetMethods } from '../../../src/service/store/pg/datasets.js';
import { pullMethods } from '../../../src/service/store/pg/pulls.js';
import type { Queryable } from '../../../src/service/store/pg/query.js';
import type { NewPull } from '../../../src/service/store/pulls.js';
import { describePostgres } from '../../helpers/postgres.js';
import { makeOwners, outcome, pgOwners, relabel, secondPool, type Owners } from './owners.js';
import { datasetsOf, freshPostgres, onBoth } from './stores.js';

const methods = (db: Queryable) => ({ ...pullMethods(db), ...datasetMethods(db), ...pgOwners(db) });
type Store = ReturnType<typeof methods>;

const T0 = '2024-03-01T10:00:00Z';
const T1 = '2024-03-01T11:00:00Z';

/** Company a's data sets as the queue-all request lists them: one not supported, with why. */
const listFor = (o: Owners, requested: string, prefix: string): NewPull[] => [
  { id: `${prefix}-invoices`, companyId: o.a, connectionId: o.a1, dataType: 'invoices', status: 'Queued', requested },
  { id: `${prefix}-bills`, companyId: o.a, connectionId: o.a1, dataType: 'bills', status: 'Queued', requested },
  { id: `${prefix}-payments`, companyId: o.a, connectionId: o.a2, dataType: 'payments', status: 'Queued', requested },
  { id: `${prefix}-journals`, companyId: o.a, connectionId: o.a1, dataType: 'journals', status: 'NotSupported', requested, statusDescription: 'Datatype journals is not supported by Xero' },
];

/** The same pulls one by one, the way queuing worked before queuePulls. */
async function oneByOne(store: Store, pulls: NewPull[]) {
  const made = [];
  for (const pull of pulls) made.push(await store.insertPull({ ...pull, generation: await store.reserveGeneration(pull.companyId, pull.dataType, pull.id, pull.requested) }));
  return made;
}

/** Rows as compared across the two ways of queuing: seq aside (each way has its own). */
const withoutSeq = <T extends { seq: number }>(rows: T[]) => rows.map(({ seq, ...rest }) => ({ ...rest, seq: typeof seq }));

describePostgres('queuing pulls in one call', () => {
  it('reserves the generations and inserts the pulls reserveGeneration and insertPull would, in the order given', async () => {
    const { sqlite, postgres } = await onBoth(methods, async (store) => {
      const o = await makeOwners(store);
      // invoices has been synced twice before; bills once; the rest never.
      await store.reserveGeneration(o.a, 'invoices', 'old-1', '2024-02-01T00:00:00Z');
      await store.reserveGeneration(o.a, 'invoices', 'old-2', '2024-02-02T00:00:00Z');
      await store.publishGeneration(o.a, 'invoices', 2, 'old-2', '2024-02-02T00:05:00Z');
      await store.reserveGeneration(o.a, 'bills', 'old-3', '2024-02-03T00:00:00Z');
      await store.reserveGeneration(o.b, 'invoices', 'old-4', '2024-02-04T00:00:00Z');
      const queued = await store.queuePulls(listFor(o, T0, 'q1'));
      const again = await store.queuePulls(listFor(o, T1, 'q2'));
      const otherCompany = await store.queuePulls([{ id: 'q3', companyId: o.b, connectionId: o.b1, dataType: 'invoices', status: 'Queued', requested: T1 }]);
      return relabel({
        queued, again, otherCompany,
        datasets: [await datasetsOf(store, o.a), await datasetsOf(store, o.b)],
        open: await store.openPulls(o.a),
        seqInOrder: [...queued, ...again].every((pull, i, all) => i === 0 || all[i - 1]!.seq < pull.seq),
      }, o.names);
    });
    expect(postgres).toEqual(sqlite);
    expect(sqlite.queued.map((p) => [p.id, p.generation, p.status, p.progress, p.completed])).toEqual([
      ['q1-invoices', 3, 'Queued', 0, null], ['q1-bills', 2, 'Queued', 0, null], ['q1-payments', 1, 'Queued', 0, null],
      ['q1-journals', 1, 'NotSupported', 100, T0],
    ]);
    expect(sqlite.again.map((p) => p.generation)).toEqual([4, 3, 2, 2]);
    expect(sqlite.otherCompany[0]!.generation).toBe(2);
    expect(sqlite.seqInOrder).toBe(true);
    // The data set keeps what it had: the visible generation, and the request is the latest.
    expect(sqlite.datasets[0]!.find((d) => d.data_type === 'invoices')).toMatchObject({ visible_generation: 2, next_generation: 5, latest_sync_id: 'q2-invoices', last_requested: T1 });
  });

  it('gives the same rows as queuing one by one', async () => {
    const { sqlite, postgres } = await onBoth(methods, async (store) => {
      const o = await makeOwners(store);
      await store.reserveGeneration(o.a, 'invoices', 'old-1', '2024-02-01T00:00:00Z');
      await store.reserveGeneration(o.b, 'invoices', 'old-1', '2024-02-01T00:00:00Z');
      // Company a in one call, company b (the same list, moved over) one by one.
      const batched = await store.queuePulls(listFor(o, T0, 'x'));
      const single = await oneByOne(store, listFor(o, T0, 'x').map((pull) => ({ ...pull, id: `${pull.id}-b`, companyId: o.b, connectionId: o.b1 })));
      // Each pull as the other way queued it: its own id and owners aside.
      const strip = (rows: typeof batched) => withoutSeq(rows).map((pull) => ({ ...pull, id: pull.id.replace(/-b$/, ''), company_id: '', connection_id: '' }));
      return { same: JSON.stringify(strip(batched)) === JSON.stringify(strip(single)), batched: relabel(withoutSeq(batched), o.names) };
    });
    expect(postgres).toEqual(sqlite);
    expect(sqlite.same).toBe(true);
  });

  it('queues nothing for an empty list, and nothing at all from a list it refuses', async () => {
    const { sqlite, postgres } = await onBoth(methods, async (store) => {
      const o = await makeOwners(store);
      const pull = (id: string, companyId: string, dataType: string): NewPull => ({ id, companyId, connectionId: o.a1, dataType, status: 'Queued', requested: T0 });
      return relabel({
        empty: await store.queuePulls([]),
        twice: await outcome(() => store.queuePulls([pull('t1', o.a, 'invoices'), pull('t2', o.a, 'bills'), pull('t3', o.a, 'invoices')])),
        noCompany: await outcome(() => store.queuePulls([pull('n1', o.a, 'invoices'), pull('n2', 'no-company', 'invoices')])),
        takenId: await outcome(async () => {
          await store.queuePulls([pull('k1', o.b, 'invoices')]);
          await store.queuePulls([pull('k2', o.a, 'invoices'), pull('k1', o.a, 'bills')]);
        }),
        // Nothing of a refused list stays: no pull, no reserved generation.
        datasets: [await datasetsOf(store, o.a), await datasetsOf(store, o.b)],
        open: await store.openPulls(o.a),
      }, o.names);
    });
    expect(postgres).toEqual(sqlite);
    expect(sqlite).toMatchObject({ empty: [], twice: 'rejected', noCompany: 'rejected', takenId: 'rejected' });
    expect(sqlite.datasets[0]).toEqual([]);
    expect(sqlite.open.size).toBe(0);
  });

  describe('on PostgreSQL alone', () => {
    it('gives each of two processes queuing the same data sets at once generations of their own', async () => {
      const pool = await freshPostgres();
      const other = secondPool(pool);
      try {
        const o = await makeOwners(pgOwners(pool));
        const stores = [methods(pool), methods(other)];
        const rounds = await Promise.all(Array.from({ length: 20 }, (_, i) => stores[i % 2]!.queuePulls(listFor(o, T0, `r${i}`))));
        for (const [index, dataType] of ['invoices', 'bills', 'payments', 'journals'].entries()) {
          const generations = rounds.map((round) => round[index]!).map((pull) => { expect(pull.data_type).toBe(dataType); return pull.generation; });
          expect(generations.sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
        }
        expect((await datasetsOf(stores[0]!, o.a)).map((d) => d.next_generation)).toEqual([21, 21, 21, 21]);
      } finally {
        await other.end();
        await pool.end();
      }
    });
  });
});
