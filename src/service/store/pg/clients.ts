// Accounts ("clients") and their API keys on PostgreSQL: ../sqlite/clients.ts statement by
// statement. An insert returns its row in the same statement (RETURNING), where SQLite
// reads it back.
import { randomUUID } from 'node:crypto';
import { generateApiKey, hashApiKey } from '../../api-keys.js';
import { postgresDate } from '../../query/index.js';
import type { FieldResolver } from '../../query/types.js';
import type { AsyncStore } from '../async-store.js';
import type { ClientStore } from '../store.js';
import type { ApiKeyRow, ClientRow } from '../clients.js';
import { planPage, type PagedSource, type PageRequest } from '../paging.js';
import { runPgPagePlan } from './paging.js';
import { row, rows, run, type Queryable } from './query.js';

type ClientMethods = keyof ClientStore;

// Dates are canonical UTC text at rest; the query language compares them as timestamptz.
const clientFields: FieldResolver = (path) => {
  switch (path) {
    case 'id': return { sql: 'id', type: 'string' };
    case 'name': return { sql: 'name', type: 'string' };
    case 'plan': return { sql: 'plan', type: 'string' };
    case 'created': return { sql: postgresDate('created'), type: 'date' };
    case 'isAdmin': return { sql: '(is_admin <> 0)', type: 'boolean' };
    default: return undefined;
  }
};

const keyFields: FieldResolver = (path) => {
  switch (path) {
    case 'id': return { sql: 'id', type: 'string' };
    case 'created': return { sql: postgresDate('created'), type: 'date' };
    case 'revoked': return { sql: postgresDate('revoked'), type: 'date' };
    default: return undefined;
  }
};

const CLIENTS: PagedSource = { columns: '*', from: 'clients', scope: 'TRUE', scopeParams: [], resolve: clientFields, defaultOrder: 'seq', dialect: 'postgres' };

/** The key columns every key lookup returns: no name (as ../sqlite/clients.ts). */
const KEY_COLUMNS = 'id, client_id, created, revoked';

export function clientMethods(db: Queryable): Pick<AsyncStore, ClientMethods> {
  return {
    insertClient: async (client) => (await row<ClientRow>(db, 'INSERT INTO clients (id, name, plan, created, is_admin) VALUES (?, ?, ?, ?, ?) RETURNING *',
      [randomUUID(), client.name, client.plan, client.created, client.isAdmin ? 1 : 0]))!,
    getClient: (id) => row<ClientRow>(db, 'SELECT * FROM clients WHERE id = ?', [id]),
    // async, so a query the language refuses rejects the promise, as the SQLite adapter's does.
    listClients: async (request: PageRequest) => runPgPagePlan<ClientRow>(db, planPage(CLIENTS, request)),
    insertApiKey: async (clientId, created, name = null) => {
      const id = randomUUID();
      const apiKey = generateApiKey();
      await run(db, 'INSERT INTO api_keys (id, client_id, key_hash, created, name) VALUES (?, ?, ?, ?, ?)', [id, clientId, hashApiKey(apiKey), created, name]);
      return { id, apiKey };
    },
    setProfile: async (clientId, profile) => {
      await run(db, 'UPDATE clients SET profile = ? WHERE id = ?', [JSON.stringify(profile), clientId]);
    },
    findApiKeyByHash: (keyHash) => row<ApiKeyRow>(db, `SELECT ${KEY_COLUMNS} FROM api_keys WHERE key_hash = ?`, [keyHash]),
    getApiKey: (clientId, keyId) => row<ApiKeyRow>(db, `SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = ? AND client_id = ?`, [keyId, clientId]),
    liveApiKeyIds: async (keyIds) => (await rows<{ id: string }>(db, 'SELECT id FROM api_keys WHERE revoked IS NULL AND id = ANY(?::text[])', [keyIds])).map((r) => r.id),
    revokeApiKey: async (keyId, revoked) => {
      await run(db, 'UPDATE api_keys SET revoked = ? WHERE id = ? AND revoked IS NULL', [revoked, keyId]);
    },
    findAdminClient: () => row<ClientRow>(db, 'SELECT * FROM clients WHERE is_admin = 1 ORDER BY seq LIMIT 1'),
    listApiKeys: async (clientId, request) => runPgPagePlan<ApiKeyRow>(db, planPage({
      columns: `${KEY_COLUMNS}, name`, from: 'api_keys', scope: 'client_id = ?', scopeParams: [clientId], resolve: keyFields, defaultOrder: 'seq', dialect: 'postgres',
    }, request)),
  };
}
