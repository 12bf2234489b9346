// Many pulls' writes under a job's lease answering their rows (updatePulls) and many pulls
// read at once (getPulls) answer on PostgreSQL as on SQLite, and as updatePull and getPull do.
import { describe, expect, it } from 'vitest';
import { jobMethods, newQueueFloor } from '../../../src/service/store/pg/jobs.js';
import { pullMethods } from '../../../src/service/store/pg/pulls.js';
import type { Queryable } from '../../../src/service/store/pg/query.js';
import { describePostgres } from '../../helpers/postgres.js';
import { makeOwners, pgOwners, relabel, secondPool, type Owners } from './owners.js';
import { freshPostgres, onBoth } from './stores.js';

const methods = (db: Queryable) => ({ ...pullMethods(db), ...jobMethods(db, newQueueFloor()), ...pgOwners(db) });
type Store = ReturnType<typeof methods>;

const T0 = '2024-03-01T10:00:00Z';
const at = (minutes: number) => new Date(Date.parse(T0) + minutes * 60_000).toISOString().replace('.000Z', 'Z');

async function seed(store: Store, o: Owners): Promise<void> {
  const pull = { connectionId: o.a1, requested: T0 };
  await store.insertPull({ ...pull, id: 'p1', companyId: o.a, dataType: 'invoices', status: 'Queued', generation: 1 });
  await store.insertPull({ ...pull, id: 'p2', companyId: o.a, dataType: 'bills', status: 'Queued', generation: 1 });
  await store.insertPull({ ...pull, id: 'p3', companyId: o.b, connectionId: o.b1, dataType: 'invoices', status: 'Complete', generation: 4 });
  await store.insertPull({ ...pull, id: 'p4', companyId: o.a, dataType: 'invoices', status: 'Queued', generation: 2 });
}

describePostgres('pull rows', () => {
  it('answers the pulls as written, those under the lease as updatePull checks it', async () => {
    const { sqlite, postgres } = await onBoth(methods, async (store) => {
      const o = await makeOwners(store);
      await seed(store, o);
      const job = (await store.claimJobs(at(1), at(5), 1))[0]!; // company a's job: p1, p2, p4 leased until at(5)
      const byId = (written: Array<{ id: string }>) => [...written].sort((x, y) => x.id.localeCompare(y.id));
      const answers: unknown[] = [job.pulls];
      answers.push(await store.updatePulls([{ id: 'p1', fields: {} }], at(5))); // nothing to set
      answers.push(await store.updatePulls([{ id: 'p1', fields: { cursor: 'c', fetched: 3 } }], at(4))); // not its lease
      answers.push(byId(await store.updatePulls([
        { id: 'p1', fields: { status: 'Complete', completed: at(2), progress: 100, fetched: 7, cursor: null, lease_until: null, validation: '{"errors":[],"warnings":[]}' } },
        { id: 'p2', fields: { cursor: 'next', fetched: 2, progress: 40, attempts: 0, status_description: null } },
        { id: 'p3', fields: { progress: 1 } }, // not leased
        { id: 'missing', fields: { progress: 1 } },
        { id: 'p4', fields: { attempts: 2, not_before: at(3), lease_until: null, status_description: 'Retrying' } },
      ], at(5))));
      answers.push([await store.getPull('p1'), await store.getPull('p2'), await store.getPull('p4')]);
      answers.push(await store.updatePulls([{ id: 'p1', fields: { lease_until: at(9) } }, { id: 'p4', fields: { progress: 3 } }], at(5))); // ended or freed: no more writes under the lease
      answers.push(await store.getPull('p3'));
      return relabel(answers, o.names);
    });
    expect(postgres).toEqual(sqlite);
    expect(sqlite[1]).toEqual([]);
    expect(sqlite[2]).toEqual([]);
    expect(sqlite[3]).toEqual(sqlite[4]);
    expect(sqlite[3]).toMatchObject([
      { id: 'p1', status: 'Complete', fetched: 7, progress: 100, cursor: null, lease_until: null },
      { id: 'p2', status: 'Fetching', cursor: 'next', fetched: 2, progress: 40, lease_until: at(5) },
      { id: 'p4', status: 'Fetching', attempts: 2, not_before: at(3), lease_until: null, status_description: 'Retrying' },
    ]);
    expect(sqlite[5]).toEqual([]);
    expect(sqlite[6]).toMatchObject({ id: 'p3', status: 'Complete', progress: 100 });
  });

  it('reads the pulls of many ids at once, oldest first, leaving out those that do not exist', async () => {
    const { sqlite, postgres } = await onBoth(methods, async (store) => {
      const o = await makeOwners(store);
      await seed(store, o);
      return relabel({
        some: await store.getPulls(['p4', 'missing', 'p1', 'p3', 'p1']),
        none: await store.getPulls([]),
        unknown: await store.getPulls(['x', 'y']),
        one: await store.getPulls(['p2']),
        singly: [await store.getPull('p1'), await store.getPull('p3'), await store.getPull('p4')],
      }, o.names);
    });
    expect(postgres).toEqual(sqlite);
    expect(sqlite.some).toEqual(sqlite.singly);
    expect(sqlite.none).toEqual([]);
    expect(sqlite.unknown).toEqual([]);
    expect(sqlite.one.map((p) => p.id)).toEqual(['p2']);
  });

  describe('on PostgreSQL alone', () => {
    it('a final write racing a takeover either lands before it, or changes nothing', async () => {
      const pool = await freshPostgres();
      const other = secondPool(pool);
      try {
        const o = await makeOwners(pgOwners(pool));
        const [holder, taker] = [methods(pool), methods(other)];
        const ids = Array.from({ length: 20 }, (_, i) => `r${i}`);
        for (const [i, id] of ids.entries()) await holder.insertPull({ id, companyId: o.a, connectionId: o.a1, dataType: `type${i}`, status: 'Queued', generation: 1, requested: T0 });
        await holder.claimJobs(at(0), at(5), 1);
        const results = await Promise.all(ids.map((id) => Promise.all([
          holder.updatePulls([{ id, fields: { status: 'Complete', completed: at(6), progress: 100, lease_until: null } }], at(5)).then(([ended]) => ended),
          taker.leasePull(id, at(6), at(9)),
        ])));
        for (const [i, [ended, taken]] of results.entries()) {
          const now = await holder.getPull(ids[i]!);
          // Exactly one of them got the pull, and what the final write answered is what is stored.
          expect(Boolean(ended) !== taken).toBe(true);
          if (ended) expect(now).toEqual(ended);
          else expect(now).toMatchObject({ status: 'Fetching', lease_until: at(9) });
        }
      } finally {
        await other.end();
        await pool.end();
      }
    });
  });
});
