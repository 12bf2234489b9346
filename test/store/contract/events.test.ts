// The events contract: events and webhook consumers answer the same on SQLite and on
// PostgreSQL (pg/events.ts), and an event writes one delivery per consumer that wants it,
// in the same order with the same ids.
import { expect, it } from 'vitest';
import { describePostgres } from '../../helpers/postgres.js';
import { consumer, counter, event, named, newClient, outboxMethods, refused, type OutboxStore } from './outbox.js';
import { onBoth } from './stores.js';

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
      const ids = counter();
      const given: string[] = [];
      const deliveryId = () => {
        const id = ids();
        given.push(id);
        return id;
      };
      const seqs = [
        await store.insertEvent(event('e1', client, 'co1', { companyTags: ['region:eu', 'tier:gold'] }), deliveryId),
        await store.insertEvent(event('e2', client, 'co2', { companyTags: ['region:us'] }), deliveryId),
        await store.insertEvent(event('e3', client, null, { eventType: 'sync.completed' }), deliveryId),
        await store.insertEvent(event('e4', client, 'co1', { eventType: 'unwanted' }), deliveryId),
        // A test event: only the consumer named, whatever it wants, if it is enabled.
        await store.insertEvent(event('e5', client, 'co1', { eventType: 'ferry.test', onlyConsumer: 'c-sync' }), deliveryId),
        await store.insertEvent(event('e6', client, 'co1', { eventType: 'ferry.test', onlyConsumer: 'c-off' }), deliveryId),
        await store.insertEvent(event('e7', other, 'co9'), deliveryId),
      ];
      const logs: Record<string, unknown> = {};
      for (const id of ['c-types', 'c-eu', 'c-any-tag', 'c-off', 'c-sync', 'c-other', 'c-co2']) logs[id] = await log(store, id);
      const bound = await store.getConsumer('c-co2');
      const ofEvent = await Promise.all(seqs.map((seq) => store.deliveryOfEvent('c-types', seq)));
      return named({ seqs, given, logs, ofEvent, bound: { company: bound?.company_id, rule: bound?.rule_type } }, { CLIENT: client, OTHER: other });
    });
    expect(postgres).toEqual(sqlite);
    expect(sqlite.given).toEqual(['d1', 'd2', 'd3', 'd4', 'd5', 'd6', 'd7', 'd8', 'd9', 'd10']);
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
      const ids = counter();
      for (const [i, [owner, company, type]] of ([
        [client, 'co1', 'read.completed'], [client, 'co1', 'sync.completed'], [other, 'co9', 'read.completed'], [client, null, 'read.completed'],
        [client, 'co1', 'read.completed'], [client, 'co2', 'read.completed'], [client, 'co1', 'read.completed'],
      ] as Array<[string, string | null, string]>).entries()) {
        await store.insertEvent(event(`e${i + 1}`, owner, company, { eventType: type, generated: `2026-02-01T00:00:0${i}Z` }), ids);
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
        duplicate: await refused(() => store.insertEvent(event('e1', client, 'co1'), ids)),
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
      await store.insertEvent(event('e1', client, 'co1'), counter());
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
});
