// Basic auth with an API key, the admin's X-Client-Id, and the Free plan's expiry.
import { apiKeyFromHeader } from '../../lib/basic-auth.js';
import type { Clock } from '../../lib/clock.js';
import { errors } from '../errors.js';
import { hashApiKey } from '../api-keys.js';
import type { ClientRow } from '../store/clients.js';
import type { AsyncStore } from '../store/async-store.js';

export interface AuthContext {
  keyId: string;
  /** The account that owns the key. */
  caller: ClientRow;
  /** The account the request acts for: the caller, or the client named by an admin's X-Client-Id. */
  client: ClientRow;
}

const FREE_LIFETIME_MS = 365 * 24 * 60 * 60 * 1000;

export async function authenticate(
  store: Pick<AsyncStore, 'findApiKeyByHash' | 'getClient'>, clock: Clock, authorization: string | undefined, clientIdHeader: string | undefined,
): Promise<AuthContext> {
  const apiKey = apiKeyFromHeader(authorization);
  if (!apiKey) throw errors.unauthorized();
  const key = await store.findApiKeyByHash(hashApiKey(apiKey));
  if (!key) throw errors.unauthorized();
  if (key.revoked) throw errors.forbidden();
  const caller = await store.getClient(key.client_id);
  if (!caller) throw errors.unauthorized();
  let client = caller;
  if (clientIdHeader !== undefined) {
    if (!caller.is_admin) throw errors.clientHeaderNotAllowed();
    const target = await store.getClient(clientIdHeader.trim());
    if (!target) throw errors.clientNotFound(clientIdHeader.trim());
    client = target;
  }
  const auth = { keyId: key.id, caller, client };
  assertNotExpired(auth, clock);
  return auth;
}

/** A Free account older than 365 days gets 402 on every endpoint (checked on every request). */
export function assertNotExpired(auth: AuthContext, clock: Clock): void {
  const { client } = auth;
  if (client.plan === 'Free' && clock.now().getTime() - Date.parse(client.created) > FREE_LIFETIME_MS) {
    throw errors.accountExpired();
  }
}

const MAX_CACHED_KEYS = 1000;

/**
 * Authentication results of known keys, reused while the database is unchanged (a
 * revoked key or a new client is a write, so it is never missed); the plan's expiry,
 * which depends on the clock, is checked again on every request. The caller reads the
 * version before the lookups: a write landing between them leaves the entry under the
 * older version, so the next request looks again. Requests that miss the same key at the
 * same version share one lookup.
 */
export class AuthCache {
  private readonly entries = new Map<string, { version: string; auth: AuthContext }>();
  private readonly looking = new Map<string, { version: string; auth: Promise<AuthContext> }>();

  constructor(private readonly store: Pick<AsyncStore, 'findApiKeyByHash' | 'getClient'>, private readonly clock: Clock) {}

  /** `version`: the database's version, read after the request arrived. */
  async authenticate(version: string, authorization: string | undefined, clientIdHeader: string | undefined): Promise<AuthContext> {
    const key = `${authorization ?? ''}\n${clientIdHeader ?? ''}`;
    const hit = this.entries.get(key);
    if (hit && hit.version === version) {
      assertNotExpired(hit.auth, this.clock);
      return hit.auth;
    }
    const pending = this.looking.get(key);
    if (pending && pending.version === version) {
      const auth = await pending.auth;
      assertNotExpired(auth, this.clock);
      return auth;
    }
    const lookup = authenticate(this.store, this.clock, authorization, clientIdHeader);
    this.looking.set(key, { version, auth: lookup });
    try {
      const auth = await lookup;
      if (this.entries.size >= MAX_CACHED_KEYS) this.entries.clear();
      this.entries.set(key, { version, auth });
      return auth;
    } finally {
      if (this.looking.get(key)?.auth === lookup) this.looking.delete(key);
    }
  }
}

export function requireAdmin(auth: AuthContext): void {
  if (!auth.caller.is_admin) throw errors.adminOnly();
}

/** An admin key reaches every client's resources; any other key only its own account's. */
export function assertOwns(auth: AuthContext, ownerClientId: string): void {
  if (auth.caller.is_admin) return;
  if (ownerClientId !== auth.client.id) throw errors.forbidden();
}
