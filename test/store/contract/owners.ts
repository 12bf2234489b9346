// What the rows of the sync groups' scenarios belong to: a client, its companies and their
// connections (the foreign keys of pulls, pushes, data sets and attachments). The SQLite
// store makes them with its own methods; on PostgreSQL, plain inserts stand in for the
// client and company groups here. Both make random ids, so scenarios relabel their answers
// (`relabel`) before they are compared.
import { randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import type { AsyncStore } from '../../../src/service/store/async-store.js';
import type { ClientRow } from '../../../src/service/store/clients.js';
import type { CompanyRow } from '../../../src/service/store/companies.js';
import type { ConnectionRow } from '../../../src/service/store/connections.js';
import { row, type Queryable } from '../../../src/service/store/pg/query.js';

export type OwnerMethods = Pick<AsyncStore, 'insertClient' | 'insertCompany' | 'insertConnection'>;

export function pgOwners(db: Queryable): OwnerMethods {
  return {
    insertClient: async (client) => (await row<ClientRow>(db, 'INSERT INTO clients (id, name, plan, created, is_admin) VALUES (?, ?, ?, ?, ?) RETURNING *',
      [randomUUID(), client.name, client.plan, client.created, client.isAdmin ? 1 : 0]))!,
    insertCompany: async (clientId, input, created) => (await row<CompanyRow>(db,
      'INSERT INTO companies (id, client_id, name, description, created, tags) VALUES (?, ?, ?, ?, ?, ?) RETURNING *',
      [randomUUID(), clientId, input.name, input.description ?? null, created, JSON.stringify(input.tags)]))!,
    insertConnection: async (companyId, integrationKey, sourceId, created) => (await row<ConnectionRow>(db,
      `INSERT INTO connections (id, company_id, integration_key, source_id, status, created) VALUES (?, ?, ?, ?, 'PendingAuth', ?) RETURNING *`,
      [randomUUID(), companyId, integrationKey, sourceId, created]))!,
  };
}

export interface Owners {
  client: string;
  /** Two companies, a and b. */
  a: string;
  b: string;
  /** Connections: two of company a, one of b. */
  a1: string;
  a2: string;
  b1: string;
  /** Each id above → its name here, for relabel. */
  names: Map<string, string>;
}

const CREATED = '2024-01-01T00:00:00Z';

export async function makeOwners(store: OwnerMethods): Promise<Owners> {
  const client = (await store.insertClient({ name: 'Acme', plan: 'Paid', created: CREATED })).id;
  const a = (await store.insertCompany(client, { name: 'A', tags: {} }, CREATED)).id;
  const b = (await store.insertCompany(client, { name: 'B', tags: {} }, CREATED)).id;
  const a1 = (await store.insertConnection(a, 'gbol', 'xero', CREATED)).id;
  const a2 = (await store.insertConnection(a, 'qhyg', 'qbo', CREATED)).id;
  const b1 = (await store.insertConnection(b, 'gbol', 'xero', CREATED)).id;
  const ids = { client, a, b, a1, a2, b1 };
  return { ...ids, names: new Map(Object.entries(ids).map(([name, id]) => [id, `<${name}>`])) };
}

/** `value` with every string that is an owner's id replaced by its name; Buffers, Maps and arrays walked as they are. */
export function relabel<T>(value: T, names: Map<string, string>): T {
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return names.get(v) ?? v;
    if (Buffer.isBuffer(v) || v === null || typeof v !== 'object') return v;
    if (v instanceof Map) return new Map([...v].map(([key, item]) => [walk(key), walk(item)]));
    if (Array.isArray(v)) return v.map(walk);
    return Object.fromEntries(Object.entries(v).map(([key, item]) => [key, walk(item)]));
  };
  return walk(value) as T;
}

/** Another pool on the same database and schema: another process's, for races. */
export function secondPool(pool: Pool): Pool {
  const other = new Pool({ ...pool.options });
  other.on('error', () => undefined);
  return other;
}

/** What a call threw, as comparable text (the stores' messages differ; that it failed is the contract). */
export async function outcome(work: () => Promise<unknown>): Promise<string> {
  try {
    await work();
    return 'resolved';
  } catch {
    return 'rejected';
  }
}
