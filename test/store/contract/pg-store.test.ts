// The whole PostgreSQL store, composed: one sync's path across the groups gives the same
// answers as SQLite's, and its transactions are what the contract says they are.
import type { Pool } from 'pg';
import { expect, it } from 'vitest';
import type { AsyncStore } from '../../../src/service/store/async-store.js';
import { createPgStore } from '../../../src/service/store/pg/pg-store.js';
import { describePostgres } from '../../helpers/postgres.js';
import { relabel } from './owners.js';
import { freshPostgres, freshSqlite, onBoth } from './stores.js';

const T0 = '2026-01-01T00:00:00Z';
const whole = (db: unknown): AsyncStore => createPgStore(db as Pool);

describePostgres('the PostgreSQL store, composed', () => {
  it('a client, a company, a connection, a pull and its records: the same answers as SQLite', async () => {
    const { sqlite, postgres } = await onBoth(whole, async (store) => {
      const client = await store.insertClient({ name: 'Acme Accounting', plan: 'Paid', created: T0 });
      const company = await store.insertCompany(client.id, { name: 'Acme Ltd', tags: { region: 'uk' } }, T0);
      const connection = await store.insertConnection(company.id, 'gbol', 'source-1', T0);
      const names = new Map([[client.id, 'CLIENT'], [company.id, 'COMPANY'], [connection.id, 'CONNECTION']]);
      const generation = await store.transaction(async (tx) => {
        const reserved = await tx.reserveGeneration(company.id, 'invoices', 'sync-1', T0);
        await tx.insertPull({ id: 'sync-1', companyId: company.id, connectionId: connection.id, dataType: 'invoices', status: 'Queued', generation: reserved, requested: T0 });
        return reserved;
      });
      await store.transaction(async (tx) => {
        await tx.upsertRecords(company.id, 'invoices', generation, connection.id, [
          { id: 'inv-1', modifiedDate: T0, data: '{"id":"inv-1","amountDue":10.5,"status":"Paid"}' },
          { id: 'inv-2', modifiedDate: T0, data: '{"id":"inv-2","amountDue":0,"status":"Void"}' },
        ]);
        await tx.rememberFields('invoices', new Map([['id', 'string'], ['amountDue', 'number'], ['status', 'string']]));
        await tx.publishGeneration(company.id, 'invoices', generation, 'sync-1', T0);
        await tx.updatePull('sync-1', { status: 'Complete', completed: T0 });
      });
      const page = await store.runPage<{ data: Buffer }>(await store.recordsPage(company.id, 'invoices', generation, { page: 1, pageSize: 10, query: 'status=paid' }));
      return relabel({
        company: await store.getCompany(company.id),
        connections: await store.listConnections(company.id, { page: 1, pageSize: 10 }),
        dataset: await store.getDataset(company.id, 'invoices'),
        pull: await store.getPull('sync-1'),
        records: page.rows.map((r) => r.data.toString('utf8')),
        total: page.total,
        count: await store.countRecords(company.id, 'invoices', generation),
      }, names);
    });
    expect(postgres).toEqual(sqlite);
    expect(postgres.records).toEqual(['{"id":"inv-1","amountDue":10.5,"status":"Paid"}']);
  });

  it('record pages by seek (in order, backwards, again) and by offset (with orderBy) give the same rows as SQLite', async () => {
    const { sqlite, postgres } = await onBoth(whole, async (store) => {
      const client = await store.insertClient({ name: 'A', plan: 'Paid', created: T0 });
      const company = await store.insertCompany(client.id, { name: 'Acme', tags: {} }, T0);
      const connection = await store.insertConnection(company.id, 'gbol', 's', T0);
      const records = Array.from({ length: 40 }, (_, i) => ({ id: `r${i}`, data: JSON.stringify({ id: `r${i}`, n: (i * 7) % 13 }) }));
      await store.upsertRecords(company.id, 'invoices', 1, connection.id, records);
      await store.rememberFields('invoices', new Map([['id', 'string'], ['n', 'number']]));
      const read = async (page: number, orderBy?: string) => {
        const { rows, total } = await store.runPage<{ data: Buffer }>(await store.recordsPage(company.id, 'invoices', 1, { page, pageSize: 7, ...(orderBy ? { orderBy } : {}) }));
        return { page, total, ids: rows.map((r) => (JSON.parse(r.data.toString('utf8')) as { id: string }).id) };
      };
      const pages = [];
      for (const page of [1, 2, 3, 4, 5, 6, 7, 6, 3, 1, 5, 9]) pages.push(await read(page));
      for (const page of [1, 4, 6]) pages.push(await read(page, '-n'));
      return pages;
    });
    expect(postgres).toEqual(sqlite);
    expect(postgres.slice(0, 6).flatMap((p) => p.ids)).toEqual(Array.from({ length: 40 }, (_, i) => `r${i}`));
  });

  it('a transaction commits together, rolls back together, is invisible from outside until it commits, and a nested one joins it', async () => {
    const pool = await freshPostgres();
    const store = createPgStore(pool);
    try {
      const client = await store.insertClient({ name: 'A', plan: 'Paid', created: T0 });
      await expect(store.transaction(async (tx) => {
        await tx.insertCompany(client.id, { name: 'Gone', tags: {} }, T0);
        await tx.transaction((nested) => nested.insertCompany(client.id, { name: 'Gone too', tags: {} }, T0));
        throw new Error('no');
      })).rejects.toThrow('no');
      expect(await store.countCompanies(client.id)).toBe(0);

      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let inserted!: () => void;
      const written = new Promise<void>((resolve) => (inserted = resolve));
      const tx = store.transaction(async (inner) => {
        await inner.insertCompany(client.id, { name: 'Kept', tags: {} }, T0);
        expect(await inner.countCompanies(client.id)).toBe(1);
        inserted();
        await held;
      });
      await written;
      expect(await store.countCompanies(client.id)).toBe(0); // another connection: not committed yet
      release();
      await tx;
      expect(await store.countCompanies(client.id)).toBe(1);
    } finally {
      await store.close();
    }
  });

  it('refuses a page whose record holds a raw U+001E (not JSON), writing none of it', async () => {
    const store = createPgStore(await freshPostgres());
    try {
      const client = await store.insertClient({ name: 'Acme Accounting', plan: 'Paid', created: T0 });
      const company = await store.insertCompany(client.id, { name: 'Acme Ltd', tags: {} }, T0);
      const connection = await store.insertConnection(company.id, 'gbol', 'source-1', T0);
      const page = [{ id: 'b1', data: '{"v":1}' }, { id: 'b2', data: '{"v":"a\u001eb"}' }, { id: 'b3', data: '{"v":3}' }];
      expect(page[1]!.data).toContain('\u001e');
      await expect(store.upsertRecords(company.id, 'bills', 1, connection.id, page)).rejects.toThrow(/U\+001E/);
      expect(await store.countRecords(company.id, 'bills', 1)).toBe(0);
      // Escaped, as JSON writes it, it is a character like any other.
      const escaped = JSON.stringify({ v: 'a\u001eb' });
      await store.upsertRecords(company.id, 'bills', 1, connection.id, [{ id: 'b1', data: '{"v":1}' }, { id: 'b2', data: escaped }, { id: 'b3', data: '{"v":3}' }]);
      expect(await Promise.all(['b1', 'b2', 'b3'].map((id) => store.getRecord(company.id, 'bills', 1, id)))).toEqual(['{"v":1}', escaped, '{"v":3}']);
    } finally {
      await store.close();
    }
  });

  it('closing twice is closing once', async () => {
    const stores = [freshSqlite(), createPgStore(await freshPostgres())];
    for (const store of stores) {
      await store.close();
      await expect(store.close()).resolves.toBeUndefined();
    }
  });

  // SQLite runs one transaction at a time; on PostgreSQL the reads these decisions rest on
  // lock what they decide on (decision-locks.ts). The pool's connections are opened first
  // and each transaction yields between its read and its write, so without the lock they
  // would read side by side before any wrote.
  const turns = () => new Promise<void>((resolve) => setImmediate(resolve));
  const warm = (store: AsyncStore) => Promise.all(Array.from({ length: 4 }, () => store.listClients({ page: 1, pageSize: 1 })));

  it('concurrent transactions that count, then insert below a limit, stop at the limit', async () => {
    const { sqlite, postgres } = await onBoth(whole, async (store) => {
      const client = await store.insertClient({ name: 'Free', plan: 'Free', created: T0 });
      await warm(store);
      const created = await Promise.all(Array.from({ length: 8 }, (_, i) => store.transaction(async (tx) => {
        if (await tx.countCompanies(client.id) >= 3) return false;
        await turns();
        await tx.insertCompany(client.id, { name: `Racer ${i}`, tags: {} }, T0);
        return true;
      })));
      return { created: created.filter(Boolean).length, count: await store.countCompanies(client.id) };
    });
    expect(postgres).toEqual(sqlite);
    expect(postgres).toEqual({ created: 3, count: 3 });
  });

  it('concurrent transactions that queue a pull unless one is open queue one', async () => {
    const { sqlite, postgres } = await onBoth(whole, async (store) => {
      const client = await store.insertClient({ name: 'A', plan: 'Paid', created: T0 });
      const company = await store.insertCompany(client.id, { name: 'Acme', tags: {} }, T0);
      const connection = await store.insertConnection(company.id, 'gbol', 's', T0);
      await warm(store);
      const queue = (id: string, all: boolean) => store.transaction(async (tx) => {
        const open = all ? (await tx.openPulls(company.id)).get('invoices') : await tx.openPull(company.id, 'invoices');
        if (open) return open.id;
        await turns();
        await tx.insertPull({ id, companyId: company.id, connectionId: connection.id, dataType: 'invoices', status: 'Queued', generation: 1, requested: T0 });
        return id;
      });
      const ids = await Promise.all(Array.from({ length: 6 }, (_, i) => queue(`pull-${i}`, i % 2 === 1)));
      return { distinct: new Set(ids).size, pulls: (await store.runPage(store.pullsPage(company.id, { page: 1, pageSize: 10 }))).total };
    });
    expect(postgres).toEqual(sqlite);
    expect(postgres).toEqual({ distinct: 1, pulls: 1 });
  });
});
