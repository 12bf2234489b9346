// Data sets on PostgreSQL: generations (snapshots) of synced records and the schedule, as
// ../sqlite/datasets.ts keeps them in SQLite; the records themselves are in records.ts.
import type { AsyncStore } from '../async-store.js';
import type { DatasetStore } from '../store.js';
import { COMPANY_DATA_STATUS, splitCompanyDataStatus, type DatasetRow, type ScheduleCandidate } from '../datasets.js';
import { openByKey } from '../pulls.js';
import { row, rows, type Queryable } from './query.js';
import * as records from './records.js';

type DatasetMethods = Pick<AsyncStore, keyof DatasetStore>;

/** Makes the generation visible; answers the one it replaced, read under the row lock the update takes. */
const PUBLISH = `UPDATE datasets d SET visible_generation = ?, latest_successful_sync_id = ?, last_successful_sync = ?
  FROM old WHERE d.company_id = old.company_id AND d.data_type = old.data_type
  RETURNING old.visible_generation`;
const OLD = 'old AS (SELECT company_id, data_type, visible_generation FROM datasets WHERE company_id = ? AND data_type = ? FOR UPDATE)';

/**
 * publishGeneration of each data type given and setLastSync (pg/connections.ts) in one
 * statement: each connection's last sync its last generation's, the company's the last of
 * all. The company's row is updated before the connections' (EXISTS makes them wait), and
 * the caller holds the company's lock already, so no other writer of the company holds
 * what the rest updates; the data sets are locked in data type order.
 */
const COMPLETE = `WITH input AS (
    SELECT * FROM unnest(?::text[], ?::int[], ?::text[], ?::text[], ?::text[]) WITH ORDINALITY AS x(data_type, generation, sync_id, connection_id, completed, n)
  ), company AS (UPDATE companies SET last_sync = ? WHERE id = ? RETURNING id),
  connection AS (
    UPDATE connections c SET last_sync = l.completed
    FROM (SELECT DISTINCT ON (connection_id) connection_id, completed FROM input ORDER BY connection_id, n DESC) l
    WHERE c.id = l.connection_id AND EXISTS (SELECT 1 FROM company) RETURNING c.id
  ), old AS (
    SELECT company_id, data_type, visible_generation FROM datasets WHERE company_id = ? AND data_type IN (SELECT data_type FROM input)
    ORDER BY data_type FOR UPDATE
  ), published AS (
    UPDATE datasets d SET visible_generation = i.generation, latest_successful_sync_id = i.sync_id, last_successful_sync = i.completed
    FROM old JOIN input i ON i.data_type = old.data_type WHERE d.company_id = old.company_id AND d.data_type = old.data_type
    RETURNING old.data_type, old.visible_generation
  )
  SELECT data_type, visible_generation FROM published`;

export function datasetMethods(db: Queryable): DatasetMethods {
  return {
    getDataset: (companyId, dataType) => row<DatasetRow>(db, 'SELECT * FROM datasets WHERE company_id = ? AND data_type = ?', [companyId, dataType]),
    companyDataStatus: async (companyId) => splitCompanyDataStatus(await rows<Record<string, unknown>>(db, COMPANY_DATA_STATUS, [companyId])),
    reserveGeneration: async (companyId, dataType, syncId, requested) => {
      const reserved = await row<{ next_generation: number }>(db, `INSERT INTO datasets (company_id, data_type, next_generation, latest_sync_id, last_requested)
        VALUES (?, ?, 2, ?, ?)
        ON CONFLICT (company_id, data_type) DO UPDATE SET next_generation = datasets.next_generation + 1,
        latest_sync_id = excluded.latest_sync_id, last_requested = excluded.last_requested
        RETURNING next_generation`, [companyId, dataType, syncId, requested]);
      return reserved!.next_generation - 1;
    },
    publishGeneration: async (companyId, dataType, generation, syncId, completed) => {
      const replaced = await row<{ visible_generation: number | null }>(db, `WITH ${OLD} ${PUBLISH}`, [companyId, dataType, generation, syncId, completed]);
      return replaced?.visible_generation ?? null;
    },
    completeGenerations: async (companyId, generations) => {
      const last = generations.at(-1);
      if (!last) return [];
      const column = <T>(value: (g: (typeof generations)[number]) => T): T[] => generations.map(value);
      const replaced = new Map((await rows<{ data_type: string; visible_generation: number | null }>(db, COMPLETE, [
        column((g) => g.dataType), column((g) => g.generation), column((g) => g.syncId), column((g) => g.connectionId), column((g) => g.completed),
        last.completed, companyId, companyId,
      ])).map((r) => [r.data_type, r.visible_generation]));
      return generations.map((g) => replaced.get(g.dataType) ?? null);
    },
    upsertRecords: (companyId, dataType, generation, connectionId, page) => records.upsertRecords(db, companyId, dataType, generation, connectionId, page),
    writeRecords: (batches) => records.writeRecords(db, batches),
    pruneGenerations: (companyId, dataType, keep, limit) => records.pruneGenerations(db, companyId, dataType, keep, limit),
    countRecords: (companyId, dataType, generation) => records.countRecords(db, companyId, dataType, generation),
    getRecord: (companyId, dataType, generation, id, connectionId) => records.getRecord(db, companyId, dataType, generation, id, connectionId),
    recordFields: (dataType) => records.recordFields(db, dataType),
    rememberFields: (dataType, fields) => records.rememberFields(db, dataType, fields),
    rememberAllFields: (fields) => records.rememberAllFields(db, fields),
    recordsPage: (companyId, dataType, generation, request, connectionId) => records.recordsPage(db, companyId, dataType, generation, request, connectionId),
    listRecords: (companyId, dataType, generation, request) => records.listRecords(db, companyId, dataType, generation, request),
    scheduleCandidates: (requestedBefore) => rows<ScheduleCandidate>(db, `SELECT d.company_id, c.client_id, d.data_type, d.last_requested FROM datasets d
      JOIN companies c ON c.id = d.company_id
      WHERE d.last_requested <= ? AND NOT EXISTS (SELECT 1 FROM pull_operations p WHERE p.company_id = d.company_id
        AND p.data_type = d.data_type AND ${openByKey('p.status')})`, [requestedBefore]),
  };
}
