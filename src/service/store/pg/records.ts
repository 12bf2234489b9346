// The records of a data set's generations on PostgreSQL: the same statements as
// ../sqlite/datasets.ts, with the record's JSON kept as the text it was synced as (json, not jsonb)
// and read back as its UTF-8 bytes, as SQLite's CAST(data AS BLOB) gives them.
import type { FieldType } from '../../query/types.js';
import type { RecordBytes, RecordInput } from '../datasets.js';
import type { Page, PagePlan, PageRequest } from '../paging.js';
import { planRecordsPage } from '../records-page.js';
import { runPgPagePlan } from './paging.js';
import { row, rows, run, type Queryable } from './query.js';

/**
 * One page of records in one statement. Ids repeated within the page are upserted as
 * SQLite's row-by-row upsert leaves them: in the place of the first, with the values of
 * the last (PostgreSQL refuses to touch one row twice in a statement). The arrays go in
 * as three parameters, so the text is one statement whatever the page's size, and rows
 * take their seq in the page's order. Callers wrap it in the page's transaction.
 */
export async function upsertRecords(db: Queryable, companyId: string, dataType: string, generation: number, connectionId: string, records: RecordInput[]): Promise<void> {
  const byId = new Map<string, RecordInput>();
  for (const record of records) {
    // Map keeps the first insertion's place when a key is set again.
    byId.set(record.id, record);
  }
  if (byId.size === 0) return;
  const page = [...byId.values()];
  await run(db, `INSERT INTO records (company_id, data_type, generation, id, connection_id, modified_date, data)
                 SELECT ?, ?, ?, r.id, ?, r.modified_date, r.data::json
                 FROM unnest(?::text[], ?::text[], ?::text[]) WITH ORDINALITY AS r(id, modified_date, data, n) ORDER BY r.n
                 ON CONFLICT (company_id, data_type, generation, id) DO UPDATE SET
                 modified_date = excluded.modified_date, data = excluded.data`,
  [companyId, dataType, generation, connectionId, page.map((r) => r.id), page.map((r) => r.modifiedDate ?? null), page.map((r) => r.data)]);
}

/** Deletes up to `limit` records of older generations; returns how many went. */
export async function pruneGenerations(db: Queryable, companyId: string, dataType: string, keep: number, limit: number): Promise<number> {
  return run(db, `WITH doomed AS (SELECT seq FROM records WHERE company_id = ? AND data_type = ? AND generation < ? LIMIT ?)
                  DELETE FROM records WHERE seq IN (SELECT seq FROM doomed)`, [companyId, dataType, keep, limit]);
}

export async function countRecords(db: Queryable, companyId: string, dataType: string, generation: number): Promise<number> {
  return (await row<{ n: number }>(db, 'SELECT count(*) AS n FROM records WHERE company_id = ? AND data_type = ? AND generation = ?',
    [companyId, dataType, generation]))!.n;
}

export async function getRecord(db: Queryable, companyId: string, dataType: string, generation: number, id: string, connectionId?: string): Promise<string | undefined> {
  const found = connectionId
    ? await row<{ data: string }>(db, 'SELECT data FROM records WHERE company_id = ? AND data_type = ? AND generation = ? AND id = ? AND connection_id = ?',
      [companyId, dataType, generation, id, connectionId])
    : await row<{ data: string }>(db, 'SELECT data FROM records WHERE company_id = ? AND data_type = ? AND generation = ? AND id = ?',
      [companyId, dataType, generation, id]);
  return found?.data;
}

export async function recordFields(db: Queryable, dataType: string): Promise<Map<string, FieldType>> {
  const found = await rows<{ path: string; type: FieldType }>(db, 'SELECT path, type FROM data_type_fields WHERE data_type = ? ORDER BY path', [dataType]);
  return new Map(found.map((r) => [r.path, r.type]));
}

// In path order: pages of two pulls of one data type (each in its page's transaction) that
// bring the same new paths wait for each other path by path in the same order, never in a cycle.
export async function rememberFields(db: Queryable, dataType: string, fields: Map<string, FieldType>): Promise<void> {
  if (fields.size === 0) return;
  await run(db, `INSERT INTO data_type_fields (data_type, path, type) SELECT ?, f.path, f.type FROM unnest(?::text[], ?::text[]) AS f(path, type)
                 ORDER BY f.path ON CONFLICT (data_type, path) DO NOTHING`, [dataType, [...fields.keys()], [...fields.values()]]);
}

/** A page of a published generation's records (../records-page.ts), each as its UTF-8 bytes. */
export async function recordsPage(db: Queryable, companyId: string, dataType: string, generation: number, request: PageRequest, connectionId?: string): Promise<PagePlan> {
  return planRecordsPage('postgres', await recordFields(db, dataType), companyId, dataType, generation, request, connectionId);
}

/** A page of records, each as its JSON text's UTF-8 bytes (a Buffer, as SQLite gives). */
export async function listRecords(db: Queryable, companyId: string, dataType: string, generation: number, request: PageRequest): Promise<Page<RecordBytes>> {
  return runPgPagePlan<RecordBytes>(db, await recordsPage(db, companyId, dataType, generation, request));
}
