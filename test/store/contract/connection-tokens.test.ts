// A connection and its sealed tokens in one read (getConnectionWithTokens) answer on
// PostgreSQL as on SQLite, and as getConnectionById and loadSealedTokens do apart.
import { expect, it } from 'vitest';
import { connectionMethods } from '../../../src/service/store/pg/connections.js';
import type { Queryable } from '../../../src/service/store/pg/query.js';
import { describePostgres } from '../../helpers/postgres.js';
import { makeOwners, pgOwners, relabel } from './owners.js';
import { onBoth } from './stores.js';

const methods = (db: Queryable) => ({ ...connectionMethods(db), ...pgOwners(db) });

describePostgres('a connection with its tokens', () => {
  it('reads the connection and its sealed tokens together, as the two reads give them', async () => {
    const { sqlite, postgres } = await onBoth(methods, async (store) => {
      const o = await makeOwners(store);
      await store.storeTokens(o.a1, Buffer.from([0, 1, 2, 250, 255]), '2024-01-02T00:00:00Z');
      await store.markLinked(o.a1, { tenant: 'x' });
      await store.setLastSync(o.a1, o.a, '2024-01-03T00:00:00Z');
      await store.deauthorize(o.a2, { statusCode: '401', statusText: 'Unauthorized', status: 'Active', errorMessage: 'revoked', erroredOnUtc: '2024-01-04T00:00:00Z' });
      const both = async (id: string) => ({
        together: await store.getConnectionWithTokens(id),
        apart: { connection: await store.getConnectionById(id), sealed: await store.loadSealedTokens(id) },
      });
      const answers = { withTokens: await both(o.a1), without: await both(o.a2), missing: await both('no-connection') };
      await store.storeTokens(o.a1, Buffer.from('resealed'), '2024-01-05T00:00:00Z');
      return relabel({ ...answers, resealed: await store.getConnectionWithTokens(o.a1) }, o.names);
    });
    expect(postgres).toEqual(sqlite);
    expect(sqlite.withTokens.together).toEqual(sqlite.withTokens.apart);
    expect(sqlite.withTokens.together?.sealed).toEqual(Buffer.from([0, 1, 2, 250, 255]));
    expect(sqlite.withTokens.together?.connection).toMatchObject({ status: 'Linked', last_sync: '2024-01-03T00:00:00Z' });
    expect(sqlite.without.together).toEqual({ connection: sqlite.without.apart.connection, sealed: undefined });
    expect(sqlite.without.together?.connection.status).toBe('Deauthorized');
    expect(sqlite.missing.together).toBeUndefined();
    expect(sqlite.resealed?.sealed).toEqual(Buffer.from('resealed'));
  });
});
