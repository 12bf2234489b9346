// What the operator's probes and metrics read (store/monitoring.ts) answers the same on both
// stores: the migrations not applied, the open pulls per data type split by live lease,
// and the deliveries still to make to enabled consumers.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { expect, it } from 'vitest';
import { monitoringMethods } from '../../../src/service/store/pg/monitoring.js';
import { jobMethods, newQueueFloor } from '../../../src/service/store/pg/jobs.js';
import { pullMethods } from '../../../src/service/store/pg/pulls.js';
import type { Queryable } from '../../../src/service/store/pg/query.js';
import { listMigrations, openDatabase } from '../../../src/service/store/sqlite/db.js';
import { createSqliteStore } from '../../../src/service/store/sqlite/sqlite-store.js';
import { describePostgres } from '../../helpers/postgres.js';
import { consumer, event, newClient, outboxMethods } from './outbox.js';
import { makeOwners, pgOwners } from './owners.js';
import { freshPostgres, onBoth } from './stores.js';

const T0 = '2024-03-01T10:00:00Z';
const at = (minutes: number) => new Date(Date.parse(T0) + minutes * 60_000).toISOString().replace('.000Z', 'Z');

const pullStore = (db: Queryable) => ({ ...pullMethods(db), ...jobMethods(db, newQueueFloor()), ...pgOwners(db), ...monitoringMethods(db) });
const deliveryStore = (db: Queryable) => ({ ...outboxMethods(db), ...monitoringMethods(db) });

describePostgres('monitoring reads', () => {
  it('counts the open pulls per data type: queued without a live lease, running with one; finished ones not at all', async () => {
    const { sqlite, postgres } = await onBoth(pullStore, async (store) => {
      const o = await makeOwners(store);
      const answers: unknown[] = [await store.pullBacklog(T0)];
      const pull = { connectionId: o.a1, requested: T0, generation: 1 };
      await store.insertPull({ ...pull, id: 'p1', companyId: o.a, dataType: 'invoices', status: 'Queued' });
      await store.insertPull({ ...pull, id: 'p2', companyId: o.a, dataType: 'bills', status: 'Queued' });
      await store.insertPull({ ...pull, id: 'p3', companyId: o.b, connectionId: o.b1, dataType: 'invoices', status: 'Queued' });
      await store.insertPull({ ...pull, id: 'p4', companyId: o.b, connectionId: o.b1, dataType: 'bills', status: 'Complete' });
      answers.push(await store.pullBacklog(T0));
      await store.claimJobs(T0, at(5), 1); // company a's job: p1 and p2, leased until at(5)
      answers.push(await store.pullBacklog(at(1)));
      // Past the lease, a running pull is queued again: a worker may take it over.
      answers.push(await store.pullBacklog(at(6)));
      await store.updatePull('p1', { status: 'Complete', lease_until: null }, at(5));
      answers.push(await store.pullBacklog(at(1)));
      return answers;
    });
    expect(postgres).toEqual(sqlite);
    expect(sqlite).toEqual([
      [],
      [{ data_type: 'bills', queued: 1, running: 0 }, { data_type: 'invoices', queued: 2, running: 0 }],
      [{ data_type: 'bills', queued: 0, running: 1 }, { data_type: 'invoices', queued: 1, running: 1 }],
      [{ data_type: 'bills', queued: 1, running: 0 }, { data_type: 'invoices', queued: 2, running: 0 }],
      [{ data_type: 'bills', queued: 0, running: 1 }, { data_type: 'invoices', queued: 1, running: 0 }],
    ]);
  });

  it('counts the deliveries still to make, leaving out delivered ones and those a disabled consumer holds', async () => {
    const { sqlite, postgres } = await onBoth(deliveryStore, async (store) => {
      const client = await newClient(store);
      const answers: number[] = [await store.pendingDeliveryCount()];
      for (const id of ['k1', 'k2']) await store.insertConsumer(consumer(id, client));
      // Each event goes to both consumers; e1 and e2 of one company, so e2's wait behind e1's.
      for (const [i, company] of ['co1', 'co1', 'co2'].entries()) await store.insertEvent(event(`e${i + 1}`, client, company, { generated: T0 }));
      answers.push(await store.pendingDeliveryCount());
      const { claimed } = await store.claimDeliveries({ now: T0, leaseUntil: at(1), limit: 1, perConsumer: 10, busy: {} });
      await store.recordDeliveryAttempt(claimed[0]!.seq, { at: T0, status_code: 200, error: null, latency_ms: 3 }, { status: 'Delivered', completed: T0 });
      answers.push(await store.pendingDeliveryCount());
      await store.disableConsumerDeliveries('k2', 'gone');
      answers.push(await store.pendingDeliveryCount());
      return answers;
    });
    expect(postgres).toEqual(sqlite);
    expect(sqlite).toEqual([0, 6, 5, 2]);
  });


  it('name no migration once a store is opened, and the ones a database lacks', async () => {
    const db = openDatabase(join(mkdtempSync(join(tmpdir(), 'ferry-monitoring-')), 'ferry.db'));
    const pool = await freshPostgres();
    try {
      const sqlite = createSqliteStore(db);
      const pg = monitoringMethods(pool);
      expect([sqlite.pendingMigrations(), await pg.pendingMigrations()]).toEqual([[], []]);
      // As a database restored from an older build, or a migration recorded and then undone by hand.
      // The build's last migration (the same number and name on both stores).
      const [before, last] = listMigrations().slice(-2);
      db.pragma(`user_version = ${before!.version}`);
      await pool.query('DELETE FROM schema_migrations WHERE name = $1', [last!.name]);
      expect([sqlite.pendingMigrations(), await pg.pendingMigrations()]).toEqual([[last!.name], [last!.name]]);
    } finally {
      db.close();
      rmSync(dirname(db.name), { recursive: true, force: true });
      await pool.end();
    }
  });
});
