// The push group: push operations, their completion and their pages answer on PostgreSQL
// as on SQLite.
import { expect, it } from 'vitest';
import type { AsyncStore } from '../../../src/service/store/async-store.js';
import type { PagePlan } from '../../../src/service/store/paging.js';
import { runPgPagePlan } from '../../../src/service/store/pg/paging.js';
import { pushMethods } from '../../../src/service/store/pg/pushes.js';
import type { Queryable } from '../../../src/service/store/pg/query.js';
import type { PushRow } from '../../../src/service/store/pushes.js';
import { describePostgres } from '../../helpers/postgres.js';
import { makeOwners, outcome, pgOwners, relabel, secondPool, type Owners } from './owners.js';
import { freshPostgres, onBoth } from './stores.js';

const methods = (db: Queryable) => ({ ...pushMethods(db), ...pgOwners(db), runPage: <Row>(plan: PagePlan) => runPgPagePlan<Row>(db, plan) });
type Store = ReturnType<typeof methods>;

function push(o: Owners, key: string, minute: number, fields: Partial<PushRow> = {}): Omit<PushRow, 'seq'> {
  return {
    key, company_id: o.a, connection_id: o.a1, data_type: 'invoices', status: 'Pending', status_code: 202,
    requested: `2024-03-01T10:${String(minute).padStart(2, '0')}:00Z`, completed: null, timeout_minutes: null, error_message: null,
    validation: '{"errors":[],"warnings":[]}', changes: null, platform_push_id: null, change_type: 'Created', record_id: null, ...fields,
  };
}

async function seedPushes(store: Store, o: Owners): Promise<PushRow[]> {
  return [
    await store.insertPush(push(o, 'k1', 0)),
    await store.insertPush(push(o, 'k2', 1, { data_type: 'bills', connection_id: o.a2, timeout_minutes: 30, change_type: 'Modified', record_id: 'r-9' })),
    await store.insertPush(push(o, 'k3', 2, { status: 'Success', status_code: 200, completed: '2024-03-01T10:03:00Z', platform_push_id: 'pp-1',
      changes: '[{"type":"Created","recordRef":{"id":"x","dataType":"invoices"}}]' })),
    await store.insertPush(push(o, 'k4', 3, { company_id: o.b, connection_id: o.b1 })),
    await store.insertPush(push(o, 'k5', 4, { validation: '{"errors":[{"message":"bad \\u00e9"}],"warnings":[]}', status: 'Failed', status_code: 400 })),
  ];
}

describePostgres('push store contract', () => {
  it('inserts, reads and lists the pending pushes', async () => {
    const { sqlite, postgres } = await onBoth(methods, async (store) => {
      const o = await makeOwners(store);
      const answers = {
        inserted: await seedPushes(store, o),
        got: await store.getPush('k3'),
        missing: await store.getPush('nope'),
        duplicate: await outcome(() => store.insertPush(push(o, 'k1', 9))),
        pending: await store.pendingPushes(10),
        pendingTwo: await store.pendingPushes(2),
        pendingNone: await store.pendingPushes(0),
      };
      return relabel(answers, o.names);
    });
    expect(postgres).toEqual(sqlite);
    expect(sqlite.duplicate).toBe('rejected');
  });

  it('completes a pending push once, keeping what the completion leaves out', async () => {
    const { sqlite, postgres } = await onBoth(methods, async (store) => {
      const o = await makeOwners(store);
      await seedPushes(store, o);
      const settled = [
        await store.completePush('k1', { status: 'Success', status_code: 200, completed: '2024-03-01T11:00:00Z', changes: '[{"type":"Created"}]' }),
        await store.completePush('k1', { status: 'Failed', status_code: 500, completed: '2024-03-01T12:00:00Z', error_message: 'late' }), // not pending now
        await store.completePush('k2', { status: 'TimedOut', status_code: 504, completed: '2024-03-01T11:30:00Z', error_message: 'timed out',
          validation: '{"errors":[],"warnings":[{"message":"slow"}]}' }),
        await store.completePush('k3', { status: 'Failed', status_code: 500, completed: '2024-03-01T12:00:00Z' }),
        await store.completePush('missing', { status: 'Success', status_code: 200, completed: '2024-03-01T12:00:00Z' }),
      ];
      return relabel([settled, await store.getPush('k1'), await store.getPush('k2'), await store.getPush('k3'), await store.pendingPushes(10)], o.names);
    });
    expect(postgres).toEqual(sqlite);
    expect(sqlite[0]).toEqual([true, false, true, false, false]);
  });

  it('settles a push for exactly one of two processes settling it at once', async () => {
    const pool = await freshPostgres();
    const other = secondPool(pool);
    try {
      const store = methods(pool);
      const o = await makeOwners(store);
      const keys = Array.from({ length: 30 }, (_, i) => `race-${i}`);
      for (const [i, key] of keys.entries()) await store.insertPush(push(o, key, i % 60));
      const first = pushMethods(pool);
      const second = pushMethods(other);
      const settle = (settler: typeof first, key: string, code: number) => settler.completePush(key, { status: 'Success', status_code: code, completed: '2024-03-01T11:00:00Z' });
      const results = await Promise.all(keys.map((key) => Promise.all([settle(first, key, 200), settle(second, key, 201)])));
      for (const pair of results) expect(pair.filter(Boolean)).toHaveLength(1);
      const codes = await Promise.all(keys.map(async (key) => (await first.getPush(key))!.status_code));
      expect(codes).toEqual(results.map(([mine]) => (mine ? 200 : 201)));
    } finally {
      await other.end();
      await pool.end();
    }
  });

  it('pages pushes newest first, with query= and orderBy=', async () => {
    const { sqlite, postgres } = await onBoth(methods, async (store) => {
      const o = await makeOwners(store);
      await seedPushes(store, o);
      const page = (request: Parameters<AsyncStore['pushesPage']>[1]) => store.runPage<PushRow>(store.pushesPage(o.a, request));
      const answers = [
        await page({ page: 1, pageSize: 3 }), await page({ page: 2, pageSize: 3 }), await page({ page: 3, pageSize: 3 }),
        await page({ page: 1, pageSize: 10, query: 'status=PENDING' }),
        await page({ page: 1, pageSize: 10, query: 'statusCode>=400||dataType~ILL', orderBy: 'dataType' }),
        await page({ page: 1, pageSize: 10, query: 'requestedOnUtc>2024-03-01T10:00:00Z&&completedOnUtc=null' }),
        await page({ page: 1, pageSize: 10, orderBy: '-completedOnUtc,statusCode' }),
        await page({ page: 1, pageSize: 10, query: 'pushOperationKey!=k1' }),
        await store.runPage(store.pushesPage('no-company', { page: 1, pageSize: 10 })),
        await outcome(async () => store.pushesPage(o.a, { page: 1, pageSize: 1, query: 'nope=1' })),
      ];
      return relabel(answers, o.names);
    });
    expect(postgres).toEqual(sqlite);
    expect((sqlite[0] as { total: number }).total).toBe(4);
    expect((sqlite[5] as { rows: PushRow[] }).rows.map((r) => r.key)).toEqual(['k5', 'k2']);
  });
});
