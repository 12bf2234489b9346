// The shape of ferry's integration registry: what each emulated third-party platform
// needs for token migration, and which data types it can sync.

export type SourceType = 'Accounting' | 'Banking' | 'BankFeed' | 'Commerce' | 'Expense' | 'Other' | 'Unknown';
export type MigrationRoute = 'self-service' | 'managed';

export interface TokenField {
  name: string;
  required: boolean;
  description: string;
  /** A realistic-looking example value for the migration template (never a real secret). */
  example: string;
}

export interface Integration {
  /** Four lowercase letters, unique. */
  key: string;
  name: string;
  sourceType: SourceType;
  migrationRoute: MigrationRoute;
  tokenFields: TokenField[];
  /** Data type keys the platform supports (see DATA_TYPES). */
  dataTypes: string[];
}
