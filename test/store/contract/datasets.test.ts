// The data set group: generations, records (their bytes exactly as synced), record pages
// with query= and orderBy= over the remembered fields, pruning and the schedule's
// candidates answer on PostgreSQL as on SQLite.
import { describe, expect, it } from 'vitest';
import type { RecordInput } from '../../../src/service/store/datasets.js';
import type { Page, PagePlan, PageRequest } from '../../../src/service/store/paging.js';
import { datasetMethods } from '../../../src/service/store/pg/datasets.js';
import { runPgPagePlan } from '../../../src/service/store/pg/paging.js';
import { pullMethods } from '../../../src/service/store/pg/pulls.js';
import type { Queryable } from '../../../src/service/store/pg/query.js';
import type { FieldType } from '../../../src/service/query/types.js';
import { describePostgres } from '../../helpers/postgres.js';
import { makeOwners, outcome, pgOwners, relabel, secondPool, type Owners } from './owners.js';
import { datasetsOf, freshPostgres, onBoth } from './stores.js';

const methods = (db: Queryable) => ({
  ...datasetMethods(db), ...pullMethods(db), ...pgOwners(db), runPage: <Row>(plan: PagePlan) => runPgPagePlan<Row>(db, plan),
});
type Store = ReturnType<typeof methods>;

/** A page's rows as compared: the bytes as they are, and that seq is a number. seq values
 * themselves may differ: PostgreSQL spends an identity value on every upsert that updates. */
function shape(page: Page<{ data: Uint8Array; seq?: unknown }>): unknown {
  return { total: page.total, rows: page.rows.map((r) => ({ data: r.data, buffer: Buffer.isBuffer(r.data), seq: typeof r.seq })) };
}

const record = (id: string, body: Record<string, unknown>, modifiedDate?: string): RecordInput =>
  ({ id, modifiedDate, data: JSON.stringify({ id, ...body }) });

const INVOICES: RecordInput[] = [
  record('r1', { status: 'Paid', total: 120.5, dueDate: '2024-02-10T00:00:00Z', paid: true, contact: { name: 'Acme Ltd' } }, '2024-02-11T00:00:00Z'),
  record('r2', { status: 'open', total: 80, dueDate: '2024-01-15T00:00:00Z', paid: false, contact: { name: 'Zeta' } }),
  record('r3', { status: 'PAID', total: 300, paid: true }),
  record('r4', { status: null, total: 0, dueDate: '2024-03-01T00:00:00Z', paid: false, contact: { name: 'acme inc' } }),
  record('r5', { status: 'Void', total: -5.25, dueDate: '2024-02-10T00:00:00Z', contact: { name: 'Ácme' } }),
  record('r7', { status: 'draft', total: 12, dueDate: '2024-02-01T12:30:00Z', contact: { name: 'Beta' }, note: 'ünïcode ✓ "quoted" \\' }),
];
const FIELDS = new Map<string, FieldType>([['status', 'string'], ['total', 'number'], ['dueDate', 'date'], ['paid', 'boolean'], ['contact.name', 'string']]);

async function seedInvoices(store: Store, o: Owners): Promise<number> {
  const generation = await store.reserveGeneration(o.a, 'invoices', 'sync-1', '2024-03-01T10:00:00Z');
  await store.upsertRecords(o.a, 'invoices', generation, o.a1, INVOICES);
  await store.upsertRecords(o.a, 'invoices', generation, o.a2, [record('r6', { status: 'paid', total: 120.5, dueDate: '2024-02-01T12:30:00Z', paid: true })]);
  await store.rememberFields('invoices', FIELDS);
  return generation;
}

describePostgres('data set store contract', () => {
  it('reserves and publishes generations', async () => {
    const { sqlite, postgres } = await onBoth(methods, async (store) => {
      const o = await makeOwners(store);
      const answers: unknown[] = [await store.getDataset(o.a, 'invoices'), await datasetsOf(store, o.a)];
      answers.push(await store.publishGeneration(o.a, 'invoices', 1, 'sync-0', '2024-03-01T09:00:00Z'), await store.getDataset(o.a, 'invoices'));
      answers.push(await store.reserveGeneration(o.a, 'invoices', 'sync-1', '2024-03-01T10:00:00Z'));
      answers.push(await store.reserveGeneration(o.a, 'bills', 'sync-2', '2024-03-01T10:01:00Z'));
      answers.push(await store.reserveGeneration(o.b, 'invoices', 'sync-3', '2024-03-01T10:02:00Z'));
      answers.push(await store.getDataset(o.a, 'invoices'));
      answers.push(await store.publishGeneration(o.a, 'invoices', 1, 'sync-1', '2024-03-01T10:05:00Z'));
      answers.push(await store.reserveGeneration(o.a, 'invoices', 'sync-4', '2024-03-01T11:00:00Z'));
      answers.push(await store.getDataset(o.a, 'invoices'));
      answers.push(await store.publishGeneration(o.a, 'invoices', 2, 'sync-4', '2024-03-01T11:05:00Z'));
      answers.push(await datasetsOf(store, o.a), await datasetsOf(store, o.b), await datasetsOf(store, 'no-company'));
      answers.push(await outcome(() => store.reserveGeneration('no-company', 'invoices', 'sync-5', '2024-03-01T12:00:00Z')));
      return relabel(answers, o.names);
    });
    expect(postgres).toEqual(sqlite);
    expect(sqlite.slice(4, 7)).toEqual([1, 1, 1]);
  });

  it('finds the data sets a schedule may queue again: requested at or before the time given, none open', async () => {
    const { sqlite, postgres } = await onBoth(methods, async (store) => {
      const o = await makeOwners(store);
      const empty = await store.scheduleCandidates('2024-03-01T11:00:00Z');
      for (const [companyId, dataType] of [[o.a, 'invoices'], [o.a, 'bills'], [o.b, 'invoices'], [o.b, 'customers']] as const) {
        await store.reserveGeneration(companyId, dataType, `sync-${dataType}`, '2024-03-01T10:00:00Z');
      }
      await store.reserveGeneration(o.a, 'payments', 'sync-payments', '2024-03-01T11:00:00Z');
      await store.reserveGeneration(o.b, 'payments', 'sync-payments', '2024-03-01T11:00:01Z');
      const pull = { connectionId: o.a1, generation: 1, requested: '2024-03-01T10:00:00Z' };
      await store.insertPull({ ...pull, id: 'p1', companyId: o.a, dataType: 'bills', status: 'Queued' });
      await store.insertPull({ ...pull, id: 'p2', companyId: o.b, dataType: 'invoices', status: 'Complete' });
      await store.insertPull({ ...pull, id: 'p3', companyId: o.b, dataType: 'customers', status: 'Mapping' });
      const candidates = relabel(await store.scheduleCandidates('2024-03-01T11:00:00Z'), o.names)
        .sort((x, y) => `${x.company_id}/${x.data_type}`.localeCompare(`${y.company_id}/${y.data_type}`));
      return { empty, candidates };
    });
    expect(postgres).toEqual(sqlite);
    expect(sqlite.candidates.map((c) => `${c.company_id}/${c.data_type}`)).toEqual(['<a>/invoices', '<a>/payments', '<b>/invoices']);
  });

  it('upserts records as SQLite does and reads them back byte for byte', async () => {
    const { sqlite, postgres } = await onBoth(methods, async (store) => {
      const o = await makeOwners(store);
      const generation = await store.reserveGeneration(o.a, 'invoices', 'sync-1', '2024-03-01T10:00:00Z');
      const odd = '{"z":1,  "a" : "é\\u00e9\\ud83d\\ude00😀\\"\\\\", "n": 1.50, "e": 1e3, "nested": {"x": [1, null, true]}}';
      await store.upsertRecords(o.a, 'invoices', generation, o.a1, []);
      await store.upsertRecords(o.a, 'invoices', generation, o.a1, [
        { id: 'x1', data: odd, modifiedDate: '2024-01-01T00:00:00Z' },
        { id: 'x2', data: '{"v":1}' },
        { id: 'x1', data: '{"v":"x1 again, later in the page"}' }, // the last wins, in the first's place
        { id: 'x3', data: '[]', modifiedDate: '2024-01-03T00:00:00Z' },
      ]);
      // Another connection's page updates x2 (its connection stays) and adds x4.
      await store.upsertRecords(o.a, 'invoices', generation, o.a2, [{ id: 'x4', data: '{"v":4}' }, { id: 'x2', data: '{"v":2}', modifiedDate: '2024-02-02T00:00:00Z' }]);
      await store.upsertRecords(o.a, 'invoices', generation, o.a1, [{ id: 'x5', data: odd }]);
      // Same ids in another generation, data type and company are other records.
      await store.upsertRecords(o.a, 'invoices', generation + 1, o.a1, [{ id: 'x1', data: '{"g":2}' }]);
      await store.upsertRecords(o.a, 'bills', generation, o.a1, [{ id: 'x1', data: '{"t":"bills"}' }]);
      await store.upsertRecords(o.b, 'invoices', generation, o.b1, [{ id: 'x1', data: '{"c":"b"}' }]);
      const list = (request: PageRequest) => store.listRecords(o.a, 'invoices', generation, request).then(shape);
      const answers = {
        counts: [await store.countRecords(o.a, 'invoices', generation), await store.countRecords(o.a, 'invoices', generation + 1),
          await store.countRecords(o.a, 'bills', generation), await store.countRecords(o.a, 'invoices', 9)],
        records: [
          await store.getRecord(o.a, 'invoices', generation, 'x1'), await store.getRecord(o.a, 'invoices', generation, 'x2'),
          await store.getRecord(o.a, 'invoices', generation, 'x5'), await store.getRecord(o.a, 'invoices', generation, 'missing'),
          await store.getRecord(o.a, 'invoices', generation, 'x2', o.a1), await store.getRecord(o.a, 'invoices', generation, 'x2', o.a2),
          await store.getRecord(o.a, 'invoices', generation, 'x4', o.a2), await store.getRecord(o.a, 'invoices', generation + 1, 'x1'),
          await store.getRecord(o.b, 'invoices', generation, 'x1'),
        ],
        pages: [await list({ page: 1, pageSize: 2 }), await list({ page: 2, pageSize: 2 }), await list({ page: 3, pageSize: 2 }), await list({ page: 4, pageSize: 2 }),
          await list({ page: 1, pageSize: 100 })],
        emptyPage: shape(await store.listRecords(o.a, 'invoices', 7, { page: 1, pageSize: 10 })),
      };
      return relabel(answers, o.names);
    });
    expect(postgres).toEqual(sqlite);
    expect(sqlite.counts).toEqual([5, 1, 1, 0]);
    // x2 was synced by a1 first and stays a1's, with a2's update of it.
    expect(sqlite.records.slice(4, 6)).toEqual(['{"v":2}', undefined]);
  });

  it('writes pages of several data sets in one call as upsertRecords one after the other, and remembers their fields', async () => {
    const { sqlite, postgres } = await onBoth(methods, async (store) => {
      const o = await makeOwners(store);
      const pages = (companyId: string, connectionId: string) => [
        { companyId, dataType: 'invoices', generation: 1, connectionId, rows: [{ id: 'x1', data: '{"v":1}' }, { id: 'x2', data: '{"v":2}' }, { id: 'x1', data: '{"v":"again"}' }] },
        { companyId, dataType: 'bills', generation: 1, connectionId, rows: [] },
        { companyId, dataType: 'bills', generation: 2, connectionId, rows: [{ id: 'x1', data: '{"t":"bills"}', modifiedDate: '2024-01-01T00:00:00Z' }] },
        { companyId, dataType: 'invoices', generation: 1, connectionId, rows: [{ id: 'x2', data: '{"v":"later"}' }, { id: 'x3', data: '[]' }] },
      ];
      await store.writeRecords(pages(o.a, o.a1));
      await store.writeRecords([]);
      for (const page of pages(o.b, o.b1)) await store.upsertRecords(page.companyId, page.dataType, page.generation, page.connectionId, page.rows);
      await store.rememberAllFields(new Map([['invoices', new Map<string, FieldType>([['total', 'number'], ['status', 'string']])], ['bills', new Map()],
        ['items', new Map<string, FieldType>([['code', 'string']])]]));
      await store.rememberAllFields(new Map([['invoices', new Map<string, FieldType>([['total', 'string'], ['dueDate', 'date']])]])); // a known path keeps its type
      const read = async (companyId: string) => Promise.all([['invoices', 1], ['bills', 1], ['bills', 2]].map(async ([dataType, generation]) =>
        (await store.listRecords(companyId, dataType as string, generation as number, { page: 1, pageSize: 10 })).rows.map((r) => Buffer.from(r.data).toString())));
      return {
        a: await read(o.a), b: await read(o.b),
        fields: await Promise.all(['invoices', 'bills', 'items'].map(async (dataType) => Object.fromEntries(await store.recordFields(dataType)))),
      };
    });
    expect(postgres).toEqual(sqlite);
    expect(sqlite.a).toEqual(sqlite.b);
    expect(sqlite.a).toEqual([['{"v":"again"}', '{"v":"later"}', '[]'], [], ['{"t":"bills"}']]);
    expect(sqlite.fields).toEqual([{ dueDate: 'date', status: 'string', total: 'number' }, {}, { code: 'string' }]);
  });

  it('remembers fields and pages records with query= and orderBy=', async () => {
    const { sqlite, postgres } = await onBoth(methods, async (store) => {
      const o = await makeOwners(store);
      const answers: unknown[] = [await store.recordFields('invoices')];
      const generation = await seedInvoices(store, o);
      await store.rememberFields('invoices', new Map<string, FieldType>([['status', 'number'], ['issueDate', 'date']]));
      await store.rememberFields('invoices', new Map());
      answers.push(await store.recordFields('invoices'), await store.recordFields('bills'));
      const page = async (request: PageRequest, connectionId?: string) =>
        shape(await store.runPage(await store.recordsPage(o.a, 'invoices', generation, request, connectionId)));
      const queries = ['status=paid', 'status!=paid', 'status=null', 'status~AI', 'total>100', 'total<=0', 'total=120.5', 'dueDate>=2024-02-01',
        'dueDate<2024-02-10T00:00:00Z', 'dueDate=2024-02-10', 'dueDate>2024-02-01T12:30:00.5Z', 'paid=true', 'paid!=true', 'contact.name~ACME',
        'contact.name=null', '{status=paid||total<50}&&dueDate!=null', 'issueDate=null'];
      for (const query of queries) answers.push([query, await page({ page: 1, pageSize: 20, query })]);
      for (const orderBy of ['-total', 'total', 'dueDate', '-dueDate,status', 'contact.name', '-contact.name', 'status', 'paid,-total']) {
        answers.push([orderBy, await page({ page: 1, pageSize: 3, orderBy }), await page({ page: 2, pageSize: 3, orderBy }), await page({ page: 3, pageSize: 3, orderBy })]);
      }
      answers.push(await page({ page: 2, pageSize: 2, query: 'total>0', orderBy: '-dueDate' }));
      answers.push(await page({ page: 1, pageSize: 10 }, o.a2), await page({ page: 1, pageSize: 10, query: 'paid=true' }, o.a1), await page({ page: 1, pageSize: 10 }, o.b1));
      answers.push(await outcome(() => store.recordsPage(o.a, 'invoices', generation, { page: 1, pageSize: 1, query: 'nope=1' })));
      answers.push(await outcome(() => store.recordsPage(o.a, 'invoices', generation, { page: 1, pageSize: 1, query: 'total~1' })));
      answers.push(await outcome(() => store.recordsPage(o.a, 'invoices', generation, { page: 1, pageSize: 1, orderBy: 'contact' })));
      answers.push(await outcome(() => store.recordsPage(o.a, "invoices' OR '1'='1", generation, { page: 1, pageSize: 1 })));
      return relabel(answers, o.names);
    });
    expect(postgres).toEqual(sqlite);
    expect((sqlite[3] as [string, { total: number }])[1].total).toBe(3);
  });

  it('prunes older generations at most `limit` records at a time', async () => {
    const { sqlite, postgres } = await onBoth(methods, async (store) => {
      const o = await makeOwners(store);
      for (let generation = 1; generation <= 3; generation++) {
        await store.upsertRecords(o.a, 'invoices', generation, o.a1, Array.from({ length: 4 - generation + 1 }, (_, i) => ({ id: `r${i}`, data: `{"g":${generation}}` })));
      }
      await store.upsertRecords(o.a, 'bills', 1, o.a1, [{ id: 'b', data: '{}' }]);
      const counts = async () => [await store.countRecords(o.a, 'invoices', 1) + await store.countRecords(o.a, 'invoices', 2),
        await store.countRecords(o.a, 'invoices', 3), await store.countRecords(o.a, 'bills', 1)];
      const answers: unknown[] = [await store.pruneGenerations(o.a, 'invoices', 3, 4), await counts()];
      answers.push(await store.pruneGenerations(o.a, 'invoices', 3, 4), await counts());
      answers.push(await store.pruneGenerations(o.a, 'invoices', 3, 4), await store.pruneGenerations(o.a, 'invoices', 3, 0), await counts());
      answers.push(await store.countRecords(o.a, 'invoices', 1), await store.countRecords(o.a, 'invoices', 2));
      answers.push(await store.pruneGenerations(o.b, 'invoices', 9, 10), await store.pruneGenerations(o.a, 'bills', 1, 10), await counts());
      return answers;
    });
    expect(postgres).toEqual(sqlite);
    expect(sqlite.slice(0, 2)).toEqual([4, [3, 2, 1]]);
  });

  it('upserts a page of 1,000 records in one call, in the page\'s order', async () => {
    const { sqlite, postgres } = await onBoth(methods, async (store) => {
      const o = await makeOwners(store);
      const page = (from: number) => Array.from({ length: 1000 }, (_, i) => record(`r${String(from + 999 - i).padStart(4, '0')}`, { i, from }));
      await store.upsertRecords(o.a, 'invoices', 1, o.a1, page(0));
      await store.upsertRecords(o.a, 'invoices', 1, o.a1, page(500)); // half of it updates, half is new
      const list = (n: number) => store.listRecords(o.a, 'invoices', 1, { page: n, pageSize: 400 }).then(shape);
      return [await store.countRecords(o.a, 'invoices', 1), await list(1), await list(2), await list(3), await list(4)];
    });
    expect(postgres).toEqual(sqlite);
    expect(sqlite[0]).toBe(1500);
  });

  it('keeps the space around a record\'s JSON, in a page of its own or among others', async () => {
    const { sqlite, postgres } = await onBoth(methods, async (store) => {
      const o = await makeOwners(store);
      await store.upsertRecords(o.a, 'bills', 1, o.a1, [{ id: 's1', data: '{"v":1}' }, { id: 's2', data: ' {"w": [ ]}\n' }]);
      await store.upsertRecords(o.a, 'bills', 1, o.a1, [{ id: 's3', data: '\t[1, 2] ' }]);
      await store.upsertRecords(o.a, 'bills', 1, o.a1, [{ id: 's4', data: '{"v": "no space around"}' }]);
      return Promise.all(['s1', 's2', 's3', 's4'].map((id) => store.getRecord(o.a, 'bills', 1, id)));
    });
    expect(postgres).toEqual(sqlite);
    expect(sqlite).toEqual(['{"v":1}', ' {"w": [ ]}\n', '\t[1, 2] ', '{"v": "no space around"}']);
  });

  it('keeps a record whose text holds \\u0000, byte for byte, where no index reads it', async () => {
    const { sqlite, postgres } = await onBoth(methods, async (store) => {
      const o = await makeOwners(store);
      const data = JSON.stringify({ id: 'n1', note: 'before \u0000 after' });
      await store.upsertRecords(o.a, 'bills', 1, o.a1, [{ id: 'n1', data }, { id: 'n2', data: '{"v":2}' }]);
      return [await store.getRecord(o.a, 'bills', 1, 'n1'), shape(await store.listRecords(o.a, 'bills', 1, { page: 1, pageSize: 10 }))];
    });
    expect(postgres).toEqual(sqlite);
    expect(sqlite[0]).toContain('\\u0000');
  });

  // Known gap of the PostgreSQL schema: `->` and `->>` refuse a json document holding
  // \u0000 anywhere ("unsupported Unicode escape sequence"), so the invoice expression
  // indexes refuse such an invoice and a query= over such a record fails. SQLite takes both.
  it.fails('keeps an invoice whose text holds \\u0000 (the invoice indexes read it with ->>)', async () => {
    const { sqlite, postgres } = await onBoth(methods, async (store) => {
      const o = await makeOwners(store);
      await store.upsertRecords(o.a, 'invoices', 1, o.a1, [{ id: 'n1', data: JSON.stringify({ id: 'n1', status: 'paid', note: '\u0000' }) }]);
      return store.getRecord(o.a, 'invoices', 1, 'n1');
    });
    expect(postgres).toEqual(sqlite);
  });

  it.fails('answers query= over records of which one holds \\u0000', async () => {
    const { sqlite, postgres } = await onBoth(methods, async (store) => {
      const o = await makeOwners(store);
      await store.upsertRecords(o.a, 'bills', 1, o.a1, [{ id: 'n1', data: JSON.stringify({ id: 'n1', status: 'paid', note: '\u0000' }) },
        { id: 'n2', data: JSON.stringify({ id: 'n2', status: 'open' }) }]);
      await store.rememberFields('bills', new Map<string, FieldType>([['status', 'string']]));
      return shape(await store.runPage(await store.recordsPage(o.a, 'bills', 1, { page: 1, pageSize: 10, query: 'status=open' })));
    });
    expect(postgres).toEqual(sqlite);
  });

  // Known difference: SQLite's recordsPage compares a date field's text as it is
  // (json_extract), PostgreSQL the instant it names (json-fields.ts); they agree while
  // records hold canonical UTC text (`…T00:00:00Z`), and differ at the boundary otherwise.
  it.fails('compares a record date written without a zone the same way', async () => {
    const { sqlite, postgres } = await onBoth(methods, async (store) => {
      const o = await makeOwners(store);
      await store.upsertRecords(o.a, 'invoices', 1, o.a1, [record('d1', { dueDate: '2024-02-10T00:00:00' }), record('d2', { dueDate: '2024-02-10' })]);
      await store.rememberFields('invoices', new Map<string, FieldType>([['dueDate', 'date']]));
      return shape(await store.runPage(await store.recordsPage(o.a, 'invoices', 1, { page: 1, pageSize: 10, query: 'dueDate=2024-02-10' })));
    });
    expect(postgres).toEqual(sqlite);
  });

  describe('on PostgreSQL alone', () => {
    it('reserves a generation of its own for each of two processes racing', async () => {
      const pool = await freshPostgres();
      const other = secondPool(pool);
      try {
        const o = await makeOwners(pgOwners(pool));
        const stores = [datasetMethods(pool), datasetMethods(other)];
        const reserved = await Promise.all(Array.from({ length: 40 }, (_, i) =>
          stores[i % 2]!.reserveGeneration(o.a, 'invoices', `sync-${i}`, '2024-03-01T10:00:00Z')));
        expect([...reserved].sort((x, y) => x - y)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
        expect((await stores[0]!.getDataset(o.a, 'invoices'))?.next_generation).toBe(41);
      } finally {
        await other.end();
        await pool.end();
      }
    });

    it('publishes under the row lock: each racing publish reports the generation the one before it set', async () => {
      const pool = await freshPostgres();
      const other = secondPool(pool);
      try {
        const o = await makeOwners(pgOwners(pool));
        const stores = [datasetMethods(pool), datasetMethods(other)];
        await stores[0]!.reserveGeneration(o.a, 'invoices', 'sync', '2024-03-01T10:00:00Z');
        const replaced = await Promise.all(Array.from({ length: 30 }, (_, i) =>
          stores[i % 2]!.publishGeneration(o.a, 'invoices', i + 1, `sync-${i}`, '2024-03-01T10:00:00Z')));
        // Every generation but the last one to land was replaced exactly once, and the first to land replaced none.
        const last = (await stores[0]!.getDataset(o.a, 'invoices'))!.visible_generation!;
        const expected = Array.from({ length: 30 }, (_, i) => i + 1).filter((g) => g !== last);
        expect(replaced.filter((g) => g !== null).sort((x, y) => x! - y!)).toEqual(expected);
        expect(replaced.filter((g) => g === null)).toHaveLength(1);
      } finally {
        await other.end();
        await pool.end();
      }
    });
  });
});

