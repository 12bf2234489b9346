// Accounts ("clients") and their API keys, stored as hashes (api-keys.ts).
import { randomUUID } from 'node:crypto';
import { generateApiKey, hashApiKey } from '../../api-keys.js';
import type { FieldResolver } from '../../query/types.js';
import type { Db } from './db.js';
import type { Page, PageRequest } from '../paging.js';
import { selectPage } from './paging.js';
import { prepared } from './statements.js';
import type { Plan, ClientRow, ApiKeyRow } from '../clients.js';

export function insertClient(db: Db, client: { name: string; plan: Plan; created: string; isAdmin?: boolean }): ClientRow {
  const id = randomUUID();
  prepared(db, 'INSERT INTO clients (id, name, plan, created, is_admin) VALUES (?, ?, ?, ?, ?)')
    .run(id, client.name, client.plan, client.created, client.isAdmin ? 1 : 0);
  return getClient(db, id)!;
}

export function getClient(db: Db, id: string): ClientRow | undefined {
  return prepared(db, 'SELECT * FROM clients WHERE id = ?').get(id) as ClientRow | undefined;
}

const clientFields: FieldResolver = (path) => {
  switch (path) {
    case 'id': return { sql: 'id', type: 'string' };
    case 'name': return { sql: 'name', type: 'string' };
    case 'plan': return { sql: 'plan', type: 'string' };
    case 'created': return { sql: 'created', type: 'date' };
    case 'isAdmin': return { sql: 'is_admin', type: 'boolean' };
    default: return undefined;
  }
};

export function listClients(db: Db, request: PageRequest): Page<ClientRow> {
  return selectPage<ClientRow>(db, {
    columns: '*', from: 'clients', scope: '1', scopeParams: [], resolve: clientFields, defaultOrder: 'seq',
  }, request);
}

export function insertApiKey(db: Db, clientId: string, created: string, name: string | null = null): { id: string; apiKey: string } {
  const id = randomUUID();
  const apiKey = generateApiKey();
  prepared(db, 'INSERT INTO api_keys (id, client_id, key_hash, created, name) VALUES (?, ?, ?, ?, ?)')
    .run(id, clientId, hashApiKey(apiKey), created, name);
  return { id, apiKey };
}

export function setProfile(db: Db, clientId: string, profile: Record<string, unknown>): void {
  prepared(db, 'UPDATE clients SET profile = ? WHERE id = ?').run(JSON.stringify(profile), clientId);
}

export function findApiKeyByHash(db: Db, keyHash: string): ApiKeyRow | undefined {
  return prepared(db, 'SELECT id, client_id, created, revoked FROM api_keys WHERE key_hash = ?').get(keyHash) as ApiKeyRow | undefined;
}

export function getApiKey(db: Db, clientId: string, keyId: string): ApiKeyRow | undefined {
  return prepared(db, 'SELECT id, client_id, created, revoked FROM api_keys WHERE id = ? AND client_id = ?').get(keyId, clientId) as ApiKeyRow | undefined;
}

/** Of these keys, the ones that exist and are not revoked. */
export function liveApiKeyIds(db: Db, keyIds: string[]): string[] {
  return prepared(db, 'SELECT id FROM api_keys WHERE revoked IS NULL AND id IN (SELECT value FROM json_each(?))').pluck().all(JSON.stringify(keyIds)) as string[];
}

export function revokeApiKey(db: Db, keyId: string, revoked: string): void {
  prepared(db, 'UPDATE api_keys SET revoked = ? WHERE id = ? AND revoked IS NULL').run(revoked, keyId);
}

export function findAdminClient(db: Db): ClientRow | undefined {
  return prepared(db, 'SELECT * FROM clients WHERE is_admin = 1 ORDER BY seq LIMIT 1').get() as ClientRow | undefined;
}

const keyFields: FieldResolver = (path) => {
  switch (path) {
    case 'id': return { sql: 'id', type: 'string' };
    case 'created': return { sql: 'created', type: 'date' };
    case 'revoked': return { sql: 'revoked', type: 'date' };
    default: return undefined;
  }
};

export function listApiKeys(db: Db, clientId: string, request: PageRequest): Page<ApiKeyRow> {
  return selectPage<ApiKeyRow>(db, {
    columns: 'id, client_id, created, revoked, name', from: 'api_keys', scope: 'client_id = ?', scopeParams: [clientId], resolve: keyFields, defaultOrder: 'seq',
  }, request);
}
