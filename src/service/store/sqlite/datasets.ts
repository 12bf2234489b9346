// Data set state per (company, data type) and the records of each generation.
import type { FieldType } from '../../query/types.js';
import type { Db } from './db.js';
import type { Page, PagePlan, PageRequest } from '../paging.js';
import { runPagePlan } from './paging.js';
import { planRecordsPage } from '../records-page.js';
import { prepared } from './statements.js';
import { COMPANY_DATA_STATUS, splitCompanyDataStatus, type CompanyDataStatus, type DatasetRow, type RecordBytes, type RecordInput, type ScheduleCandidate } from '../datasets.js';
import type { RecordBatch } from '../grouped-writes.js';

export function getDataset(db: Db, companyId: string, dataType: string): DatasetRow | undefined {
  return prepared(db, 'SELECT * FROM datasets WHERE company_id = ? AND data_type = ?').get(companyId, dataType) as DatasetRow | undefined;
}

export function companyDataStatus(db: Db, companyId: string): CompanyDataStatus | undefined {
  return splitCompanyDataStatus(prepared(db, COMPANY_DATA_STATUS).all(companyId) as Array<Record<string, unknown>>);
}

/** Reserves the generation a new pull writes into, and records the request. */
export function reserveGeneration(db: Db, companyId: string, dataType: string, syncId: string, requested: string): number {
  const row = prepared(db, `INSERT INTO datasets (company_id, data_type, next_generation, latest_sync_id, last_requested) VALUES (?, ?, 2, ?, ?)
                ON CONFLICT (company_id, data_type) DO UPDATE SET next_generation = next_generation + 1,
                latest_sync_id = excluded.latest_sync_id, last_requested = excluded.last_requested
                RETURNING next_generation`).get(companyId, dataType, syncId, requested) as { next_generation: number };
  return row.next_generation - 1;
}

/** Makes a completed pull's generation the one readers see. Returns the generation it replaced. */
export function publishGeneration(db: Db, companyId: string, dataType: string, generation: number, syncId: string, completed: string): number | null {
  const previous = getDataset(db, companyId, dataType)?.visible_generation ?? null;
  prepared(db, `UPDATE datasets SET visible_generation = ?, latest_successful_sync_id = ?, last_successful_sync = ?
                WHERE company_id = ? AND data_type = ?`).run(generation, syncId, completed, companyId, dataType);
  return previous;
}

/** Upserts one page of records into a generation; callers wrap it in the page's transaction. */
export function upsertRecords(db: Db, companyId: string, dataType: string, generation: number, connectionId: string, records: RecordInput[]): void {
  const statement = prepared(db, `INSERT INTO records (company_id, data_type, generation, id, connection_id, modified_date, data)
                                  VALUES (?, ?, ?, ?, ?, ?, ?)
                                  ON CONFLICT (company_id, data_type, generation, id) DO UPDATE SET
                                  modified_date = excluded.modified_date, data = excluded.data`);
  for (const record of records) {
    statement.run(companyId, dataType, generation, record.id, connectionId, record.modifiedDate ?? null, record.data);
  }
}

/** upsertRecords of each batch, in the order given. */
export function writeRecords(db: Db, batches: RecordBatch[]): void {
  for (const { companyId, dataType, generation, connectionId, rows } of batches) upsertRecords(db, companyId, dataType, generation, connectionId, rows);
}

/** Deletes up to `limit` records of older generations; returns how many went. */
export function pruneGenerations(db: Db, companyId: string, dataType: string, keep: number, limit: number): number {
  return prepared(db, `DELETE FROM records WHERE seq IN (SELECT seq FROM records WHERE company_id = ? AND data_type = ? AND generation < ? LIMIT ?)`)
    .run(companyId, dataType, keep, limit).changes;
}

export function countRecords(db: Db, companyId: string, dataType: string, generation: number): number {
  return (prepared(db, 'SELECT count(*) AS n FROM records WHERE company_id = ? AND data_type = ? AND generation = ?')
    .get(companyId, dataType, generation) as { n: number }).n;
}

export function getRecord(db: Db, companyId: string, dataType: string, generation: number, id: string, connectionId?: string): string | undefined {
  const row = (connectionId
    ? prepared(db, 'SELECT data FROM records WHERE company_id = ? AND data_type = ? AND generation = ? AND id = ? AND connection_id = ?').get(companyId, dataType, generation, id, connectionId)
    : prepared(db, 'SELECT data FROM records WHERE company_id = ? AND data_type = ? AND generation = ? AND id = ?').get(companyId, dataType, generation, id)) as { data: string } | undefined;
  return row?.data;
}

export function recordFields(db: Db, dataType: string): Map<string, FieldType> {
  const rows = prepared(db, 'SELECT path, type FROM data_type_fields WHERE data_type = ?').all(dataType) as Array<{ path: string; type: FieldType }>;
  return new Map(rows.map((r) => [r.path, r.type]));
}

export function rememberFields(db: Db, dataType: string, fields: Map<string, FieldType>): void {
  rememberAllFields(db, new Map([[dataType, fields]]));
}

/** rememberFields of each data type, in one statement (a page's sample shows a few hundred paths, most known already). */
export function rememberAllFields(db: Db, fields: Map<string, Map<string, FieldType>>): void {
  const rows = [...fields].flatMap(([dataType, found]) => [...found].map(([path, type]) => [dataType, path, type]));
  if (rows.length === 0) return;
  prepared(db, `INSERT OR IGNORE INTO data_type_fields (data_type, path, type)
                SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]') FROM json_each(?)`).run(JSON.stringify(rows));
}

/**
 * A page of a published generation's records (records-page.ts), each as its UTF-8 bytes: a
 * page is spliced from them as they are, with no string made of each and no encoding of
 * the page again on its way out.
 */
export function recordsPage(db: Db, companyId: string, dataType: string, generation: number, request: PageRequest, connectionId?: string): PagePlan {
  return planRecordsPage('sqlite', recordFields(db, dataType), companyId, dataType, generation, request, connectionId);
}

/** A page of records, each as its JSON text's UTF-8 bytes. */
export function listRecords(db: Db, companyId: string, dataType: string, generation: number, request: PageRequest): Page<RecordBytes> {
  return runPagePlan<RecordBytes>(db, recordsPage(db, companyId, dataType, generation, request));
}

/** Data sets last requested at or before `requestedBefore`, with no pull open now: the ones a schedule may queue again. */
export function scheduleCandidates(db: Db, requestedBefore: string): ScheduleCandidate[] {
  return prepared(db, `SELECT d.company_id, c.client_id, d.data_type, d.last_requested FROM datasets d
    JOIN companies c ON c.id = d.company_id
    WHERE d.last_requested <= ? AND NOT EXISTS (SELECT 1 FROM pull_operations p WHERE p.company_id = d.company_id
      AND p.data_type = d.data_type AND p.status IN ('Queued', 'Fetching', 'Mapping'))`).all(requestedBefore) as ScheduleCandidate[];
}
