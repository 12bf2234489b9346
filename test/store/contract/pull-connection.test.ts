// What a pull reads before it fetches (getPullConnection: the connection, its sealed tokens,
// its company's client id and which kinds of data configuration its account has for the
// platform, in one statement) and markLinked's returned row answer on
// PostgreSQL as on SQLite, and as the separate reads they stand in for do.
import { expect, it } from 'vitest';
import { connectionMethods } from '../../../src/service/store/pg/connections.js';
import type { Queryable } from '../../../src/service/store/pg/query.js';
import { settingMethods } from '../../../src/service/store/pg/settings.js';
import { describePostgres } from '../../helpers/postgres.js';
import { makeOwners, pgOwners, relabel } from './owners.js';
import { onBoth } from './stores.js';

const methods = (db: Queryable) => ({ ...connectionMethods(db), ...settingMethods(db), ...pgOwners(db) });

describePostgres('a pull connection and a linked row', () => {
  it('reads the connection, its tokens and its client id together, as the separate reads give them', async () => {
    const { sqlite, postgres } = await onBoth(methods, async (store) => {
      const o = await makeOwners(store);
      await store.storeTokens(o.a1, Buffer.from([0, 1, 2, 250, 255]), '2024-01-02T00:00:00Z');
      const linked = await store.markLinked(o.a1, { tenant: 'x', nested: { b: 1, a: [true, null] } });
      const linkedAgain = await store.markLinked(o.b1, null);
      const written = {
        linked,
        linkedRead: await store.getConnection(o.a, o.a1),
        linkedAgain,
        linkedAgainRead: await store.getConnection(o.b, o.b1),
        linkedMissing: await store.markLinked('no-connection', null),
      };
      await store.setLastSync(o.a1, o.a, '2024-01-03T00:00:00Z');
      await store.deauthorize(o.a2, { statusCode: '401', statusText: 'Unauthorized', status: 'Active', errorMessage: 'revoked', erroredOnUtc: '2024-01-04T00:00:00Z' });
      const apart = async (id: string) => ({ connection: await store.getConnectionById(id), sealed: await store.loadSealedTokens(id) });
      const answers = {
        ...written,
        withTokens: await store.getPullConnection(o.a1),
        withTokensApart: await apart(o.a1),
        without: await store.getPullConnection(o.a2),
        withoutApart: await apart(o.a2),
        missing: await store.getPullConnection('no-connection'),
      };
      await store.storeTokens(o.a1, Buffer.from('resealed'), '2024-01-05T00:00:00Z');
      // A configuration for a1's platform (gbol), none for a2's (qhyg).
      await store.writeDataConfig('custom', o.client, 'gbol', 'my-type', { dataSource: 'invoices' });
      return relabel({ ...answers, resealed: await store.getPullConnection(o.a1), otherPlatform: await store.getPullConnection(o.a2) }, o.names);
    });
    expect(postgres).toEqual(sqlite);
    expect(sqlite.linked).toEqual(sqlite.linkedRead);
    expect(sqlite.linked).toMatchObject({ status: 'Linked', errors: null });
    expect(sqlite.linkedAgain).toEqual(sqlite.linkedAgainRead);
    expect(sqlite.linkedMissing).toBeUndefined();
    const none = { supplemental: false, custom: false };
    expect(sqlite.withTokens).toEqual({ ...sqlite.withTokensApart, clientId: '<client>', configured: none });
    expect(sqlite.withTokens?.sealed).toEqual(Buffer.from([0, 1, 2, 250, 255]));
    expect(sqlite.withTokens?.connection).toMatchObject({ status: 'Linked', last_sync: '2024-01-03T00:00:00Z' });
    expect(sqlite.without).toEqual({ connection: sqlite.withoutApart.connection, sealed: undefined, clientId: '<client>', configured: none });
    expect(sqlite.without?.connection.status).toBe('Deauthorized');
    expect(sqlite.missing).toBeUndefined();
    expect(sqlite.resealed?.sealed).toEqual(Buffer.from('resealed'));
    expect(sqlite.resealed?.configured).toEqual({ supplemental: false, custom: true });
    expect(sqlite.otherPlatform?.configured).toEqual(none);
  });
});
