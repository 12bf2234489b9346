// Data connections as both stores keep them, and the one statement both run for what a
// pull reads of its connection (SQL of the rest in sqlite/connections.ts and pg/connections.ts).

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
}

/** What getConnectionById and loadSealedTokens read, and the company's client id: all a pull reads before it fetches, in one statement (both stores run it). */
export const PULL_CONNECTION = `SELECT c.*, t.sealed AS ferry_sealed, co.client_id AS ferry_client_id FROM connections c
  JOIN companies co ON co.id = c.company_id
  LEFT JOIN connection_tokens t ON t.connection_id = c.id WHERE c.id = ?`;

/** A row of PULL_CONNECTION as getPullConnection answers it. */
export function splitPullConnection(row: (ConnectionRow & { ferry_sealed: Buffer | null; ferry_client_id: string }) | undefined): PullConnection | undefined {
  if (!row) return undefined;
  const { ferry_client_id: clientId, ferry_sealed: sealed, ...connection } = row;
  return { connection, sealed: sealed ?? undefined, clientId };
}

export interface ConnectionError {
  statusCode: string;
  statusText: string;
  errorMessage: string;
  erroredOnUtc: string;
  status: string;
}
