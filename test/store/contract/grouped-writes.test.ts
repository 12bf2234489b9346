// The grouped calls a sync job makes instead of one per data type, on both stores: the
// account's data configurations for a platform, every data type (or custom identifier)
// in one read.
import { expect, it } from 'vitest';
import { clientMethods } from '../../../src/service/store/pg/clients.js';
import { groupedMethods } from '../../../src/service/store/pg/grouped.js';
import type { Queryable } from '../../../src/service/store/pg/query.js';
import { settingMethods } from '../../../src/service/store/pg/settings.js';
import { describePostgres } from '../../helpers/postgres.js';
import { onBoth } from './stores.js';

const methods = (db: Queryable) => ({ ...clientMethods(db), ...settingMethods(db), ...groupedMethods(db) });

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
