// The connection group: connections, their tokens, errors and refresh lease, and their
// pages, answer on PostgreSQL as on SQLite; the refresh lease holds across processes.
// Ids are random in both stores, so answers name them (relabel) before they are compared.
import { expect, it } from 'vitest';
import type { ConnectionError } from '../../../src/service/store/connections.js';
import type { PagePlan, PageRequest } from '../../../src/service/store/paging.js';
import { clientMethods } from '../../../src/service/store/pg/clients.js';
import { companyMethods } from '../../../src/service/store/pg/companies.js';
import { connectionMethods } from '../../../src/service/store/pg/connections.js';
import { runPgPagePlan } from '../../../src/service/store/pg/paging.js';
import type { Queryable } from '../../../src/service/store/pg/query.js';
import { describePostgres } from '../../helpers/postgres.js';
import { outcome, relabel, secondPool } from './owners.js';
import { freshPostgres, onBoth } from './stores.js';

const methods = (db: Queryable) => ({
  ...clientMethods(db), ...companyMethods(db), ...connectionMethods(db), runPage: <Row>(plan: PagePlan) => runPgPagePlan<Row>(db, plan),
});
type Store = ReturnType<typeof methods>;

const CREATED = '2024-01-01T00:00:00Z';

/** A client, companies a and b, connections a1…a5 of a and b1 of b. */
async function seed(store: Store) {
  const names = new Map<string, string>();
  const label = (id: string, name: string) => {
    names.set(id, `<${name}>`);
    return id;
  };
  const client = label((await store.insertClient({ name: 'Owner', plan: 'Paid', created: CREATED })).id, 'client');
  const a = label((await store.insertCompany(client, { name: 'A', tags: {} }, CREATED)).id, 'a');
  const b = label((await store.insertCompany(client, { name: 'B', tags: {} }, CREATED)).id, 'b');
  const specs: Array<[string, string, string, string]> = [
    ['a1', 'gbol', 'xero-1', '2024-01-02T00:00:00Z'],
    ['a2', 'qhyg', 'QBO-2', '2024-01-01T12:00:00Z'],
    ['a3', 'GBOL', 'xero-3', '2024-01-03T00:00:00Z'],
    ['a4', 'mqjo', 'sage', '2024-01-01T12:00:00Z'],
    ['a5', 'gbol', 'xero-5', '2023-12-31T23:00:00Z'],
  ];
  const connections: Record<string, string> = {};
  for (const [name, key, source, created] of specs) connections[name] = label((await store.insertConnection(a, key, source, created)).id, name);
  connections.b1 = label((await store.insertConnection(b, 'gbol', 'xero-b', CREATED)).id, 'b1');
  return { client, a, b, c: connections, names };
}

const ERROR: ConnectionError = { statusCode: '401', statusText: 'Unauthorized', errorMessage: 'invalid_grant: "token" revoked ẞ', erroredOnUtc: '2024-02-01T00:00:00Z', status: 'Deauthorized' };

describePostgres('connection store contract', () => {
  it('inserts, reads, groups, updates and deletes connections', async () => {
    const { sqlite, postgres } = await onBoth(methods, async (store) => {
      const { a, b, c, names } = await seed(store);
      const inserted = await store.getConnection(a, c.a1!);
      await store.setConnectionStatus(c.a2!, 'Linked');
      await store.setConnectionStatus('missing', 'Linked');
      const badStatus = await outcome(() => store.setConnectionStatus(c.a2!, 'Broken' as never));
      await store.setLastSync(c.a3!, a, '2024-03-01T00:00:00Z');
      await store.setLastSync('missing', 'missing', '2024-03-01T00:00:00Z');
      const grouped = await store.connectionsByCompany([b, 'missing', a]);
      await store.deleteConnection(c.a4!);
      await store.deleteConnection('missing');
      const answers = {
        inserted,
        wrongCompany: await store.getConnection(b, c.a1!),
        missing: await store.getConnection(a, 'missing'),
        withCompany: await store.getCompanyConnection(a, c.a1!),
        withCompanyWrong: await store.getCompanyConnection(b, c.a1!),
        withCompanyNoConnection: await store.getCompanyConnection(a, 'missing'),
        withCompanyNone: await store.getCompanyConnection('missing', c.a1!),
        byId: await store.getConnectionById(c.a2!),
        byIdMissing: await store.getConnectionById('missing'),
        badStatus,
        afterBadStatus: (await store.getConnectionById(c.a2!))?.status,
        lastSync: [await store.getConnectionById(c.a3!), await store.getCompany(a)],
        grouped,
        groupedNone: await store.connectionsByCompany([]),
        groupedUnknown: await store.connectionsByCompany(['missing']),
        deleted: await store.getConnectionById(c.a4!),
        afterDelete: await store.connectionsByCompany([a]),
        allOfCompany: await store.getCompanyWithConnections(a),
        allOfCompanyB: await store.getCompanyWithConnections(b),
        allOfNone: await (async () => {
          const lone = (await store.insertCompany((await store.getCompany(a))!.client_id, { name: 'Lone', tags: {} }, CREATED)).id;
          names.set(lone, '<lone>');
          return store.getCompanyWithConnections(lone);
        })(),
        allOfMissing: await store.getCompanyWithConnections('missing'),
        noCompany: await outcome(() => store.insertConnection('missing', 'gbol', 'x', CREATED)),
      };
      return relabel(answers, names);
    });
    expect(postgres).toEqual(sqlite);
    expect(sqlite.inserted?.status).toBe('PendingAuth');
    expect([sqlite.withCompany?.company.id, sqlite.withCompany?.company.name, sqlite.withCompany?.connection]).toEqual(['<a>', 'A', sqlite.inserted]);
    expect([sqlite.withCompanyWrong?.company.name, sqlite.withCompanyWrong?.connection, sqlite.withCompanyNoConnection?.connection]).toEqual(['B', undefined, undefined]);
    expect(sqlite.withCompanyNone).toBeUndefined();
    expect([...sqlite.grouped.keys()]).toEqual(['<a>', '<b>']);
    expect(sqlite.badStatus).toBe('rejected');
    expect(sqlite.noCompany).toBe('rejected');
    // The company as getCompany reads it, with what connectionsByCompany gives it, in one read.
    expect(sqlite.allOfCompany).toEqual({ company: sqlite.lastSync[1], connections: sqlite.afterDelete.get('<a>') });
    expect(sqlite.allOfCompany?.connections.map((n) => n.id)).toEqual(['<a1>', '<a2>', '<a3>', '<a5>']);
    expect(sqlite.allOfCompanyB?.connections.map((n) => n.id)).toEqual(['<b1>']);
    expect(sqlite.allOfNone).toMatchObject({ company: { name: 'Lone' }, connections: [] });
    expect(sqlite.allOfMissing).toBeUndefined();
  });

  it('stores tokens, deauthorizes and links again', async () => {
    const { sqlite, postgres } = await onBoth(methods, async (store) => {
      const { c, names } = await seed(store);
      const none = await store.loadSealedTokens(c.a1!);
      await store.storeTokens(c.a1!, Buffer.from([0, 1, 2, 255]), '2024-02-01T00:00:00Z');
      const first = await store.loadSealedTokens(c.a1!);
      await store.storeTokens(c.a1!, Buffer.from('sealed again\u0000'), '2024-02-02T00:00:00Z');
      await store.deauthorize(c.a2!, ERROR);
      const once = await store.getConnectionById(c.a2!);
      await store.deauthorize(c.a2!, { ...ERROR, statusCode: '400', erroredOnUtc: '2024-02-02T00:00:00Z' });
      const twice = await store.getConnectionById(c.a2!);
      await store.markLinked(c.a2!, { tenantId: 't-1', nested: { b: 1, a: [true, null] } });
      const linked = await store.getConnectionById(c.a2!);
      await store.deauthorize(c.a2!, ERROR);
      const again = await store.getConnectionById(c.a2!);
      await store.markLinked(c.a3!, null);
      await store.markLinked(c.a5!, '');
      // With its tokens: both written together, replaced together; a missing connection gets neither.
      const withTokens = await store.markLinked(c.a4!, { tenantId: 't-4' }, { sealed: Buffer.from([9, 0, 8]), updated: '2024-02-03T00:00:00Z' });
      const tokensLinked = await store.loadSealedTokens(c.a4!);
      await store.markLinked(c.a4!, null, { sealed: Buffer.from('replaced'), updated: '2024-02-04T00:00:00Z' });
      const tokensReplaced = await store.loadSealedTokens(c.a4!);
      const linkMissing = await outcome(() => store.markLinked('missing', null, { sealed: Buffer.from('x'), updated: '2024-02-04T00:00:00Z' }));
      await store.deauthorize('missing', ERROR);
      const answers = {
        none, first,
        second: await store.loadSealedTokens(c.a1!),
        missing: await store.loadSealedTokens('missing'),
        noConnection: await outcome(() => store.storeTokens('missing', Buffer.from('x'), '2024-02-01T00:00:00Z')),
        once, twice, linked, again, withTokens, tokensLinked, tokensReplaced, linkMissing,
        relinked: await store.getConnectionById(c.a4!),
        linkedNoInfo: await store.getConnectionById(c.a3!),
        linkedEmptyInfo: await store.getConnectionById(c.a5!),
        afterDelete: await (async () => {
          await store.deleteConnection(c.a1!);
          return store.loadSealedTokens(c.a1!);
        })(),
      };
      return relabel(answers, names);
    });
    expect(postgres).toEqual(sqlite);
    expect(Buffer.isBuffer(postgres.second)).toBe(true);
    expect(sqlite.twice?.errors).toBe(`[${JSON.stringify(ERROR)},${JSON.stringify({ ...ERROR, statusCode: '400', erroredOnUtc: '2024-02-02T00:00:00Z' })}]`);
    expect(sqlite.again?.errors).toBe(`[${JSON.stringify(ERROR)}]`);
    expect(sqlite.noConnection).toBe('rejected');
    expect(sqlite.withTokens).toMatchObject({ status: 'Linked', connection_info: '{"tenantId":"t-4"}' });
    expect(sqlite.tokensLinked).toEqual(Buffer.from([9, 0, 8]));
    expect(sqlite.tokensReplaced).toEqual(Buffer.from('replaced'));
    expect(sqlite.relinked?.connection_info).toBeNull();
    expect(sqlite.linkMissing).toBe('rejected');
  });

  it('takes, refuses, renews and releases the refresh lease, renewing and releasing only the holder\'s', async () => {
    const { sqlite, postgres } = await onBoth(methods, async (store) => {
      const { c } = await seed(store);
      const id = c.a1!;
      const now = 1_700_000_000_000;
      // SELECT * reads the lease column too, though ConnectionRow does not name it.
      const lockUntil = async (connection: string) => ((await store.getConnectionById(connection)) as { refresh_lock_until?: number | null } | undefined)?.refresh_lock_until;
      const answers = [
        await store.takeRefreshLease(id, now, now + 30_000),
        // Taken twice: refused until it has run out.
        await store.takeRefreshLease(id, now + 1, now + 30_001),
        await store.takeRefreshLease(id, now + 30_000, now + 60_000),
        await lockUntil(id),
        await store.takeRefreshLease(id, now + 30_001, now + 60_000),
        await lockUntil(id),
        // The first holder, slower than its lease: its token is gone, so it renews and frees nothing.
        await store.renewRefreshLease(id, now + 30_000, now + 70_000),
        await store.releaseRefreshLease(id, now + 30_000),
        await lockUntil(id),
        // The second holder renews its own, then frees it.
        await store.renewRefreshLease(id, now + 60_000, now + 90_000),
        await lockUntil(id),
        await store.releaseRefreshLease(id, now + 60_000),
        await lockUntil(id),
        await store.releaseRefreshLease(id, now + 90_000),
        await lockUntil(id),
        await store.renewRefreshLease(id, now + 90_000, now + 120_000),
        await store.takeRefreshLease(id, now, now + 1),
        await store.takeRefreshLease(c.a2!, now, now + 1),
        await store.takeRefreshLease('missing', now, now + 1),
        await store.renewRefreshLease('missing', now, now + 1),
        await store.releaseRefreshLease('missing', now),
      ];
      return answers;
    });
    expect(postgres).toEqual(sqlite);
    expect(sqlite).toEqual([
      true, false, false, 1_700_000_030_000, true, 1_700_000_060_000,
      false, undefined, 1_700_000_060_000,
      true, 1_700_000_090_000, undefined, 1_700_000_090_000, undefined, null,
      false, true, true, false, false, undefined,
    ]);
  });

  it('pages connections with query= and orderBy=, through listConnections and connectionsPage', async () => {
    const { sqlite, postgres } = await onBoth(methods, async (store) => {
      const { a, b, c, names } = await seed(store);
      await store.setConnectionStatus(c.a1!, 'Linked');
      await store.setConnectionStatus(c.a3!, 'Unlinked');
      await store.setLastSync(c.a1!, a, '2024-02-01T00:00:00Z');
      await store.setLastSync(c.a5!, a, '2024-01-15T00:00:00Z');
      const pages = async (request: Omit<PageRequest, 'page' | 'pageSize'>) => {
        const out = [];
        for (let page = 1; page <= 4; page++) out.push(await store.listConnections(a, { ...request, page, pageSize: 2 }));
        return out;
      };
      const answers = {
        all: await pages({}),
        gbol: await pages({ query: 'integrationKey=gbol' }),
        bySource: await pages({ orderBy: '-sourceId' }),
        byStatus: await pages({ orderBy: 'status,-created' }),
        lastSync: await pages({ orderBy: '-lastSync' }),
        synced: await pages({ query: 'lastSync>=2024-01-15 && status!=Unlinked' }),
        notLinked: await pages({ query: 'status!=linked', orderBy: 'integrationKey' }),
        created: await pages({ query: 'created=2024-01-01T12:00:00Z || sourceId~XERO-' }),
        plan: await store.runPage(store.connectionsPage(a, { page: 2, pageSize: 2, orderBy: 'created' })),
        otherCompany: await store.listConnections(b, { page: 1, pageSize: 2 }),
        nobody: await store.listConnections('missing', { page: 1, pageSize: 2 }),
        unknownField: await outcome(() => store.listConnections(a, { page: 1, pageSize: 2, query: 'errors=x' })),
        badPlan: await outcome(async () => store.connectionsPage(a, { page: 1, pageSize: 2, orderBy: 'errors' })),
      };
      return relabel(answers, names);
    });
    expect(postgres).toEqual(sqlite);
    expect(sqlite.all[0]!.total).toBe(5);
    expect(sqlite.gbol[0]!.total).toBe(3);
    expect(sqlite.synced[0]!.total).toBe(2);
    expect(sqlite.unknownField).toBe('rejected');
  });

  it('gives the refresh lease to exactly one of two processes racing for it', async () => {
    const pool = await freshPostgres();
    const other = secondPool(pool);
    try {
      const mine = methods(pool);
      const theirs = connectionMethods(other);
      const { c } = await seed(mine);
      const now = 1_700_000_000_000;
      for (let round = 0; round < 10; round++) {
        const takers = [mine, theirs, mine, theirs, mine, theirs, mine, theirs];
        const taken = await Promise.all(takers.map((store) => store.takeRefreshLease(c.a1!, now + round, now + round + 30_000)));
        expect(taken.filter(Boolean)).toHaveLength(1);
        await mine.releaseRefreshLease(c.a1!, now + round + 30_000);
      }
    } finally {
      await other.end();
      await pool.end();
    }
  });
});
