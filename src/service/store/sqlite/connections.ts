// Data connections of a company, and their sealed tokens.
import { randomUUID } from 'node:crypto';
import type { FieldResolver } from '../../query/types.js';
import { noteCascade, settleFiles } from './attachment-files.js';
import type { Db } from './db.js';
import { planPage, type Page, type PagePlan, type PageRequest } from '../paging.js';
import { runPagePlan } from './paging.js';
import { prepared } from './statements.js';
import {
  type CompanyConnection, type CompanyConnections, COMPANY_CONNECTION, COMPANY_CONNECTIONS, type ConnectionStatus, type ConnectionRow, type PullConnection, PULL_CONNECTION, splitCompanyConnection,
  splitCompanyConnections, splitPullConnection, type ConnectionError,
} from '../connections.js';

const connectionFields: FieldResolver = (path) => {
  switch (path) {
    case 'id': return { sql: 'id', type: 'string' };
    case 'integrationKey': return { sql: 'integration_key', type: 'string' };
    case 'sourceId': return { sql: 'source_id', type: 'string' };
    case 'status': return { sql: 'status', type: 'string' };
    case 'created': return { sql: 'created', type: 'date' };
    case 'lastSync': return { sql: 'last_sync', type: 'date' };
    default: return undefined;
  }
};

export function insertConnection(db: Db, companyId: string, integrationKey: string, sourceId: string, created: string): ConnectionRow {
  const id = randomUUID();
  prepared(db, `INSERT INTO connections (id, company_id, integration_key, source_id, status, created)
                VALUES (?, ?, ?, ?, 'PendingAuth', ?)`).run(id, companyId, integrationKey, sourceId, created);
  return getConnection(db, companyId, id)!;
}

export function getConnection(db: Db, companyId: string, id: string): ConnectionRow | undefined {
  return prepared(db, 'SELECT * FROM connections WHERE id = ? AND company_id = ?').get(id, companyId) as ConnectionRow | undefined;
}

export function getCompanyConnection(db: Db, companyId: string, id: string): CompanyConnection | undefined {
  return splitCompanyConnection(prepared(db, COMPANY_CONNECTION).get(id, companyId) as Record<string, unknown> | undefined);
}

export function getCompanyWithConnections(db: Db, companyId: string): CompanyConnections | undefined {
  return splitCompanyConnections(prepared(db, COMPANY_CONNECTIONS).all(companyId) as Array<Record<string, unknown>>);
}

export function connectionsPage(companyId: string, request: PageRequest): PagePlan {
  return planPage({
    columns: '*', from: 'connections', scope: 'company_id = ?', scopeParams: [companyId], resolve: connectionFields, defaultOrder: 'seq',
  }, request);
}

export function listConnections(db: Db, companyId: string, request: PageRequest): Page<ConnectionRow> {
  return runPagePlan<ConnectionRow>(db, connectionsPage(companyId, request));
}

/** Connections of many companies in one query, grouped by company id (for company records). */
export function connectionsByCompany(db: Db, companyIds: string[]): Map<string, ConnectionRow[]> {
  const grouped = new Map<string, ConnectionRow[]>();
  if (companyIds.length === 0) return grouped;
  const rows = prepared(db, 'SELECT * FROM connections WHERE company_id IN (SELECT value FROM json_each(?)) ORDER BY seq')
    .all(JSON.stringify(companyIds)) as ConnectionRow[];
  for (const row of rows) {
    const list = grouped.get(row.company_id);
    if (list) list.push(row);
    else grouped.set(row.company_id, [row]);
  }
  return grouped;
}

export function setConnectionStatus(db: Db, id: string, status: ConnectionStatus): void {
  prepared(db, 'UPDATE connections SET status = ? WHERE id = ?').run(status, id);
}

/** Deletes the connection and what it holds; its attachments' files go once the deletion commits. */
export function deleteConnection(db: Db, id: string): void {
  noteCascade(db, { connectionId: id });
  prepared(db, 'DELETE FROM connections WHERE id = ?').run(id);
  settleFiles(db);
}

export function storeTokens(db: Db, connectionId: string, sealed: Buffer, updated: string): void {
  prepared(db, `INSERT INTO connection_tokens (connection_id, sealed, updated) VALUES (?, ?, ?)
                ON CONFLICT (connection_id) DO UPDATE SET sealed = excluded.sealed, updated = excluded.updated`)
    .run(connectionId, sealed, updated);
}

export function loadSealedTokens(db: Db, connectionId: string): Buffer | undefined {
  const row = prepared(db, 'SELECT sealed FROM connection_tokens WHERE connection_id = ?').get(connectionId) as { sealed: Buffer } | undefined;
  return row?.sealed;
}

export function getConnectionById(db: Db, id: string): ConnectionRow | undefined {
  return prepared(db, 'SELECT * FROM connections WHERE id = ?').get(id) as ConnectionRow | undefined;
}

export function getPullConnection(db: Db, id: string): PullConnection | undefined {
  return splitPullConnection(prepared(db, PULL_CONNECTION).get(id) as Parameters<typeof splitPullConnection>[0]);
}

/** A revoked grant: the connection needs reauthorization before it can sync again. */
export function deauthorize(db: Db, id: string, error: ConnectionError): void {
  prepared(db, `UPDATE connections SET status = 'Deauthorized',
                errors = json_insert(coalesce(errors, '[]'), '$[#]', json(?)) WHERE id = ?`).run(JSON.stringify(error), id);
}

export function setLastSync(db: Db, connectionId: string, companyId: string, when: string): void {
  prepared(db, 'UPDATE connections SET last_sync = ? WHERE id = ?').run(when, connectionId);
  prepared(db, 'UPDATE companies SET last_sync = ? WHERE id = ?').run(when, companyId);
}

/** Takes the connection's refresh lease until `until` (ms) if it is free at `now`; true when taken. */
export function takeRefreshLease(db: Db, id: string, now: number, until: number): boolean {
  return prepared(db, `UPDATE connections SET refresh_lock_until = ? WHERE id = ?
                       AND (refresh_lock_until IS NULL OR refresh_lock_until < ?)`).run(until, id, now).changes === 1;
}

/** Moves the lease from `held` (this holder's token) to `until`; false when `held` is no longer the lease. */
export function renewRefreshLease(db: Db, id: string, held: number, until: number): boolean {
  return prepared(db, 'UPDATE connections SET refresh_lock_until = ? WHERE id = ? AND refresh_lock_until = ?').run(until, id, held).changes === 1;
}

/** Frees the lease if it is still `held`: a holder slower than its lease never frees the next holder's. */
export function releaseRefreshLease(db: Db, id: string, held: number): void {
  prepared(db, 'UPDATE connections SET refresh_lock_until = NULL WHERE id = ? AND refresh_lock_until = ?').run(id, held);
}

/** Linked with fresh tokens: errors cleared, the platform's connection info kept. The row as written; undefined when there is none. */
export function markLinked(db: Db, id: string, connectionInfo: unknown, tokens?: { sealed: Buffer; updated: string }): ConnectionRow | undefined {
  if (tokens) storeTokens(db, id, tokens.sealed, tokens.updated);
  return prepared(db, 'UPDATE connections SET status = ?, errors = NULL, connection_info = ? WHERE id = ? RETURNING *')
    .get('Linked', connectionInfo ? JSON.stringify(connectionInfo) : null, id) as ConnectionRow | undefined;
}
