// The events contract: events and webhook consumers answer the same on SQLite and on
// PostgreSQL (pg/events.ts), and an event writes one delivery per consumer that wants it,
// in the same order with the same ids (its event's and its consumer's: deliveryIdOf).
import type { Pool } from 'pg';
import { expect, it } from 'vitest';
import { describePostgres } from '../../helpers/postgres.js';
import { deliveryIdOf } from '../../../src/service/store/events.js';
import { consumer, event, named, newClient, outboxMethods, refused, type OutboxStore } from './outbox.js';
import { freshPostgres, onBoth } from './stores.js';

const PAGE = { page: 1, pageSize: 50 };

/** Every delivery of the consumer, oldest first, as the log shows it. */
async function log(store: OutboxStore, consumerId: string) {
  return (await store.runPage(store.webhookDeliveriesPage(consumerId, { ...PAGE, orderBy: 'created' }))).rows;
}

describePostgres('events contract', () => {
  it('writes an event and a delivery per consumer that wants it: by type, by company tag, only enabled, or the one named', async () => {
    const { sqlite, postgres } = await onBoth(outboxMethods, async (store) => {
      const client = await newClient(store);
      const other = await newClient(store, 'Other');
      // Created in the same second, inserted out of id order: creation order decides.
      await store.insertConsumer(consumer('c-types', client, { event_types: '["company.created", "sync.completed"]' }));
      await store.insertConsumer(consumer('c-eu', client, { company_tags: '["region:eu"]' }));
      await store.insertConsumer(consumer('c-any-tag', client, { company_tags: '[]' }));
      await store.insertConsumer(consumer('c-off', client, { disabled: 1, disabled_reason: 'by hand' }));
      await store.insertConsumer(consumer('c-sync', client, { event_types: '["sync.completed"]' }));
      await store.insertConsumer(consumer('c-other', other));
      // Bound to one company (the older body's companyId): its events only, whatever their tags.
      await store.insertConsumer(consumer('c-co2', client, { company_id: 'co2', rule_type: 'DataConnectionStatusChanged' }));
      const seqs = [
        await store.insertEvent(event('e1', client, 'co1', { companyTags: ['region:eu', 'tier:gold'] })),
        await store.insertEvent(event('e2', client, 'co2', { companyTags: ['region:us'] })),
        await store.insertEvent(event('e3', client, null, { eventType: 'sync.completed' })),
        await store.insertEvent(event('e4', client, 'co1', { eventType: 'unwanted' })),
        // A test event: only the consumer named, whatever it wants, if it is enabled.
        await store.insertEvent(event('e5', client, 'co1', { eventType: 'ferry.test', onlyConsumer: 'c-sync' })),
        await store.insertEvent(event('e6', client, 'co1', { eventType: 'ferry.test', onlyConsumer: 'c-off' })),
        await store.insertEvent(event('e7', other, 'co9')),
      ];
      const logs: Record<string, unknown> = {};
      for (const id of ['c-types', 'c-eu', 'c-any-tag', 'c-off', 'c-sync', 'c-other', 'c-co2']) logs[id] = await log(store, id);
      const bound = await store.getConsumer('c-co2');
      const ofEvent = await Promise.all(seqs.map((seq) => store.deliveryOfEvent('c-types', seq)));
      return named({ seqs, logs, ofEvent, bound: { company: bound?.company_id, rule: bound?.rule_type } }, { CLIENT: client, OTHER: other });
    });
    // The same deliveries with the same ids: each its event's and its consumer's.
    expect(postgres).toEqual(sqlite);
    const written = Object.entries(sqlite.logs as Record<string, Array<{ id: string; event_id: string }>>)
      .flatMap(([consumerId, log]) => log.map((d) => ({ ...d, consumerId })));
    expect(written).toHaveLength(10);
    for (const d of written) expect(d.id).toBe(deliveryIdOf(d.event_id, d.consumerId));
    expect((sqlite.logs['c-eu'] as unknown[]).length).toBe(1);
    expect((sqlite.logs['c-co2'] as Array<{ event_id: string }>).map((d) => d.event_id)).toEqual(['e2']);
    expect(sqlite.bound).toEqual({ company: 'co2', rule: 'DataConnectionStatusChanged' });
  });

  it('reads events back: after an account’s number, the latest, and a company’s after one', async () => {
    const { sqlite, postgres } = await onBoth(outboxMethods, async (store) => {
      const client = await newClient(store);
      const other = await newClient(store, 'Other');
      const none = {
        latest: await store.latestEventSeq(), account: await store.latestAccountEventSeq(client),
        after: await store.eventsAfter(client, 0, 10),
      };
      for (const [i, [owner, company, type]] of ([
        [client, 'co1', 'read.completed'], [client, 'co1', 'sync.completed'], [other, 'co9', 'read.completed'], [client, null, 'read.completed'],
        [client, 'co1', 'read.completed'], [client, 'co2', 'read.completed'], [client, 'co1', 'read.completed'],
      ] as Array<[string, string | null, string]>).entries()) {
        await store.insertEvent(event(`e${i + 1}`, owner, company, { eventType: type, generated: `2026-02-01T00:00:0${i}Z` }));
      }
      return named({
        none,
        latest: await store.latestEventSeq(),
        accountLatest: await store.latestAccountEventSeq(client),
        otherLatest: await store.latestAccountEventSeq(other),
        afterZero: await store.eventsAfter(client, 0, 100),
        afterTwoLimited: await store.eventsAfter(client, 2, 2),
        afterAll: await store.eventsAfter(client, 7, 10),
        otherAccount: await store.eventsAfter(other, 0, 10),
        companyAfter: await store.companyEventsAfter('co1', 'read.completed', 1),
        companyAfterAll: await store.companyEventsAfter('co1', 'read.completed', 7),
        duplicate: await refused(() => store.insertEvent(event('e1', client, 'co1'))),
      }, { CLIENT: client, OTHER: other });
    });
    expect(postgres).toEqual(sqlite);
    expect(sqlite.duplicate).toBe(true);
    // Each account counts its own: the other account's event (seq 3) takes none of this one's numbers.
    expect(sqlite.afterZero.map((e) => [e.seq, e.account_seq])).toEqual([[1, 1], [2, 2], [4, 3], [5, 4], [6, 5], [7, 6]]);
    expect(sqlite.otherAccount.map((e) => [e.seq, e.account_seq])).toEqual([[3, 1]]);
    expect([sqlite.accountLatest, sqlite.otherLatest, sqlite.latest]).toEqual([6, 1, 7]);
    expect(sqlite.afterTwoLimited.map((e) => e.account_seq)).toEqual([3, 4]);
    expect(sqlite.afterZero[2]?.body).toContain('"eventType" : '); // kept as written
  });

  it('keeps consumers: one, an account’s in creation order, disabled with a reason, deleted with their deliveries', async () => {
    const { sqlite, postgres } = await onBoth(outboxMethods, async (store) => {
      const client = await newClient(store);
      const other = await newClient(store, 'Other');
      const empty = await store.listConsumers(client);
      await store.insertConsumer(consumer('c-z', client, { created: '2026-01-02T00:00:00Z', event_types: '[ "company.created" ]' }));
      await store.insertConsumer(consumer('c-y', client, { company_tags: '["a:b", "c:d"]' }));
      await store.insertConsumer(consumer('c-x', client));
      await store.insertConsumer(consumer('c-w', other));
      const duplicate = await refused(() => store.insertConsumer(consumer('c-x', client)));
      await store.insertEvent(event('e1', client, 'co1'));
      await store.disableConsumer('c-y', 'the receiver answered 410');
      await store.disableConsumer('c-missing', 'nobody');
      const disabled = await store.getConsumer('c-y');
      // Disabling leaves the pending delivery as it is, for the log.
      const heldLog = await store.deliveryOfEvent('c-y', 1);
      await store.deleteConsumer('c-z');
      await store.deleteConsumer('c-missing');
      return named({
        empty, duplicate, disabled, heldLog,
        list: await store.listConsumers(client),
        others: await store.listConsumers(other),
        gone: await store.getConsumer('c-z'),
        goneDelivery: await store.deliveryOfEvent('c-z', 1),
        missing: await store.getConsumer('c-missing'),
      }, { CLIENT: client, OTHER: other });
    });
    expect(postgres).toEqual(sqlite);
    expect(sqlite.list.map((c) => c.id)).toEqual(['c-y', 'c-x']);
    expect(Buffer.isBuffer(postgres.disabled?.secret)).toBe(true);
  });

  it('on PostgreSQL, an event written while one of its consumers is being deleted waits for the delete, and names only the consumers left', async () => {
    const pool = await freshPostgres();
    const deleting = await pool.connect();
    try {
      const store = outboxMethods(pool);
      const client = await newClient(store);
      for (const id of ['c-kept', 'c-gone']) await store.insertConsumer(consumer(id, client));
      await deleting.query('BEGIN');
      await outboxMethods(deleting).deleteConsumer('c-gone');
      let written = false;
      const writing = store.insertEvent(event('e1', client, 'co1')).finally(() => (written = true));
      // The event's read of the consumers waits for the delete's lock (or, were nothing to stop it, is done).
      const deadline = Date.now() + 10_000;
      while (!written && !(await lockWaits(pool)) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
      expect(written).toBe(false);
      await deleting.query('COMMIT');
      await writing;
      expect(await store.deliveryOfEvent('c-kept', 1)).toMatchObject({ id: deliveryIdOf('e1', 'c-kept') });
      expect(await store.deliveryOfEvent('c-gone', 1)).toBeUndefined();
    } finally {
      deleting.release();
      await pool.end();
    }
  });
});

/** Whether some session of this database waits for a lock (a row's: on the transaction that holds it). */
async function lockWaits(pool: Pool): Promise<boolean> {
  const { rows } = await pool.query<{ n: number }>(`SELECT count(*)::integer AS n FROM pg_stat_activity
    WHERE datname = current_database() AND wait_event_type = 'Lock'`);
  return rows[0]!.n > 0;
}
