// What an export is asked to do, what it reports as it goes, and what it returns.
import type { Writable } from 'node:stream';
import type { AdaptiveLimit, LimitStats } from '../../client/adaptive-limit.js';
import type { ApiClient } from '../../client/client.js';
import type { Format } from './writers.js';

/** How many times one company is started again because its data set was resynced under the export. */
export const MAX_RESTARTS = 3;

export interface ExportPlan {
  /** The data type key (`invoices`, `chartOfAccounts`). */
  dataType: string;
  /** Its path under /companies/{id}/data/ (`invoices`, `accounts`). */
  dataPath: string;
  /** False when ferry does not know the data type (platforms/data-types): a 404 then means the service does not either. */
  knownDataType?: boolean;
  companyId?: string;
  allCompanies: boolean;
  query?: string;
  orderBy?: string;
  pageSize: number;
  format: Format;
  /** csv: neutralise cells a spreadsheet would run as formulas (default true; --no-csv-escape). */
  csvEscape?: boolean;
  /** A file to write; undefined writes to `stream`. */
  out?: string;
  force: boolean;
  resume: boolean;
  statePath?: string;
  /** Page requests at once, fixed (--concurrency N); learned by the adaptive limit when absent. */
  concurrency?: number;
  /** At most this many requests a second (--max-rate R). */
  maxRate?: number;
}

export interface ProgressInfo {
  /** Records written, in total (a resumed export counts the earlier run's too). */
  records: number;
  /** Records written before this run (resume). */
  resumedRecords: number;
  /** Records the current company's data set holds (its totalResults). */
  companyTotal?: number;
  companyRecords: number;
  companyIndex: number;
  companies: number;
  /** Page requests the limiter lets run at once now, and requests per second of late. */
  concurrency: number;
  rate: number;
}

export interface ExportEnv {
  client: ApiClient;
  /** Where the document goes without `out` (stdout). */
  stream: Writable;
  signal: AbortSignal;
  /** A line for the person watching (stderr). */
  note(line: string): void;
  progress(info: ProgressInfo): void;
  /** The run's limit (default: one of the export's own from the plan's concurrency and maxRate, up to PAGES_IN_FLIGHT). */
  limit?: AdaptiveLimit;
  /** Most pages held at once, requested and not yet written (default: from the page's bytes, page-window.ts). */
  window?: number;
}

export interface SkippedCompany {
  companyId: string;
  name: string;
  status: number;
  /** `notSynced` (409), `unsupported` (404 for the data type), `notFound` (the company is gone). */
  reason: 'notSynced' | 'unsupported' | 'notFound';
  message: string;
}

export interface ExportSummary {
  dataType: string;
  format: Format;
  out: string | null;
  records: number;
  /** Records the interrupted run had written (0 unless resumed). */
  resumedRecords: number;
  bytes: number;
  seconds: number;
  resumed: boolean;
  companies: { total: number; exported: number; skipped: number };
  skipped: SkippedCompany[];
  /** CSV rows that had fields beyond the header (in `_extra`). */
  extraRows: number;
  /** Companies started again because their data set was resynced during the export. */
  restarts: number;
  state: string | null;
  /** Page requests at once, at the end and at most (the adaptive limit's window). */
  concurrency: LimitStats['concurrency'];
  /** Requests a second, on average. */
  rate: number;
  /**
   * Pages: requested (by number, several at once; each company's first page alone),
   * `window` the most any company's reorder window could hold and `peakWindow` the most it
   * did hold (requested and not yet written).
   */
  pages: { requested: number; window: number; peakWindow: number };
}

