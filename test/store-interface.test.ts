// The Store seam: what routes and workers rely on, through the interface alone, on a real
// SQLite file. A second implementation (PostgreSQL) must pass the same checks.
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../src/service/store/sqlite/db.js';
import { createSqliteStore } from '../src/service/store/sqlite/sqlite-store.js';
import type { Store } from '../src/service/store/store.js';
import { tempDir } from './helpers/service.js';

let store: Store | undefined;
afterEach(() => store?.close());

const open = (): Store => (store = createSqliteStore(openDatabase(join(tempDir('ferry-store-'), 'ferry.db'))));

describe('the Store interface (SQLite)', () => {
  it('a transaction is all or nothing', () => {
    const s = open();
    const before = s.listClients({ page: 1, pageSize: 100 }).total;
    expect(() => s.transaction(() => {
      s.insertClient({ name: 'Half Done Ltd', plan: 'Free', created: '2026-11-24T10:00:00Z' });
      throw new Error('stop');
    })).toThrow('stop');
    expect(s.listClients({ page: 1, pageSize: 100 }).total).toBe(before);
    const kept = s.transaction(() => s.insertClient({ name: 'Whole Ltd', plan: 'Paid', created: '2026-11-24T10:00:00Z' }));
    expect(s.getClient(kept.id)).toMatchObject({ name: 'Whole Ltd', plan: 'Paid' });
  });

  it('a page plan runs to the same rows as the list it describes, and the data version moves with every write', () => {
    const s = open();
    const client = s.insertClient({ name: 'Pages Ltd', plan: 'Paid', created: '2026-11-24T10:00:00Z' });
    const version = s.dataVersion();
    for (let i = 0; i < 5; i++) s.insertCompany(client.id, { name: `Company ${i}`, tags: {} }, `2026-11-24T10:00:0${i}Z`);
    expect(s.dataVersion()).not.toBe(version);
    const page = s.runPage<{ name: string }>(s.companiesPage(client.id, { page: 2, pageSize: 2 }));
    expect(page.total).toBe(5);
    expect(page.rows.map((r) => r.name)).toEqual(['Company 2', 'Company 3']);
    expect(s.countCompanies(client.id)).toBe(5);
  });

  it('closing twice is harmless', () => {
    const s = open();
    s.close();
    expect(() => s.close()).not.toThrow();
    store = undefined;
  });
});
