// The client group: accounts, their profiles and API keys, and their pages, answer on
// PostgreSQL as on SQLite. Ids and keys are random in both stores, so answers name them by
// the order they were made in (relabel) before they are compared.
import { expect, it } from 'vitest';
import { hashApiKey } from '../../../src/service/api-keys.js';
import type { Plan } from '../../../src/service/store/clients.js';
import type { PageRequest } from '../../../src/service/store/paging.js';
import { clientMethods } from '../../../src/service/store/pg/clients.js';
import { describePostgres } from '../../helpers/postgres.js';
import { outcome, relabel } from './owners.js';
import { onBoth } from './stores.js';

type Store = ReturnType<typeof clientMethods>;

/** Names ids (and keys) by the order they were made: `<client1>`, `<key2>`… */
function namer() {
  const names = new Map<string, string>();
  return { names, name: (value: string, kind: string) => names.set(value, `<${kind}${names.size + 1}>`) };
}

const CLIENTS: Array<{ name: string; plan: Plan; created: string; isAdmin?: boolean }> = [
  { name: 'Acme Ltd', plan: 'Paid', created: '2021-01-01T00:00:00Z', isAdmin: true },
  { name: 'acme holdings', plan: 'Free', created: '2021-06-01T12:00:00Z' },
  { name: 'Émile', plan: 'Free', created: '2020-12-31T23:59:59Z' },
  { name: 'zeta', plan: 'Paid', created: '2022-01-01T00:00:00Z', isAdmin: true },
  { name: 'Beta', plan: 'Free', created: '2021-06-01T12:00:00Z' },
  { name: 'beta', plan: 'Paid', created: '2021-03-01T00:00:00Z', isAdmin: false },
  { name: 'ACME LTD', plan: 'Free', created: '2023-01-01T00:00:00Z' },
];

/** Every page of `request` at `pageSize`, and the page past the end. */
async function allPages<Row>(list: (request: PageRequest) => Promise<{ rows: Row[]; total: number }>, request: Omit<PageRequest, 'page' | 'pageSize'>, pageSize: number) {
  const pages = [];
  for (let page = 1; page <= 4; page++) pages.push(await list({ ...request, page, pageSize }));
  return pages;
}

describePostgres('client store contract', () => {
  it('inserts and reads clients, profiles and the admin client', async () => {
    const { sqlite, postgres } = await onBoth(clientMethods, async (store) => {
      const { names, name } = namer();
      const noAdmin = await store.findAdminClient();
      const plain = await store.insertClient({ name: 'Plain', plan: 'Free', created: '2024-01-01T00:00:00Z' });
      name(plain.id, 'client');
      const admin = await store.insertClient({ name: 'Admin', plan: 'Paid', created: '2024-01-02T00:00:00Z', isAdmin: true });
      name(admin.id, 'client');
      const second = await store.insertClient({ name: 'Second admin', plan: 'Paid', created: '2024-01-03T00:00:00Z', isAdmin: true });
      name(second.id, 'client');
      await store.setProfile(plain.id, { redirectUrl: 'https://example.test/é?a=1', logo: null, allowed: ['a', 'b'], nested: { z: 1, a: 2 } });
      await store.setProfile('missing', { redirectUrl: 'x' });
      const answers = {
        noAdmin,
        inserted: [plain, admin, second],
        got: await store.getClient(plain.id),
        gotAdmin: await store.getClient(admin.id),
        missing: await store.getClient('missing'),
        admin: await store.findAdminClient(),
        badPlan: await outcome(() => store.insertClient({ name: 'x', plan: 'Gold' as Plan, created: '2024-01-01T00:00:00Z' })),
      };
      return relabel(answers, names);
    });
    expect(postgres).toEqual(sqlite);
    expect(sqlite.got?.profile).toBe('{"redirectUrl":"https://example.test/é?a=1","logo":null,"allowed":["a","b"],"nested":{"z":1,"a":2}}');
    expect(sqlite.admin?.id).toBe('<client2>');
    expect(sqlite.badPlan).toBe('rejected');
  });

  it('makes, finds, revokes and pages API keys', async () => {
    const { sqlite, postgres } = await onBoth(clientMethods, async (store) => {
      const { names, name } = namer();
      const owner = (await store.insertClient({ name: 'Owner', plan: 'Paid', created: '2024-01-01T00:00:00Z' })).id;
      name(owner, 'client');
      const other = (await store.insertClient({ name: 'Other', plan: 'Free', created: '2024-01-01T00:00:00Z' })).id;
      name(other, 'client');
      const keys = [];
      for (let i = 0; i < 5; i++) {
        const made = await store.insertApiKey(owner, `2024-02-0${i + 1}T00:00:00Z`, i % 2 === 0 ? `key ${i}` : undefined);
        name(made.id, 'key');
        name(made.apiKey, 'secret');
        keys.push(made);
      }
      const foreign = await store.insertApiKey(other, '2024-03-01T00:00:00Z', null);
      name(foreign.id, 'key');
      name(foreign.apiKey, 'secret');
      await store.revokeApiKey(keys[1]!.id, '2024-04-01T00:00:00Z');
      // Revoked once: a second revocation keeps the first time.
      await store.revokeApiKey(keys[1]!.id, '2024-05-01T00:00:00Z');
      await store.revokeApiKey(keys[3]!.id, '2024-04-02T00:00:00Z');
      await store.revokeApiKey('missing', '2024-04-02T00:00:00Z');
      const list = (request: PageRequest) => store.listApiKeys(owner, request);
      const answers = {
        keys,
        shapes: keys.map((key) => /^fy_[A-Za-z0-9_-]{32}$/.test(key.apiKey)),
        byHash: await Promise.all(keys.map((key) => store.findApiKeyByHash(hashApiKey(key.apiKey)))),
        unknownHash: await store.findApiKeyByHash(hashApiKey('fy_nope')),
        got: await store.getApiKey(owner, keys[1]!.id),
        // In no particular order: named, then sorted.
        live: (await store.liveApiKeyIds([keys[0]!.id, keys[1]!.id, keys[3]!.id, foreign.id, 'missing'])).map((id) => names.get(id)).sort(),
        liveOfNone: await store.liveApiKeyIds([]),
        wrongClient: await store.getApiKey(other, keys[1]!.id),
        missing: await store.getApiKey(owner, 'missing'),
        pages: await allPages(list, {}, 2),
        active: await allPages(list, { query: 'revoked=null' }, 2),
        revokedLate: await list({ page: 1, pageSize: 10, query: 'revoked>2024-04-01T12:00:00Z' }),
        newest: await allPages(list, { orderBy: '-created' }, 2),
        byRevoked: await list({ page: 1, pageSize: 10, orderBy: '-revoked' }),
        mixed: await list({ page: 1, pageSize: 10, query: 'id!=null && {created<2024-02-02 || created>=2024-02-04T00:00:00+00:00}', orderBy: 'revoked,-created' }),
        others: await store.listApiKeys(other, { page: 1, pageSize: 10 }),
        nobody: await store.listApiKeys('missing', { page: 1, pageSize: 10 }),
        unknownField: await outcome(() => list({ page: 1, pageSize: 10, query: 'name=x' })),
        noClient: await outcome(() => store.insertApiKey('missing', '2024-01-01T00:00:00Z')),
      };
      return relabel(answers, names);
    });
    expect(postgres).toEqual(sqlite);
    expect(sqlite.shapes).toEqual([true, true, true, true, true]);
    expect(sqlite.got?.revoked).toBe('2024-04-01T00:00:00Z');
    expect(sqlite.live).toEqual(['<key13>', '<key3>']); // keys[0] and the other account's: the revoked and the unknown are not live
    expect(sqlite.liveOfNone).toEqual([]);
    expect(sqlite.active.map((page) => page.total)).toEqual([3, 3, 3, 3]);
    expect(sqlite.noClient).toBe('rejected');
    expect(sqlite.unknownField).toBe('rejected');
  });

  it('pages clients with query= and orderBy=', async () => {
    const { sqlite, postgres } = await onBoth(clientMethods, async (store: Store) => {
      const { names, name } = namer();
      for (const client of CLIENTS) name((await store.insertClient(client)).id, 'client');
      const list = (request: Omit<PageRequest, 'page' | 'pageSize'>) => allPages((r) => store.listClients(r), request, 3);
      const answers = {
        all: await list({}),
        paid: await list({ query: 'plan=paid' }),
        acmeNewest: await list({ query: 'name~ACME', orderBy: '-created' }),
        byName: await list({ orderBy: 'name' }),
        byPlanThenName: await list({ orderBy: 'plan,-name' }),
        adminsLast: await list({ orderBy: 'isAdmin,-created' }),
        admins: await list({ query: 'isAdmin=true' }),
        notAdmins: await list({ query: 'isAdmin!=true' }),
        lateFree: await list({ query: 'created>=2021-06-01T12:00:00Z && plan!=Paid' }),
        atInstant: await list({ query: 'created=2021-06-01T14:00:00+02:00' }),
        asciiOnly: await list({ query: 'name=émile || name=acme ltd' }),
        nonAscii: await list({ query: 'name=Émile' }),
        emptyContains: await list({ query: 'name~""' }),
        unknownField: await outcome(() => store.listClients({ page: 1, pageSize: 3, query: 'profile=x' })),
        unknownOrder: await outcome(() => store.listClients({ page: 1, pageSize: 3, orderBy: 'profile' })),
        badDate: await outcome(() => store.listClients({ page: 1, pageSize: 3, query: 'created>2021-02-30' })),
      };
      return relabel(answers, names);
    });
    expect(postgres).toEqual(sqlite);
    expect(sqlite.all[0]!.total).toBe(7);
    expect(sqlite.all[3]!.rows).toEqual([]);
    expect(sqlite.byName.flatMap((page) => page.rows.map((client) => client.name)))
      .toEqual(['acme holdings', 'Acme Ltd', 'ACME LTD', 'Beta', 'beta', 'zeta', 'Émile']);
    expect(sqlite.atInstant[0]!.total).toBe(2);
    expect(sqlite.unknownField).toBe('rejected');
  });
});
