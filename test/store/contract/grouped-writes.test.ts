// The grouped calls a sync job makes instead of one per data type, on both stores: the
// account's data configurations for a platform, every data type (or custom identifier)
// in one read.
import { expect, it } from 'vitest';
import { clientMethods } from '../../../src/service/store/pg/clients.js';
import { companyMethods } from '../../../src/service/store/pg/companies.js';
import { deliveryMethods } from '../../../src/service/store/pg/deliveries.js';
import { eventMethods } from '../../../src/service/store/pg/events.js';
import { groupedMethods } from '../../../src/service/store/pg/grouped.js';
import type { Queryable } from '../../../src/service/store/pg/query.js';
import { settingMethods } from '../../../src/service/store/pg/settings.js';
import { deliveryIdOf } from '../../../src/service/store/events.js';
import { describePostgres } from '../../helpers/postgres.js';
import { deliveryNames, named } from './outbox.js';
import { onBoth } from './stores.js';

const methods = (db: Queryable) => ({
  ...clientMethods(db), ...settingMethods(db), ...groupedMethods(db), ...companyMethods(db), ...eventMethods(db), ...deliveryMethods(db),
});

describePostgres('grouped reads contract', () => {
  it('reads every configuration of a kind an account has for a platform at once, as readDataConfig reads each', async () => {
    const { sqlite, postgres } = await onBoth(methods, async (store) => {
      const created = '2024-01-01T00:00:00Z';
      const mine = (await store.insertClient({ name: 'Mine', plan: 'Paid', created })).id;
      const other = (await store.insertClient({ name: 'Other', plan: 'Paid', created })).id;
      const supplemental = (field: string) => ({ supplementalDataConfig: { extra: { pullData: { field } } } });
      await store.writeDataConfig('supplemental', mine, 'gbol', 'invoices', supplemental('a'));
      await store.writeDataConfig('supplemental', mine, 'gbol', 'bills', supplemental('b'));
      await store.writeDataConfig('supplemental', mine, 'qhyg', 'invoices', supplemental('other platform'));
      await store.writeDataConfig('supplemental', other, 'gbol', 'invoices', supplemental('other account'));
      await store.writeDataConfig('custom', mine, 'gbol', 'my-type', { dataSource: 'invoices', requiredData: { n: '$.number' } });
      const all = await store.readDataConfigs('supplemental', mine, 'gbol');
      return {
        supplemental: Object.fromEntries([...all].sort(([a], [b]) => a.localeCompare(b))),
        one: await store.readDataConfig('supplemental', mine, 'gbol', 'bills'),
        custom: Object.fromEntries(await store.readDataConfigs('custom', mine, 'gbol')),
        none: [...await store.readDataConfigs('custom', other, 'gbol')],
      };
    });
    expect(postgres).toEqual(sqlite);
    expect(sqlite).toEqual({
      supplemental: { bills: { supplementalDataConfig: { extra: { pullData: { field: 'b' } } } }, invoices: { supplementalDataConfig: { extra: { pullData: { field: 'a' } } } } },
      one: { supplementalDataConfig: { extra: { pullData: { field: 'b' } } } },
      custom: { 'my-type': { dataSource: 'invoices', requiredData: { n: '$.number' } } },
      none: [],
    });
  });
});

describePostgres('grouped event writes contract', () => {
  it('records several events in one write, each delivered to the consumers that want it, company-scoped ones included, in order', async () => {
    const { sqlite, postgres } = await onBoth(methods, async (store) => {
      const created = '2024-01-01T00:00:00Z';
      const client = (await store.insertClient({ name: 'Mine', plan: 'Paid', created })).id;
      const other = (await store.insertClient({ name: 'Other', plan: 'Paid', created })).id;
      const mine = await store.insertCompany(client, { name: 'A', tags: {} }, created);
      const theirs = await store.insertCompany(client, { name: 'B', tags: {} }, created);
      const consumer = (id: string, owner: string, types: string[], companyId: string | null) => store.insertConsumer({
        id, client_id: owner, url: 'https://example.test/hook', event_types: JSON.stringify(types), company_tags: null, company_id: companyId,
        rule_type: null, disabled: 0, disabled_reason: null, secret: Buffer.from('s'), created,
      });
      await consumer('all', client, ['data.read.completed', 'read.completed'], null);
      await consumer('only-b', client, ['data.read.completed'], theirs.id);
      await consumer('failed', client, ['data.read.failed'], null);
      await consumer('elsewhere', other, ['data.read.completed', 'read.completed'], null);
      const event = (id: string, eventType: string, companyId: string) => ({
        id, clientId: client, companyId, companyTags: [], eventType, generated: created, body: JSON.stringify({ id, eventType }),
      });
      const events = [event('e1', 'data.read.completed', mine.id), event('e2', 'data.read.completed', theirs.id), event('e3', 'read.completed', mine.id)];
      const seqs = await store.insertEvents(events);
      const d = deliveryNames([['e1', ['all']], ['e2', ['all', 'only-b']], ['e3', ['all']]]);
      // Each consumer's delivery of each event, where there is one.
      const delivered = async (consumerId: string) => (await Promise.all(events.map((e) => store.getDelivery(consumerId, deliveryIdOf(e.id, consumerId)))))
        .flatMap((found) => (found ? [{ id: found.id, event: found.event_id }] : []));
      return named({
        ordered: seqs.every((seq, i) => i === 0 || seq > seqs[i - 1]!),
        events: (await store.eventsAfter(client, 0, 10)).map((e) => [e.id, e.account_seq]),
        all: await delivered('all'),
        onlyB: await delivered('only-b'),
        failed: await delivered('failed'),
        elsewhere: await delivered('elsewhere'),
        none: await store.insertEvents([]),
      }, d);
    });
    expect(postgres).toEqual(sqlite);
    expect(sqlite).toEqual({
      ordered: true,
      events: [['e1', 1], ['e2', 2], ['e3', 3]],
      all: [{ id: 'd1', event: 'e1' }, { id: 'd2', event: 'e2' }, { id: 'd4', event: 'e3' }],
      onlyB: [{ id: 'd3', event: 'e2' }],
      failed: [],
      elsewhere: [],
      none: [],
    });
  });
});
