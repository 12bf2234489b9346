// Pages of a published generation: the count and the places pages start are remembered
// per connection (store/fixed-scope.ts), so they must give exactly what a plain OFFSET
// query gives, in any order of page requests, with a query, per connection, and for
// another generation of the same data set. Records come back as their stored bytes.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../../src/service/store/sqlite/db.js';
import { rememberFields } from '../../src/service/store/sqlite/datasets.js';
import { createSqliteStore } from '../../src/service/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/service/store/store.js';
import { tempDir } from '../helpers/service.js';

let db: Db;
let store: Store;
const RECORDS = 1_037;

/** What the page must hold: a plain OFFSET query over the same rows, nothing remembered. */
function expected(generation: number, page: number, pageSize: number, where = '', connection?: string): string[] {
  const rows = db.prepare(`SELECT data FROM records WHERE company_id = 'c1' AND data_type = 'invoices' AND generation = ?${connection ? ' AND connection_id = ?' : ''}${where} ORDER BY seq LIMIT ? OFFSET ?`)
    .all(...[generation, ...(connection ? [connection] : []), pageSize, (page - 1) * pageSize]) as Array<{ data: string }>;
  return rows.map((r) => r.data);
}

const text = (rows: Array<{ data: Uint8Array }>) => rows.map((r) => Buffer.from(r.data).toString('utf8'));

beforeAll(() => {
  db = openDatabase(join(tempDir('ferry-record-pages-'), 'ferry.db'));
  store = createSqliteStore(db);
  // Two generations written interleaved, by two connections, so seq is not contiguous within either.
  for (let i = 0; i < RECORDS; i++) {
    for (const generation of [1, 2]) {
      const data = JSON.stringify({ id: `inv-${i}`, amount: i % 97, note: `générée ${generation} "${i}"` });
      store.upsertRecords('c1', 'invoices', generation, i % 3 === 0 ? 'conn-b' : 'conn-a', [{ id: `inv-${i}`, data }]);
    }
  }
  rememberFields(db, 'invoices', new Map([['amount', 'number']]));
});
afterAll(() => store.close());

describe('pages of a published generation', () => {
  it('every page, asked for out of order and again, is exactly the OFFSET page, with the right total', () => {
    for (const pageSize of [100, 7]) {
      const pages = Math.ceil(RECORDS / pageSize);
      const order = [pages, 1, 3, 2, Math.ceil(pages / 2), pages - 1, ...Array.from({ length: pages }, (_, i) => i + 1), 1, pages];
      for (const page of order) {
        const got = store.runPage<{ data: Uint8Array }>(store.recordsPage('c1', 'invoices', 1, { page, pageSize }));
        expect(got.total).toBe(RECORDS);
        expect(text(got.rows)).toEqual(expected(1, page, pageSize));
      }
    }
  });

  it('holds with a query, per connection, and for the other generation', () => {
    for (const page of [3, 1, 2, 3, 4]) {
      const filtered = store.runPage<{ data: Uint8Array }>(store.recordsPage('c1', 'invoices', 2, { page, pageSize: 50, query: 'amount>40' }));
      expect(text(filtered.rows)).toEqual(expected(2, page, 50, " AND json_extract(data, '$.amount') > 40"));
      const perConnection = store.runPage<{ data: Uint8Array }>(store.recordsPage('c1', 'invoices', 2, { page, pageSize: 50 }, 'conn-b'));
      expect(perConnection.total).toBe(Math.ceil(RECORDS / 3));
      expect(text(perConnection.rows)).toEqual(expected(2, page, 50, '', 'conn-b'));
    }
  });

  it('a page past the end is empty and still says the total', () => {
    const got = store.runPage<{ data: Uint8Array }>(store.recordsPage('c1', 'invoices', 1, { page: 99, pageSize: 100 }));
    expect(got).toMatchObject({ rows: [], total: RECORDS });
  });
});
