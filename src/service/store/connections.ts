// Data connections as both stores keep them, and the statements both run for what a pull
// reads of its connection and for a company with one of its connections (SQL of the rest in
// sqlite/connections.ts and pg/connections.ts).
import type { CompanyRow } from './companies.js';
import { CONFIG_TABLES, type ConfigKind } from './data-configs.js';

export type ConnectionStatus = 'PendingAuth' | 'Linked' | 'Unlinked' | 'Deauthorized';

export interface ConnectionRow {
  seq: number;
  id: string;
  company_id: string;
  integration_key: string;
  source_id: string;
  status: ConnectionStatus;
  created: string;
  last_sync: string | null;
  errors: string | null;
  connection_info: string | null;
}

export interface ConnectionWithTokens {
  connection: ConnectionRow;
  /** Its sealed tokens; undefined when it has none. */
  sealed: Buffer | undefined;
}

export interface PullConnection extends ConnectionWithTokens {
  /** The client owning the connection's company: a pull's data configs are keyed by it. */
  clientId: string;
  /** Whether the account has configurations of each kind for the connection's platform: a job reads only those it has. */
  configured: Record<ConfigKind, boolean>;
}

/**
 * What getConnectionById and loadSealedTokens read, the company's client id and whether its
 * account configured the platform's data types: all a pull reads before it fetches, in one
 * statement (both stores run it).
 */
export const PULL_CONNECTION = `SELECT c.*, t.sealed AS ferry_sealed, co.client_id AS ferry_client_id,
  EXISTS (SELECT 1 FROM ${CONFIG_TABLES.supplemental.table} s WHERE s.client_id = co.client_id AND s.platform_key = c.integration_key) AS ferry_supplemental,
  EXISTS (SELECT 1 FROM ${CONFIG_TABLES.custom.table} s WHERE s.client_id = co.client_id AND s.platform_key = c.integration_key) AS ferry_custom
  FROM connections c JOIN companies co ON co.id = c.company_id
  LEFT JOIN connection_tokens t ON t.connection_id = c.id WHERE c.id = ?`;

/** A row of PULL_CONNECTION as the stores read it (SQLite answers EXISTS with 0 or 1). */
export type PullConnectionRow = ConnectionRow & { ferry_sealed: Buffer | null; ferry_client_id: string; ferry_supplemental: boolean | number; ferry_custom: boolean | number };

/** A row of PULL_CONNECTION as getPullConnection answers it. */
export function splitPullConnection(row: PullConnectionRow | undefined): PullConnection | undefined {
  if (!row) return undefined;
  const { ferry_client_id: clientId, ferry_sealed: sealed, ferry_supplemental: supplemental, ferry_custom: custom, ...connection } = row;
  return { connection, sealed: sealed ?? undefined, clientId, configured: { supplemental: Boolean(supplemental), custom: Boolean(custom) } };
}

/** Every column of connections, as `SELECT *` reads them (the contract test compares the two reads). */
const CONNECTION_COLUMNS = ['seq', 'id', 'company_id', 'integration_key', 'source_id', 'status', 'created', 'last_sync', 'errors', 'connection_info', 'refresh_lock_until'] as const;

/**
 * A company and one of its connections in one read (both stores; `?` the connection id, then
 * the company id): the routes under a connection check both, and a round trip each was a
 * statement per request on PostgreSQL. The connection's columns come back prefixed.
 */
export const COMPANY_CONNECTION = `SELECT co.*, ${CONNECTION_COLUMNS.map((c) => `n.${c} AS ferry_n_${c}`).join(', ')}
  FROM companies co LEFT JOIN connections n ON n.id = ? AND n.company_id = co.id WHERE co.id = ?`;

/** A company and all its connections, oldest first: a row per connection (one with none when it has none). */
export const COMPANY_CONNECTIONS = `SELECT co.*, ${CONNECTION_COLUMNS.map((c) => `n.${c} AS ferry_n_${c}`).join(', ')}
  FROM companies co LEFT JOIN connections n ON n.company_id = co.id WHERE co.id = ? ORDER BY n.seq`;

/** The rows of COMPANY_CONNECTIONS as getCompanyWithConnections answers them. */
export function splitCompanyConnections(rows: Array<Record<string, unknown>>): CompanyConnections | undefined {
  const split = rows.map((row) => splitCompanyConnection(row)!);
  if (split.length === 0) return undefined;
  return { company: split[0]!.company, connections: split.flatMap(({ connection }) => (connection ? [connection] : [])) };
}

export interface CompanyConnections {
  company: CompanyRow;
  /** Oldest first. */
  connections: ConnectionRow[];
}

export interface CompanyConnection {
  company: CompanyRow;
  /** Undefined when the company has no connection of that id. */
  connection: ConnectionRow | undefined;
}

/** A row of COMPANY_CONNECTION as getCompanyConnection answers it. */
export function splitCompanyConnection(row: Record<string, unknown> | undefined): CompanyConnection | undefined {
  if (!row) return undefined;
  const company: Record<string, unknown> = {};
  const connection: Record<string, unknown> = {};
  for (const [column, value] of Object.entries(row)) {
    if (column.startsWith('ferry_n_')) connection[column.slice('ferry_n_'.length)] = value;
    else company[column] = value;
  }
  return { company: company as unknown as CompanyRow, connection: connection.id == null ? undefined : connection as unknown as ConnectionRow };
}

export interface ConnectionError {
  statusCode: string;
  statusText: string;
  errorMessage: string;
  erroredOnUtc: string;
  status: string;
}
