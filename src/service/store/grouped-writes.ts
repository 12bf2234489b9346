// What a sync job's grouped writes describe (sync/job-writes.ts), for the store to write in
// one statement of each kind however many data types the group holds (SQL in
// sqlite/grouped.ts and pg/grouped-writes.ts).
import type { RecordInput } from './datasets.js';
import type { PullFields } from './pulls.js';

/** One pull's change, written only while the job's lease is still the pull's (updatePulls). */
export interface PullChange {
  id: string;
  fields: PullFields;
}

/** A page of one data set generation's records (writeRecords). */
export interface RecordBatch {
  companyId: string;
  dataType: string;
  generation: number;
  connectionId: string;
  rows: RecordInput[];
  /**
   * No record of this generation was committed before this page (the pull's first page):
   * PostgreSQL inserts it without the conflict check's extra work. A wrong `fresh` costs a
   * unique violation, never a duplicate; the caller then writes the page again without it.
   */
  fresh?: boolean;
}

/** A completed pull's generation, to become the one readers see (completeGenerations). */
export interface CompletedGeneration {
  dataType: string;
  generation: number;
  syncId: string;
  connectionId: string;
  completed: string;
}
