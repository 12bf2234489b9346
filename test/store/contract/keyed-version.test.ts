// versionAndKey: a request's version and its key's lookup in one read. It answers the key
// and its account as findApiKeyByHash and getClient do, on both stores; on PostgreSQL's
// pool the requests that ask together share one round trip, each answered for its own key.
import { Pool } from 'pg';
import { expect, it } from 'vitest';
import { hashApiKey } from '../../../src/service/api-keys.js';
import { clientMethods } from '../../../src/service/store/pg/clients.js';
import { countPoolStatements } from '../../../src/service/store/pg/count-statements.js';
import type { Queryable } from '../../../src/service/store/pg/query.js';
import { versionMethods } from '../../../src/service/store/pg/version.js';
import { StatementTally } from '../../../src/service/store/statement-count.js';
import { describePostgres } from '../../helpers/postgres.js';
import { relabel } from './owners.js';
import { freshPostgres, onBoth } from './stores.js';

const methods = (db: Queryable) => ({ ...clientMethods(db), ...versionMethods(db) });
type Store = ReturnType<typeof methods>;

/** Two accounts, three keys of the first (one revoked) and one of the second. */
async function accounts(store: Store) {
  const names = new Map<string, string>();
  const owner = await store.insertClient({ name: 'Owner', plan: 'Paid', created: '2024-01-01T00:00:00Z', isAdmin: true });
  const other = await store.insertClient({ name: 'Other', plan: 'Free', created: '2024-01-02T00:00:00Z' });
  await store.setProfile(other.id, { redirectUrl: 'https://example.test/é', logo: null });
  names.set(owner.id, '<owner>').set(other.id, '<other>');
  const keys = [];
  for (const [i, client] of [owner, owner, owner, other].entries()) {
    const key = await store.insertApiKey(client.id, `2024-02-0${i + 1}T00:00:00Z`, `key ${i}`);
    names.set(key.id, `<key${i}>`);
    keys.push(key);
  }
  await store.revokeApiKey(keys[1]!.id, '2024-03-01T00:00:00Z');
  return { names, hashes: [...keys.map((key) => hashApiKey(key.apiKey)), hashApiKey('fy_unknown')] };
}

describePostgres('versionAndKey contract', () => {
  it('answers the key with the hash and its account, as findApiKeyByHash and getClient do, with the version', async () => {
    const { sqlite, postgres } = await onBoth(methods, async (store) => {
      const { names, hashes } = await accounts(store);
      const answers = [];
      for (const hash of hashes) {
        const { version, ...found } = await store.versionAndKey(hash);
        const key = await store.findApiKeyByHash(hash);
        const lookedUp = key ? { key, client: await store.getClient(key.client_id) } : {};
        answers.push({ found, same: JSON.stringify(found) === JSON.stringify(lookedUp), version: typeof version === 'string' && version === await store.dataVersion() });
      }
      return relabel(answers, names);
    });
    expect(postgres.map((a) => a.found)).toEqual(sqlite.map((a) => a.found));
    expect(sqlite.map((a) => a.same)).toEqual([true, true, true, true, true]);
    expect(postgres.map((a) => a.same)).toEqual([true, true, true, true, true]);
    // On SQLite nothing else writes: the version is the one dataVersion reads.
    expect(sqlite.map((a) => a.version)).toEqual([true, true, true, true, true]);
    expect(sqlite[1]!.found).toMatchObject({ key: { id: '<key1>', revoked: '2024-03-01T00:00:00Z' }, client: { id: '<owner>', is_admin: 1 } });
    expect(sqlite[3]!.found).toMatchObject({ key: { id: '<key3>' }, client: { id: '<other>', plan: 'Free' } });
    expect(sqlite[4]!.found).toEqual({});
  });

  it('on the pool, answers the calls made together from shared reads, each with its own key', async () => {
    const pool = await freshPostgres();
    // A pool of its own on the same schema, counted from its first connection.
    const counted = new Pool({ ...pool.options });
    const tally = new StatementTally();
    countPoolStatements(counted, tally);
    try {
      const { hashes } = await accounts(methods(pool));
      const expected: unknown[] = [];
      for (const hash of hashes) expected.push({ ...(await methods(pool).versionAndKey(hash)), version: undefined });
      const store = methods(counted);
      const calls = Array.from({ length: 40 }, (_, i) => (i % 7 === 6 ? store.dataVersion() : store.versionAndKey(hashes[i % hashes.length]!)));
      const answers = await Promise.all(calls);
      // One read in flight and one waiting, however many ask: at most two round trips for the forty.
      expect(tally.totals.statements).toBeGreaterThanOrEqual(1);
      expect(tally.totals.statements).toBeLessThanOrEqual(2);
      answers.forEach((answer, i) => {
        if (i % 7 === 6) expect(typeof answer).toBe('string');
        else {
          const keyed = answer as Awaited<ReturnType<Store['versionAndKey']>>;
          expect(typeof keyed.version).toBe('string');
          expect({ ...keyed, version: undefined }).toEqual(expected[i % hashes.length]);
        }
      });
    } finally {
      await counted.end();
      await pool.end();
    }
  });
});
