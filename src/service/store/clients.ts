// Accounts ("clients") and their API keys as both stores keep them (SQL in
// sqlite/clients.ts and pg/clients.ts).

export type Plan = 'Free' | 'Paid';

export interface ClientRow {
  seq: number;
  id: string;
  name: string;
  plan: Plan;
  created: string;
  is_admin: number;
  /** PUT /profile's fields, as JSON; null until set. */
  profile: string | null;
}

/**
 * The database's version, with what a request's authentication reads in the same read: the
 * API key with the hash it gave, and the key's account (neither for an unknown key).
 */
export interface KeyedVersion {
  version: string;
  key?: ApiKeyRow;
  client?: ClientRow;
}

export interface ApiKeyRow {
  id: string;
  client_id: string;
  created: string;
  revoked: string | null;
  name?: string | null;
}

/** A key row and its account's row, side by side: what versionAndKey reads (in both stores' SQL). */
export const KEYED_COLUMNS = `k.id AS key_id, k.client_id AS key_client_id, k.created AS key_created, k.revoked AS key_revoked,
  c.seq, c.id, c.name, c.plan, c.created, c.is_admin, c.profile`;

export interface KeyedRow extends Partial<ClientRow> {
  v: string;
  key_id: string | null;
  key_client_id: string;
  key_created: string;
  key_revoked: string | null;
}

/** A row of KEYED_COLUMNS (and the version, `v`) as the contract answers it. */
export function keyedVersion({ v, key_id: keyId, key_client_id: keyClientId, key_created: keyCreated, key_revoked: revoked, ...client }: KeyedRow): KeyedVersion {
  if (keyId === null) return { version: v };
  const key: ApiKeyRow = { id: keyId, client_id: keyClientId, created: keyCreated, revoked };
  return client.id ? { version: v, key, client: client as ClientRow } : { version: v, key };
}
