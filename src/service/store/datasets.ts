// Data sets and their records as both stores keep them (SQL in sqlite/datasets.ts and
// pg/datasets.ts, pg/records.ts).
import type { CompanyRow } from './companies.js';
import type { PullRow } from './pulls.js';

export interface DatasetRow {
  company_id: string;
  data_type: string;
  visible_generation: number | null;
  next_generation: number;
  latest_sync_id: string | null;
  latest_successful_sync_id: string | null;
  last_successful_sync: string | null;
  last_requested: string | null;
}

/** A stored record as read for a page: its JSON text in UTF-8 (a Buffer here, a Uint8Array from a reader thread). */
export interface RecordBytes {
  data: Uint8Array;
}

export interface RecordInput {
  id: string;
  modifiedDate?: string;
  data: string;
}

export interface ScheduleCandidate {
  company_id: string;
  client_id: string;
  data_type: string;
  last_requested: string;
}

/** A data set as GET …/dataStatus shows it: its row and what it needs of its latest pull. */
export interface DatasetStatus {
  dataset: DatasetRow;
  /** Undefined when the data set names no pull, or the pull is gone. */
  latest: Pick<PullRow, 'id' | 'status' | 'completed'> | undefined;
}

export interface CompanyDataStatus {
  company: CompanyRow;
  /** By data type. */
  datasets: DatasetStatus[];
}

const DATASET_COLUMNS = ['company_id', 'data_type', 'visible_generation', 'next_generation', 'latest_sync_id', 'latest_successful_sync_id',
  'last_successful_sync', 'last_requested'] as const;

/**
 * The company, its data sets and each one's latest pull in one read (both dialects): a sync's
 * waiter asks this of each company again and again, so it is one round trip, not three.
 */
export const COMPANY_DATA_STATUS = `SELECT co.*, ${DATASET_COLUMNS.map((c) => `d.${c} AS ferry_d_${c}`).join(', ')},
  p.status AS ferry_p_status, p.completed AS ferry_p_completed
  FROM companies co LEFT JOIN datasets d ON d.company_id = co.id LEFT JOIN pull_operations p ON p.id = d.latest_sync_id
  WHERE co.id = ? ORDER BY d.data_type`;

/** The rows of COMPANY_DATA_STATUS as companyDataStatus answers them (undefined: no such company). */
export function splitCompanyDataStatus(rows: Array<Record<string, unknown>>): CompanyDataStatus | undefined {
  if (rows.length === 0) return undefined;
  const company: Record<string, unknown> = {};
  for (const [column, value] of Object.entries(rows[0]!)) if (!column.startsWith('ferry_')) company[column] = value;
  const datasets: DatasetStatus[] = [];
  for (const found of rows) {
    if (found.ferry_d_data_type == null) continue;
    const dataset = Object.fromEntries(DATASET_COLUMNS.map((c) => [c, found[`ferry_d_${c}`]])) as unknown as DatasetRow;
    const latest = found.ferry_p_status == null || dataset.latest_sync_id === null
      ? undefined
      : { id: dataset.latest_sync_id, status: found.ferry_p_status as PullRow['status'], completed: found.ferry_p_completed as string | null };
    datasets.push({ dataset, latest });
  }
  return { company: company as unknown as CompanyRow, datasets };
}
