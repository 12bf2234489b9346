// The shapes the bulk migration passes between its parts.
import type { Readable } from 'node:stream';
import type { InputEncoding } from './decode.js';

export interface IntegrationInfo {
  key: string;
  name: string;
  migrationRoute: 'self-service' | 'managed';
  tokenFields: Array<{ name: string; required: boolean; description: string }>;
  /** False: ferry does not know this integration's token fields (and none were given with --token-fields). */
  known?: boolean;
}

/** One CSV record: its row number as a spreadsheet shows it (the header is row 1). */
export interface RawRow {
  row: number;
  values: Record<string, string>;
}

export interface RowProblem {
  field: string;
  message: string;
}

export interface ValidRow {
  row: number;
  /** The row's stable key (stored as the company tag ferryKey). */
  key: string;
  externalId?: string;
  companyName?: string;
  companyId?: string;
  connectionId?: string;
  platformKey: string;
  description?: string;
  tags: Record<string, string>;
  tokens: Record<string, string>;
}

export type RowStatus = 'migrated' | 'skipped' | 'failed' | 'valid';
export type Step = 'validate' | 'company' | 'connection' | 'authorize' | 'sync';

/** One line of the results CSV. Never holds a token. */
export interface RowResult {
  row: number;
  externalId: string;
  companyName: string;
  platformKey: string;
  companyId: string;
  connectionId: string;
  status: RowStatus;
  step: Step | '';
  httpStatus: string;
  error: string;
  correlationId: string;
}

export const RESULT_COLUMNS: Array<keyof RowResult> = [
  'row', 'externalId', 'companyName', 'platformKey', 'companyId', 'connectionId', 'status', 'step', 'httpStatus', 'error', 'correlationId',
];

export interface MigrationOptions {
  /** Opens the input from the start; called once per pass. */
  openInput: () => Readable;
  inputName: string;
  integrations: IntegrationInfo[];
  defaultPlatform?: string;
  delimiter?: string;
  /** The input's encoding (default utf8, checked byte by byte). */
  encoding?: InputEncoding;
  /** Rows in flight: a fixed number (--concurrency N); learned by the adaptive limit when absent. */
  concurrency?: number;
  /** At most this many requests a second (--max-rate R). */
  maxRate?: number;
  dryRun?: boolean;
  noSync?: boolean;
  /** 1-based shard index and count: this run takes rows whose position modulo count is index - 1. */
  shard?: { index: number; count: number };
  failFast?: boolean;
  /**
   * Run again only the rows whose last result was not migrated (nor skipped), with their values
   * from the input as it is now: the input may have changed since the journal was written.
   */
  retryFailed?: boolean;
  allowManaged?: boolean;
  /** Only these rows (CSV row numbers, header = 1), e.g. a managed migration's pilot; others are left out like another shard's. */
  onlyRows?: ReadonlySet<number>;
  resultsPath: string;
  /** Neutralise formula-like cells in the results CSV (default true). */
  csvEscape?: boolean;
  journalPath: string;
  signal?: AbortSignal;
}
