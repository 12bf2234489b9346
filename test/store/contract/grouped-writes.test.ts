// The grouped calls a sync job makes instead of one per data type, on both stores: the
// account's data configurations for a platform, every data type (or custom identifier)
// in one read.
import { expect, it } from 'vitest';
import { wantsEvent } from '../../../src/service/events/wants.js';
import { clientMethods } from '../../../src/service/store/pg/clients.js';
import { companyMethods } from '../../../src/service/store/pg/companies.js';
import { deliveryMethods } from '../../../src/service/store/pg/deliveries.js';
import { eventMethods } from '../../../src/service/store/pg/events.js';
import { groupedMethods } from '../../../src/service/store/pg/grouped.js';
import type { Queryable } from '../../../src/service/store/pg/query.js';
import { settingMethods } from '../../../src/service/store/pg/settings.js';
import { describePostgres } from '../../helpers/postgres.js';
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
  it('records several events in one write, each with the deliveries its caller chose from the consumers read once, company-scoped ones included', async () => {
    const { sqlite, postgres } = await onBoth(methods, async (store) => {
      const created = '2024-01-01T00:00:00Z';
      const client = (await store.insertClient({ name: 'Mine', plan: 'Paid', created })).id;
      const mine = await store.insertCompany(client, { name: 'A', tags: {} }, created);
      const theirs = await store.insertCompany(client, { name: 'B', tags: {} }, created);
      const consumer = (id: string, types: string[], companyId: string | null) => store.insertConsumer({
        id, client_id: client, url: 'https://example.test/hook', event_types: JSON.stringify(types), company_tags: null, company_id: companyId,
        rule_type: null, disabled: 0, disabled_reason: null, secret: Buffer.from('s'), created,
      });
      await consumer('all', ['data.read.completed', 'read.completed'], null);
      await consumer('only-b', ['data.read.completed'], theirs.id);
      await consumer('failed', ['data.read.failed'], null);
      const consumers = await store.eventConsumers(client);
      const event = (id: string, eventType: string, companyId: string) => ({
        id, clientId: client, companyId, companyTags: [], eventType, generated: created, body: JSON.stringify({ id, eventType }),
      });
      const events = [event('e1', 'data.read.completed', mine.id), event('e2', 'data.read.completed', theirs.id), event('e3', 'read.completed', mine.id)];
      let n = 0;
      const seqs = await store.insertEvents(events.map((e) => ({
        event: e, deliveries: consumers.filter((c) => wantsEvent(c, e)).map((c) => ({ id: `d${++n}`, consumerId: c.id })),
      })));
      const delivered = async (consumerId: string, ids: string[]) => (await Promise.all(ids.map((id) => store.getDelivery(consumerId, id))))
        .flatMap((d) => (d ? [{ id: d.id, event: d.event_id }] : []));
      return {
        consumers: consumers.map((c) => c.id),
        ordered: seqs.every((seq, i) => i === 0 || seq > seqs[i - 1]!),
        events: (await store.eventsAfter(client, 0, 10)).map((e) => [e.id, e.account_seq]),
        all: await delivered('all', ['d1', 'd2', 'd3', 'd4']),
        onlyB: await delivered('only-b', ['d1', 'd2', 'd3', 'd4']),
        failed: await delivered('failed', ['d1', 'd2', 'd3', 'd4']),
      };
    });
    expect(postgres).toEqual(sqlite);
    expect(sqlite).toEqual({
      consumers: ['all', 'only-b', 'failed'],
      ordered: true,
      events: [['e1', 1], ['e2', 2], ['e3', 3]],
      all: [{ id: 'd1', event: 'e1' }, { id: 'd2', event: 'e2' }, { id: 'd4', event: 'e3' }],
      onlyB: [{ id: 'd3', event: 'e2' }],
      failed: [],
    });
  });
});
