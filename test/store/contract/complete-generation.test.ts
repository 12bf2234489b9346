// Completed pulls' last writes in one call (completeGenerations) answer on PostgreSQL as on
// SQLite, and as publishGeneration followed by setLastSync, one pull after the other, do.
import { describe, expect, it } from 'vitest';
import { companyMethods } from '../../../src/service/store/pg/companies.js';
import { connectionMethods } from '../../../src/service/store/pg/connections.js';
import { datasetMethods } from '../../../src/service/store/pg/datasets.js';
import { createPgStore } from '../../../src/service/store/pg/pg-store.js';
import type { Queryable } from '../../../src/service/store/pg/query.js';
import { describePostgres } from '../../helpers/postgres.js';
import { makeOwners, pgOwners, relabel, secondPool, type Owners } from './owners.js';
import { datasetsOf, freshPostgres, onBoth } from './stores.js';

const methods = (db: Queryable) => ({ ...datasetMethods(db), ...connectionMethods(db), ...companyMethods(db), ...pgOwners(db) });
type Store = ReturnType<typeof methods>;

const at = (hour: number) => `2024-03-01T${String(hour).padStart(2, '0')}:00:00Z`;

/** What the writes leave: the data sets, the connections' and companies' last syncs. */
async function state(store: Store, o: Owners) {
  return {
    datasets: [await datasetsOf(store, o.a), await datasetsOf(store, o.b)],
    connections: await Promise.all([o.a1, o.a2, o.b1].map(async (id) => (await store.getConnectionById(id))?.last_sync)),
    companies: await Promise.all([o.a, o.b].map(async (id) => (await store.getCompany(id))?.last_sync)),
  };
}

describePostgres('completing a generation', () => {
  it('publishes the generation and records the last sync, as the two calls apart do', async () => {
    const { sqlite, postgres } = await onBoth(methods, async (store) => {
      const o = await makeOwners(store);
      for (const companyId of [o.a, o.b]) {
        await store.reserveGeneration(companyId, 'invoices', 's1', at(1));
        await store.reserveGeneration(companyId, 'invoices', 's2', at(2));
      }
      // Company a in one call; company b through the two calls apart, pull by pull.
      const generations = [
        { dataType: 'invoices', generation: 2, syncId: 's2', hour: 4 },
        { dataType: 'bills', generation: 1, syncId: 's3', hour: 5 }, // no such data set: nothing published, the sync recorded
        { dataType: 'customers', generation: 1, syncId: 's4', hour: 3 }, // given last: its time is the company's
      ];
      const together = [
        ...await store.completeGenerations(o.a, [{ dataType: 'invoices', generation: 1, syncId: 's1', connectionId: o.a1, completed: at(3) }]),
        ...await store.completeGenerations(o.a, generations.map((g, i) => ({ ...g, connectionId: i === 1 ? o.a2 : o.a1, completed: at(g.hour) }))),
      ];
      const apart = [];
      for (const [dataType, generation, syncId, connectionId, hour] of [['invoices', 1, 's1', o.b1, 3], ['invoices', 2, 's2', o.b1, 4], ['bills', 1, 's3', o.b1, 5],
        ['customers', 1, 's4', o.b1, 3]] as const) {
        apart.push(await store.publishGeneration(o.b, dataType, generation, syncId, at(hour)));
        await store.setLastSync(connectionId, o.b, at(hour));
      }
      const none = await store.completeGenerations(o.a, []);
      const missing = await store.completeGenerations('no-company', [{ dataType: 'invoices', generation: 1, syncId: 's9', connectionId: 'no-connection', completed: at(9) }]);
      return relabel({ together, apart, none, missing, state: await state(store, o) }, o.names);
    });
    expect(postgres).toEqual(sqlite);
    expect(sqlite.together).toEqual([null, 1, null, null]);
    expect(sqlite.together).toEqual(sqlite.apart);
    expect(sqlite.none).toEqual([]);
    const [a, b] = sqlite.state.datasets;
    expect(a!.map(({ company_id: _c, ...rest }) => rest)).toEqual(b!.map(({ company_id: _c, ...rest }) => rest));
    expect(a![0]).toMatchObject({ visible_generation: 2, latest_successful_sync_id: 's2', last_successful_sync: at(4) });
    expect(sqlite.state.connections).toEqual([at(3), at(5), at(3)]);
    expect(sqlite.state.companies).toEqual([at(3), at(3)]);
    expect(sqlite.missing).toEqual([null]);
  });

  describe('on PostgreSQL alone', () => {
    it('pulls of one company ending at once in two processes, each holding the company first, all land', async () => {
      const pool = await freshPostgres();
      const other = secondPool(pool);
      try {
        const o = await makeOwners(pgOwners(pool));
        const stores = [createPgStore(pool), createPgStore(other)];
        const dataTypes = Array.from({ length: 16 }, (_, i) => `type${i}`);
        for (const dataType of dataTypes) await stores[0]!.reserveGeneration(o.a, dataType, `s-${dataType}`, at(1));
        await Promise.all(dataTypes.map((dataType, i) => stores[i % 2]!.transaction(async (tx) => {
          await tx.getCompany(o.a);
          await tx.completeGenerations(o.a, [{ dataType, generation: 1, syncId: `s-${dataType}`, connectionId: i % 3 === 0 ? o.a2 : o.a1, completed: at(2 + (i % 5)) }]);
        })));
        const datasets = await datasetsOf(stores[0]!, o.a);
        expect(datasets.map((d) => d.visible_generation)).toEqual(dataTypes.map(() => 1));
        expect((await stores[0]!.getCompany(o.a))?.last_sync).toMatch(/^2024-03-01T0[2-6]:00:00Z$/);
        expect((await stores[0]!.getConnectionById(o.a2))?.last_sync).toMatch(/^2024-03-01T0[2-6]:00:00Z$/);
      } finally {
        await other.end();
        await pool.end();
      }
    });
  });
});
