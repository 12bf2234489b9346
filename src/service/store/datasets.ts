// Data sets and their records as both stores keep them (SQL in sqlite/datasets.ts and
// pg/datasets.ts, pg/records.ts).

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
