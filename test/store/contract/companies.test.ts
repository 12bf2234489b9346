// The company group: companies, their tags and products, and companiesPage run through
// runPage (the tag filter, query= and orderBy=, page after page), answer on PostgreSQL as
// on SQLite. Ids are random in both stores, so answers name them (relabel) before they are
// compared.
import { expect, it } from 'vitest';
import type { CompanyInput } from '../../../src/service/store/companies.js';
import { newCompanyRow } from '../../../src/service/store/store.js';
import type { PagePlan, PageRequest } from '../../../src/service/store/paging.js';
import { clientMethods } from '../../../src/service/store/pg/clients.js';
import { companyMethods } from '../../../src/service/store/pg/companies.js';
import { deliveryMethods } from '../../../src/service/store/pg/deliveries.js';
import { eventMethods } from '../../../src/service/store/pg/events.js';
import { runPgPagePlan } from '../../../src/service/store/pg/paging.js';
import type { Queryable } from '../../../src/service/store/pg/query.js';
import { describePostgres } from '../../helpers/postgres.js';
import { consumer, event } from './outbox.js';
import { outcome, relabel } from './owners.js';
import { onBoth } from './stores.js';

const methods = (db: Queryable) => ({
  ...clientMethods(db), ...companyMethods(db), runPage: <Row>(plan: PagePlan) => runPgPagePlan<Row>(db, plan),
});
type Store = ReturnType<typeof methods>;
const withEvents = (db: Queryable) => ({ ...methods(db), ...eventMethods(db), ...deliveryMethods(db) });

const COMPANIES: Array<[CompanyInput, string]> = [
  [{ name: 'Acme Ltd', description: 'first', tags: { ferryKey: 'ext:A', region: 'EU', 'region-code': 'eu-1' } }, '2021-01-01T00:00:00Z'],
  [{ name: 'acme holdings', tags: { ferryKey: 'ext:a', region: 'us' } }, '2021-06-01T12:00:00Z'],
  [{ name: 'Émile', description: 'accent', tags: { region: 'EU', 'x.y': '1' } }, '2020-12-31T23:59:59Z'],
  [{ name: 'zeta', tags: {} }, '2022-01-01T00:00:00Z'],
  [{ name: 'Beta', description: '', tags: { ferryKey: 'ext:B', region: 'Eu' } }, '2021-06-01T12:00:00Z'],
  [{ name: 'beta', tags: { ferryKey: 'ext:A', 'region-code': 'EU-2' } }, '2021-03-01T00:00:00Z'],
  [{ name: 'ACME LTD', description: 'Last one', tags: { ferryKey: 'ext:C', region: 'apac' } }, '2023-01-01T00:00:00Z'],
];

async function seed(store: Store) {
  const names = new Map<string, string>();
  const client = (await store.insertClient({ name: 'Owner', plan: 'Paid', created: '2020-01-01T00:00:00Z' })).id;
  names.set(client, '<client>');
  const other = (await store.insertClient({ name: 'Other', plan: 'Free', created: '2020-01-01T00:00:00Z' })).id;
  names.set(other, '<other>');
  const ids: string[] = [];
  for (const [input, created] of COMPANIES) {
    const id = (await store.insertCompany(client, input, created)).id;
    names.set(id, `<company${ids.length + 1}>`);
    ids.push(id);
  }
  const foreign = (await store.insertCompany(other, { name: 'Acme Ltd', tags: { ferryKey: 'ext:A' } }, '2021-01-01T00:00:00Z')).id;
  names.set(foreign, '<foreign>');
  return { client, other, ids, names };
}

describePostgres('company store contract', () => {
  it('inserts, reads, replaces, counts and deletes companies', async () => {
    const { sqlite, postgres } = await onBoth(methods, async (store) => {
      const { client, other, ids, names } = await seed(store);
      const countBefore = await store.countCompanies(client);
      const replaced = await store.replaceCompany(ids[0]!, { name: 'Acme Group', tags: { ferryKey: 'ext:A', 'ünïcode': 'ẞ', quote: 'it\'s "q"' } });
      await store.setCompanyProducts(ids[1]!, ['accounting', 'banking']);
      await store.setCompanyProducts(ids[2]!, []);
      await store.setCompanyProducts('missing', ['x']);
      await store.deleteCompany(ids[3]!);
      await store.deleteCompany('missing');
      const answers = {
        inserted: await Promise.all(ids.map((id) => store.getCompany(id))),
        countBefore,
        countAfter: await store.countCompanies(client),
        countOther: await store.countCompanies(other),
        countNobody: await store.countCompanies('missing'),
        replaced,
        replacedMissing: await store.replaceCompany('missing', { name: 'x', tags: {} }),
        withProducts: await store.getCompany(ids[1]!),
        deleted: await store.getCompany(ids[3]!),
        missing: await store.getCompany('missing'),
        noClient: await outcome(() => store.insertCompany('missing', { name: 'x', tags: {} }, '2024-01-01T00:00:00Z')),
      };
      return relabel(answers, names);
    });
    expect(postgres).toEqual(sqlite);
    expect(sqlite.countBefore).toBe(7);
    expect(sqlite.countAfter).toBe(6);
    expect(sqlite.replaced.description).toBeNull();
    expect(sqlite.withProducts?.products).toBe('["accounting","banking"]');
    expect(sqlite.inserted[5]?.tags).toBe('{"ferryKey":"ext:A","region-code":"EU-2"}');
    expect(sqlite.replacedMissing).toBeUndefined();
    expect(sqlite.noClient).toBe('rejected');
  });

  it('pages companies by tag, query= and orderBy= through runPage', async () => {
    const { sqlite, postgres } = await onBoth(methods, async (store) => {
      const { client, ids, names } = await seed(store);
      await store.setCompanyProducts(ids[4]!, ['x']);
      const pages = async (request: Omit<PageRequest, 'page' | 'pageSize'>, tag?: { key: string; value: string }) => {
        const out = [];
        for (let page = 1; page <= 4; page++) out.push(await store.runPage(store.companiesPage(client, { ...request, page, pageSize: 2 }, tag)));
        return out;
      };
      const answers = {
        all: await pages({}),
        ferryA: await pages({}, { key: 'ferryKey', value: 'ext:A' }),
        ferryLower: await pages({}, { key: 'ferryKey', value: 'ext:a' }),
        ferryNone: await pages({}, { key: 'ferryKey', value: 'ext:Z' }),
        dashedTag: await pages({}, { key: 'region-code', value: 'EU-2' }),
        dottedTag: await pages({}, { key: 'x.y', value: '1' }),
        tagAndQuery: await pages({ query: 'name~acme', orderBy: '-name' }, { key: 'ferryKey', value: 'ext:A' }),
        regionQuery: await pages({ query: 'tags.region=eu' }),
        // A dotted key is one member, as in the tag filter (a dash is no path character).
        dottedQuery: await pages({ query: 'tags.x.y=1' }),
        tagNull: await pages({ query: 'tags.ferryKey=null', orderBy: 'created' }),
        byTag: await pages({ orderBy: 'tags.region,-created' }),
        byName: await pages({ orderBy: 'name' }),
        byDescription: await pages({ orderBy: '-description,name' }),
        newest: await pages({ orderBy: '-created' }),
        lastSync: await pages({ orderBy: 'lastSync', query: 'lastSync=null' }),
        dates: await pages({ query: 'created>2021-01-01 && created<=2021-06-01T14:00:00+02:00' }),
        described: await pages({ query: 'description!=null && description!=""' }),
        either: await pages({ query: 'name=beta || {tags.region=EU && name~e}' }),
        unknownField: await outcome(async () => store.companiesPage(client, { page: 1, pageSize: 2, query: 'products=x' })),
        unknownOrder: await outcome(async () => store.companiesPage(client, { page: 1, pageSize: 2, orderBy: 'tags' })),
        badTagKey: await outcome(async () => store.companiesPage(client, { page: 1, pageSize: 2 }, { key: "a'b", value: 'x' })),
        nobody: await store.runPage(store.companiesPage('missing', { page: 1, pageSize: 2 })),
      };
      return relabel(answers, names);
    });
    expect(postgres).toEqual(sqlite);
    expect(sqlite.all[0]!.total).toBe(7);
    expect(sqlite.ferryA[0]!.total).toBe(2);
    expect(sqlite.ferryLower[0]!.total).toBe(1);
    expect(sqlite.regionQuery[0]!.total).toBe(3);
    expect(sqlite.dottedQuery[0]!.total).toBe(1);
    expect(sqlite.badTagKey).toBe('rejected');
  });
  it('writes a company and its event together, or neither when either cannot be written', async () => {
    const { sqlite, postgres } = await onBoth(withEvents, async (store) => {
      const names = new Map<string, string>();
      const client = (await store.insertClient({ name: 'Owner', plan: 'Paid', created: '2020-01-01T00:00:00Z' })).id;
      names.set(client, '<client>');
      await store.insertConsumer(consumer('c-created', client));
      const input: CompanyInput = { name: 'Together', description: 'with its event', tags: { ferryKey: 'ext:T' } };
      const made = newCompanyRow('co-together', client, input, '2024-01-01T00:00:00Z');
      const stored = await store.insertCompanyWithEvent(made, event('e-together', client, made.id, { companyTags: ['ferryKey:ext:T'] }));
      // The same row as a company inserted alone, defaults and all.
      const alone = await store.insertCompany(client, input, '2024-01-01T00:00:00Z');
      names.set(alone.id, '<alone>');
      // The company's id taken: no event either.
      const takenCompany = await outcome(() => store.insertCompanyWithEvent(made, event('e-second', client, made.id)));
      // The event's id taken: no company either.
      const other = newCompanyRow('co-other', client, { name: 'Other', tags: {} }, '2024-01-02T00:00:00Z');
      const takenEvent = await outcome(() => store.insertCompanyWithEvent(other, event('e-together', client, other.id)));
      const events = await store.eventsAfter(client, 0, 10);
      return relabel({
        stored, read: await store.getCompany(made.id), alone: { ...alone, id: undefined, seq: undefined },
        takenCompany, takenEvent, other: await store.getCompany(other.id), count: await store.countCompanies(client),
        events: events.map((e) => ({ id: e.id, company: e.company_id, type: e.event_type, body: e.body })),
        deliveries: await Promise.all(events.map((e) => store.deliveryOfEvent('c-created', e.seq))).then((ds) => ds.map((d) => d?.id ?? null)),
      }, names);
    });
    expect(postgres).toEqual(sqlite);
    expect(sqlite.read).toEqual(sqlite.stored);
    expect({ ...sqlite.stored, id: undefined, seq: undefined }).toEqual(sqlite.alone);
    expect(sqlite.takenCompany).toBe('rejected');
    expect(sqlite.takenEvent).toBe('rejected');
    expect(sqlite.other).toBeUndefined();
    expect(sqlite.count).toBe(2);
    expect(sqlite.events.map((e) => e.id)).toEqual(['e-together']);
    expect(sqlite.deliveries).toHaveLength(1);
    expect(sqlite.deliveries[0]).not.toBeNull();
  });
});
