// The shapes the bulk migration passes between its parts.

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
