// Data connections of a company, their sealed tokens and their refresh lease, on
// PostgreSQL: ../sqlite/connections.ts statement by statement. What SQLite does in two statements
// is one here (setLastSync), so no other process sees half of it.
import { randomUUID } from 'node:crypto';
import { postgresDate } from '../../query/index.js';
import type { FieldResolver } from '../../query/types.js';
import type { AsyncStore } from '../async-store.js';
import type { ConnectionStore } from '../store.js';
import { COMPANY_CONNECTION, COMPANY_CONNECTIONS, PULL_CONNECTION, splitCompanyConnection, splitCompanyConnections, splitPullConnection, type ConnectionRow, type PullConnectionRow } from '../connections.js';
import type { PagePlan, PageRequest } from '../paging.js';
import { planPgPage, runPgPagePlan } from './paging.js';
import { row, rows, run, type Queryable } from './query.js';

type ConnectionMethods = keyof ConnectionStore | 'connectionsPage';

export const pgConnectionFields: FieldResolver = (path) => {
  switch (path) {
    case 'id': return { sql: 'id', type: 'string' };
    case 'integrationKey': return { sql: 'integration_key', type: 'string' };
    case 'sourceId': return { sql: 'source_id', type: 'string' };
    case 'status': return { sql: 'status', type: 'string' };
    case 'created': return { sql: postgresDate('created'), type: 'date' };
    case 'lastSync': return { sql: postgresDate('last_sync'), type: 'date' };
    default: return undefined;
  }
};

/** The count and the page in one statement (planPgPage): listing a company's connections is one round trip, in a transaction or not. */
export function connectionsPage(companyId: string, request: PageRequest): PagePlan {
  return planPgPage({ table: 'connections', key: 'seq', scope: 'company_id = ?', scopeParams: [companyId], resolve: pgConnectionFields }, request);
}

/**
 * Appends the error (a parameter, given twice) to the errors array as SQLite's json_insert
 * writes it: minified, `[a,b]`. The column only ever holds arrays this statement wrote
 * (markLinked clears it), so cutting the closing bracket off the text keeps every earlier
 * error byte for byte, which json_agg or jsonb would respace or reorder.
 */
const APPEND_ERROR = `CASE WHEN errors IS NULL OR json_array_length(errors) = 0 THEN ('[' || ?::json::text || ']')::json
  ELSE (left(errors::text, -1) || ',' || ?::json::text || ']')::json END`;

const STORE_TOKENS = `INSERT INTO connection_tokens (connection_id, sealed, updated) VALUES (?, ?, ?)
  ON CONFLICT (connection_id) DO UPDATE SET sealed = excluded.sealed, updated = excluded.updated`;
const MARK_LINKED = 'UPDATE connections SET status = ?, errors = NULL, connection_info = ? WHERE id = ? RETURNING *';

export function connectionMethods(db: Queryable): Pick<AsyncStore, ConnectionMethods> {
  return {
    insertConnection: async (companyId, integrationKey, sourceId, created) => (await row<ConnectionRow>(db, `INSERT INTO connections
      (id, company_id, integration_key, source_id, status, created) VALUES (?, ?, ?, ?, 'PendingAuth', ?) RETURNING *`,
    [randomUUID(), companyId, integrationKey, sourceId, created]))!,
    getConnection: (companyId, id) => row<ConnectionRow>(db, 'SELECT * FROM connections WHERE id = ? AND company_id = ?', [id, companyId]),
    getCompanyConnection: async (companyId, id) => splitCompanyConnection(await row<Record<string, unknown>>(db, COMPANY_CONNECTION, [id, companyId])),
    getCompanyWithConnections: async (companyId) => splitCompanyConnections(await rows<Record<string, unknown>>(db, COMPANY_CONNECTIONS, [companyId])),
    listConnections: async (companyId, request) => runPgPagePlan<ConnectionRow>(db, connectionsPage(companyId, request)),
    connectionsByCompany: async (companyIds) => {
      const grouped = new Map<string, ConnectionRow[]>();
      if (companyIds.length === 0) return grouped;
      for (const found of await rows<ConnectionRow>(db, 'SELECT * FROM connections WHERE company_id = ANY(?::text[]) ORDER BY seq', [companyIds])) {
        const list = grouped.get(found.company_id);
        if (list) list.push(found);
        else grouped.set(found.company_id, [found]);
      }
      return grouped;
    },
    setConnectionStatus: async (id, status) => {
      await run(db, 'UPDATE connections SET status = ? WHERE id = ?', [status, id]);
    },
    deleteConnection: async (id) => {
      await run(db, 'DELETE FROM connections WHERE id = ?', [id]);
    },
    storeTokens: async (connectionId, sealed, updated) => {
      await run(db, STORE_TOKENS, [connectionId, sealed, updated]);
    },
    loadSealedTokens: async (connectionId) => (await row<{ sealed: Buffer }>(db, 'SELECT sealed FROM connection_tokens WHERE connection_id = ?', [connectionId]))?.sealed,
    getConnectionById: (id) => row<ConnectionRow>(db, 'SELECT * FROM connections WHERE id = ?', [id]),
    getPullConnection: async (id) => splitPullConnection(await row<PullConnectionRow>(db, PULL_CONNECTION, [id])),
    deauthorize: async (id, error) => {
      const text = JSON.stringify(error);
      await run(db, `UPDATE connections SET status = 'Deauthorized', errors = ${APPEND_ERROR} WHERE id = ?`, [text, text, id]);
    },
    // The company first (EXISTS makes the connection's update wait for it): the order every
    // transaction writing both takes their locks in (decision-locks.ts), so none deadlocks.
    setLastSync: async (connectionId, companyId, when) => {
      await run(db, `WITH company AS (UPDATE companies SET last_sync = ? WHERE id = ? RETURNING id)
                     UPDATE connections SET last_sync = ? WHERE id = ? AND EXISTS (SELECT 1 FROM company)`, [when, companyId, when, connectionId]);
    },
    // One conditional UPDATE: a second taker blocks on the row until the first commits,
    // then finds the lease taken (PostgreSQL re-reads the row it waited for), so across
    // processes exactly one wins.
    takeRefreshLease: async (id, now, until) => (await run(db, `UPDATE connections SET refresh_lock_until = ? WHERE id = ?
      AND (refresh_lock_until IS NULL OR refresh_lock_until < ?)`, [until, id, now])) === 1,
    // Both only while the lease is still the holder's token, `held`.
    renewRefreshLease: async (id, held, until) => (await run(db, 'UPDATE connections SET refresh_lock_until = ? WHERE id = ? AND refresh_lock_until = ?',
      [until, id, held])) === 1,
    releaseRefreshLease: async (id, held) => {
      await run(db, 'UPDATE connections SET refresh_lock_until = NULL WHERE id = ? AND refresh_lock_until = ?', [id, held]);
    },
    // With tokens, their upsert rides in the same statement (storeTokens' SQL, as a CTE).
    markLinked: (id, connectionInfo, tokens) => {
      const linked = ['Linked', connectionInfo ? JSON.stringify(connectionInfo) : null, id];
      return tokens
        ? row<ConnectionRow>(db, `WITH t AS (${STORE_TOKENS}) ${MARK_LINKED}`, [id, tokens.sealed, tokens.updated, ...linked])
        : row<ConnectionRow>(db, MARK_LINKED, linked);
    },
    connectionsPage,
  };
}
