// The records of a data set's generations on PostgreSQL: the same statements as
// ../sqlite/datasets.ts, with the record's JSON kept as the text it was synced as (json, not jsonb)
// and read back as its UTF-8 bytes, as SQLite's CAST(data AS BLOB) gives them.
import type { FieldType } from '../../query/types.js';
import type { RecordBytes, RecordInput } from '../datasets.js';
import type { RecordBatch } from '../grouped-writes.js';
import type { Page, PagePlan, PageRequest } from '../paging.js';
import { planRecordsPage } from '../records-page.js';
import { runPgPagePlan } from './paging.js';
import { row, rows, run, type Queryable } from './query.js';

/** One page of records into a generation (writeRecords of one batch). Callers wrap it in the page's transaction. */
export function upsertRecords(db: Queryable, companyId: string, dataType: string, generation: number, connectionId: string, records: RecordInput[]): Promise<void> {
  return writeRecords(db, [{ companyId, dataType, generation, connectionId, rows: records }]);
}

/** Between records in the one text of their JSON: a control character, which JSON text holds only escaped. */
const RECORD_SEPARATOR = '\u001e';

/**
 * Pages of several data sets, in one statement for the pages of fresh generations and one
 * for the others. A record given twice (in a page, or in two pages of its data set) is
 * upserted as SQLite's row-by-row upsert leaves it: in the place and with the connection of
 * the first, with the values of the last (PostgreSQL refuses to touch one row twice in a
 * statement). A fresh generation's page (RecordBatch.fresh) is a plain INSERT: an upsert
 * inserts each row speculatively, looking for its key first and confirming the row after,
 * which cost a third of the statement's server CPU for rows that cannot be there yet.
 */
export async function writeRecords(db: Queryable, batches: RecordBatch[]): Promise<void> {
  const fresh = batches.filter((b) => b.fresh);
  if (fresh.length > 0) await insertPages(db, fresh, '');
  const seen = batches.filter((b) => !b.fresh);
  if (seen.length > 0) await insertPages(db, seen, UPSERT);
}

const UPSERT = 'ON CONFLICT (company_id, data_type, generation, id) DO UPDATE SET modified_date = excluded.modified_date, data = excluded.data';

/**
 * The batches and their rows go in as arrays, so the text is one statement whatever the
 * group's size, and rows take their seq in the order given.
 * The records' JSON goes in as one text, the records apart by the ASCII record separator
 * (U+001E), which JSON text never holds raw: not a text[], whose array literal escapes every
 * quote of every record (that cost the sync worker more CPU than the rest of the write), nor
 * one JSON array, which the server parses twice (the cast to json, then taking it apart)
 * and trims of any space around a record. Each record is parsed once, by its own cast.
 * The text is split by string_to_table, a function in FROM that runs when the statement
 * does: string_to_array over a parameter is folded while the statement is planned, which
 * copies the split page through the planner and cost a fifth of the statement's server CPU.
 */
async function insertPages(db: Queryable, batches: RecordBatch[], onConflict: string): Promise<void> {
  const rowBatch: number[] = [];
  const page: RecordInput[] = [];
  // By data set generation, then by id: where each record is in `page`.
  const placed = new Map<string, Map<string, number>>();
  for (const [i, batch] of batches.entries()) {
    const generation = JSON.stringify([batch.companyId, batch.dataType, batch.generation]);
    let at = placed.get(generation);
    if (!at) placed.set(generation, at = new Map());
    for (const record of batch.rows) {
      const first = at.get(record.id);
      if (first !== undefined) {
        page[first] = record;
        continue;
      }
      at.set(record.id, page.length);
      rowBatch.push(i + 1);
      page.push(record);
    }
  }
  if (page.length === 0) return;
  // Not JSON, and it would move every record after it: refused as the cast would refuse it.
  if (page.some((r) => r.data.includes(RECORD_SEPARATOR))) throw new Error('A record\'s JSON holds a raw control character (U+001E): not valid JSON.');
  await run(db, `WITH b AS (SELECT * FROM unnest(?::text[], ?::text[], ?::int[], ?::text[]) WITH ORDINALITY AS b(company_id, data_type, generation, connection_id, k))
                 INSERT INTO records (company_id, data_type, generation, id, connection_id, modified_date, data)
                 SELECT b.company_id, b.data_type, b.generation, r.id, b.connection_id, r.modified_date, r.data::json
                 FROM ROWS FROM (unnest(?::int[]), unnest(?::text[]), unnest(?::text[]), string_to_table(?::text, chr(${RECORD_SEPARATOR.charCodeAt(0)}))) WITH ORDINALITY AS r(k, id, modified_date, data, n)
                 JOIN b ON b.k = r.k ORDER BY r.n ${onConflict}`,
  [batches.map((b) => b.companyId), batches.map((b) => b.dataType), batches.map((b) => b.generation), batches.map((b) => b.connectionId),
    rowBatch, page.map((r) => r.id), page.map((r) => r.modifiedDate ?? null), joinedUtf8(page.map((r) => r.data), RECORD_SEPARATOR.charCodeAt(0))]);
}

/**
 * The texts as UTF-8, one separator byte between them. node-postgres sends a Buffer as a
 * parameter of binary format, which for a text is its bytes as they are. Joining the
 * strings first built a string the size of the page, which the driver then encoded again:
 * about three times the worker's CPU of writing each record into the buffer once
 * (docs/performance.md).
 */
function joinedUtf8(texts: string[], separator: number): Buffer {
  let size = Math.max(texts.length - 1, 0);
  for (const text of texts) size += Buffer.byteLength(text);
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  for (const [i, text] of texts.entries()) {
    if (i > 0) out[at++] = separator;
    at += out.write(text, at);
  }
  return out;
}

/** Deletes up to `limit` records of older generations; returns how many went. */
export async function pruneGenerations(db: Queryable, companyId: string, dataType: string, keep: number, limit: number): Promise<number> {
  return run(db, `WITH doomed AS (SELECT generation, seq FROM records WHERE company_id = ? AND data_type = ? AND generation < ? LIMIT ?)
                  DELETE FROM records r USING doomed d WHERE r.company_id = ? AND r.data_type = ? AND r.generation = d.generation AND r.seq = d.seq`,
  [companyId, dataType, keep, limit, companyId, dataType]);
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

export function rememberFields(db: Queryable, dataType: string, fields: Map<string, FieldType>): Promise<void> {
  return rememberAllFields(db, new Map([[dataType, fields]]));
}

// In (data type, path) order: groups of two jobs that bring the same new paths wait for
// each other path by path in the same order, never in a cycle.
export async function rememberAllFields(db: Queryable, fields: Map<string, Map<string, FieldType>>): Promise<void> {
  const dataTypes: string[] = [];
  const paths: string[] = [];
  const types: string[] = [];
  for (const [dataType, found] of fields) {
    for (const [path, type] of found) {
      dataTypes.push(dataType);
      paths.push(path);
      types.push(type);
    }
  }
  if (paths.length === 0) return;
  await run(db, `INSERT INTO data_type_fields (data_type, path, type) SELECT f.data_type, f.path, f.type FROM unnest(?::text[], ?::text[], ?::text[]) AS f(data_type, path, type)
                 ORDER BY f.data_type, f.path ON CONFLICT (data_type, path) DO NOTHING`, [dataTypes, paths, types]);
}

/** A page of a published generation's records (../records-page.ts), each as its UTF-8 bytes. */
export async function recordsPage(db: Queryable, companyId: string, dataType: string, generation: number, request: PageRequest, connectionId?: string): Promise<PagePlan> {
  return planRecordsPage('postgres', await recordFields(db, dataType), companyId, dataType, generation, request, connectionId);
}

/** A page of records, each as its JSON text's UTF-8 bytes (a Buffer, as SQLite gives). */
export async function listRecords(db: Queryable, companyId: string, dataType: string, generation: number, request: PageRequest): Promise<Page<RecordBytes>> {
  return runPgPagePlan<RecordBytes>(db, await recordsPage(db, companyId, dataType, generation, request));
}
