// Companies paged on PostgreSQL by one statement (pg/paging.ts planPgPage): the first page
// beside its count, a later page from one pass that counts and collects the page's keys.
// Every page, from the first to past the end, must hold the ids SQLite's OFFSET gives in
// the same order, with the same total, for orders with many ties; and the count and the
// page must come from one snapshot while other connections write.
import { expect, it } from 'vitest';
import type { CompanyInput } from '../../src/service/store/companies.js';
import type { PagePlan, PageRequest } from '../../src/service/store/paging.js';
import { clientMethods } from '../../src/service/store/pg/clients.js';
import { companyMethods } from '../../src/service/store/pg/companies.js';
import { runPgPagePlan } from '../../src/service/store/pg/paging.js';
import { createPgStore } from '../../src/service/store/pg/pg-store.js';
import type { Queryable } from '../../src/service/store/pg/query.js';
import { describePostgres } from '../helpers/postgres.js';
import { relabel } from './contract/owners.js';
import { freshPostgres, onBoth } from './contract/stores.js';

const methods = (db: Queryable) => ({
  ...clientMethods(db), ...companyMethods(db), runPage: <Row>(plan: PagePlan) => runPgPagePlan<Row>(db, plan),
});
type Store = ReturnType<typeof methods>;

const COMPANY_COUNT = 230;
const NAMES = ['Acme', 'ACME', 'acme co', 'Beta Corp', 'beta corp', 'Émile', 'Zeta', 'Firm'];
const REGIONS = ['EU', 'eu', 'US', undefined];

/** Many ties: names equal but for case, missing descriptions and tags, shared created times. */
function company(i: number): [CompanyInput, string] {
  const region = REGIONS[i % REGIONS.length];
  const tags: Record<string, string> = { ferryKey: `ext:${i % 3}` };
  if (region !== undefined) tags.region = region;
  const input: CompanyInput = { name: NAMES[(i * 7) % NAMES.length]!, tags };
  if (i % 5 !== 0) input.description = i % 5 === 1 ? '' : `desc ${i % 4}`;
  return [input, `2021-0${1 + (i % 9)}-01T00:00:00Z`];
}

const REQUESTS: Array<{ label: string; request: Omit<PageRequest, 'page' | 'pageSize'>; tag?: { key: string; value: string } }> = [
  { label: 'plain', request: {} },
  { label: 'name~co', request: { query: 'name~co' } },
  { label: 'by name', request: { orderBy: 'name' } },
  { label: 'by -description,name', request: { orderBy: '-description,name' } },
  { label: 'by tags.region,-created', request: { orderBy: 'tags.region,-created' } },
  { label: 'query and order', request: { query: 'name~a || tags.region=eu', orderBy: '-created,name' } },
  { label: 'tag filter', request: { orderBy: 'lastSync' }, tag: { key: 'ferryKey', value: 'ext:1' } },
  { label: 'no match', request: { query: 'name=nobody' } },
];

describePostgres('companies paged on PostgreSQL', () => {
  it('gives every page SQLite gives, from the first to past the end, for orders with ties', async () => {
    const { sqlite, postgres } = await onBoth(methods, async (store: Store) => {
      const client = (await store.insertClient({ name: 'Owner', plan: 'Paid', created: '2020-01-01T00:00:00Z' })).id;
      const names = new Map<string, string>([[client, '<client>']]);
      for (let i = 0; i < COMPANY_COUNT; i++) {
        const [input, created] = company(i);
        names.set((await store.insertCompany(client, input, created)).id, `<company${i}>`);
      }
      const answers: Record<string, unknown> = {};
      for (const { label, request, tag } of REQUESTS) {
        for (const pageSize of [7, 100]) {
          const pages = [];
          for (let page = 1; ; page++) {
            const found = await store.runPage<{ id: string }>(store.companiesPage(client, { ...request, page, pageSize }, tag));
            pages.push({ ids: found.rows.map((row) => row.id), total: found.total });
            if (found.rows.length === 0) break;
          }
          const whole = await store.runPage<{ id: string }>(store.companiesPage(client, { ...request, page: 1, pageSize: 1000 }, tag));
          answers[`${label} / ${pageSize}`] = { pages, whole: whole.rows.map((row) => row.id) };
        }
      }
      answers.nobody = await store.runPage(store.companiesPage('missing', { page: 2, pageSize: 5 }));
      // Past any array subscript: still counted, still no rows.
      answers.farPast = await store.runPage(store.companiesPage(client, { page: Number.MAX_SAFE_INTEGER, pageSize: 5000 }));
      answers.farPastFiltered = await store.runPage(store.companiesPage(client, { page: Number.MAX_SAFE_INTEGER, pageSize: 5000, query: 'name~co' }));
      return relabel(answers, names);
    });
    expect(postgres).toEqual(sqlite);
    // The pages, put together, are the whole list once each, and a page past the end still counts.
    for (const [label, answer] of Object.entries(sqlite)) {
      if (label === 'nobody' || label.startsWith('farPast')) continue;
      const { pages, whole } = answer as { pages: Array<{ ids: string[]; total: number }>; whole: string[] };
      expect(pages.flatMap((page) => page.ids), label).toEqual(whole);
      expect(pages.every((page) => page.total === whole.length), label).toBe(true);
    }
    expect((sqlite['name~co / 7'] as { whole: string[] }).whole.length).toBeGreaterThan(50);
    expect((sqlite['no match / 7'] as { pages: unknown[] }).pages).toEqual([{ ids: [], total: 0 }]);
    expect(sqlite.nobody).toEqual({ rows: [], total: 0 });
    expect(sqlite.farPast).toEqual({ rows: [], total: COMPANY_COUNT });
    expect(sqlite.farPastFiltered).toEqual({ rows: [], total: (sqlite['name~co / 7'] as { whole: string[] }).whole.length });
  });

  it('returns whole company rows, as a plain SELECT reads them, on the first page and later ones', async () => {
    const pool = await freshPostgres();
    try {
      const store = methods(pool);
      const client = (await store.insertClient({ name: 'Owner', plan: 'Paid', created: '2020-01-01T00:00:00Z' })).id;
      for (let i = 0; i < 12; i++) await store.insertCompany(client, ...company(i));
      const stored = (await pool.query('SELECT * FROM companies ORDER BY seq')).rows;
      const first = await store.runPage(store.companiesPage(client, { page: 1, pageSize: 5 }));
      const third = await store.runPage(store.companiesPage(client, { page: 3, pageSize: 5 }));
      expect(first).toEqual({ rows: stored.slice(0, 5), total: 12 });
      expect(third).toEqual({ rows: stored.slice(10), total: 12 });
    } finally {
      await pool.end();
    }
  });

  it('counts and reads a page on one snapshot while other connections add and remove companies', async () => {
    const pool = await freshPostgres();
    const store = createPgStore(pool);
    try {
      const client = (await store.insertClient({ name: 'Owner', plan: 'Paid', created: '2020-01-01T00:00:00Z' })).id;
      for (let i = 0; i < 25; i++) await store.insertCompany(client, { name: `Company ${i}`, tags: {} }, '2021-01-01T00:00:00Z');
      let writing = true;
      // Ten companies in, then the same ten out, each in a transaction of its own: the count moves across the page.
      const writer = (async () => {
        while (writing) {
          const ids = await store.transaction(async (tx) => {
            const made = [];
            for (let i = 0; i < 10; i++) made.push((await tx.insertCompany(client, { name: `Company new ${i}`, tags: {} }, '2021-01-01T00:00:00Z')).id);
            return made;
          });
          await store.transaction(async (tx) => {
            for (const id of ids) await tx.deleteCompany(id);
          });
        }
      })();
      const totals = new Set<number>();
      try {
        for (let i = 0; i < 100; i++) {
          // The first page, a later one of the plain list, and a later one under a filter.
          for (const [page, query] of [[1, undefined], [3, undefined], [3, 'name~company']] as const) {
            const { rows, total } = await store.runPage<{ seq: number }>(store.companiesPage(client, { page, pageSize: 10, query }));
            totals.add(total);
            expect(rows.length).toBe(Math.max(0, Math.min(10, total - (page - 1) * 10)));
            expect(rows.map((row) => row.seq)).toEqual(rows.map((row) => row.seq).sort((a, b) => a - b));
          }
        }
      } finally {
        writing = false;
        await writer;
      }
      // The writer was seen at work, or the test proves nothing.
      expect(totals.size).toBeGreaterThan(1);
    } finally {
      await store.close();
    }
  });

  it('reads a transaction’s own writes, on its connection', async () => {
    const pool = await freshPostgres();
    const store = createPgStore(pool);
    try {
      const client = (await store.insertClient({ name: 'Owner', plan: 'Paid', created: '2020-01-01T00:00:00Z' })).id;
      for (let i = 0; i < 4; i++) await store.insertCompany(client, { name: `Company ${i}`, tags: {} }, '2021-01-01T00:00:00Z');
      const seen = await store.transaction(async (tx) => {
        await tx.insertCompany(client, { name: 'Company late', tags: {} }, '2021-01-01T00:00:00Z');
        const first = await tx.runPage<{ name: string }>(tx.companiesPage(client, { page: 1, pageSize: 3 }));
        const second = await tx.runPage<{ name: string }>(tx.companiesPage(client, { page: 2, pageSize: 3 }));
        return [first, second].map((page) => ({ names: page.rows.map((row) => row.name), total: page.total }));
      });
      expect(seen).toEqual([
        { names: ['Company 0', 'Company 1', 'Company 2'], total: 5 },
        { names: ['Company 3', 'Company late'], total: 5 },
      ]);
    } finally {
      await store.close();
    }
  });
});
