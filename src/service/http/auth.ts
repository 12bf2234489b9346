// Basic auth with an API key, the admin's X-Client-Id, and the Free plan's expiry.
import { apiKeyFromHeader } from '../../lib/basic-auth.js';
import type { Clock } from '../../lib/clock.js';
import { errors } from '../errors.js';
import { hashApiKey } from '../api-keys.js';
import type { ClientRow, KeyedVersion } from '../store/clients.js';
import type { AsyncStore } from '../store/async-store.js';

export interface AuthContext {
  keyId: string;
  /** The account that owns the key. */
  caller: ClientRow;
  /** The account the request acts for: the caller, or the client named by an admin's X-Client-Id. */
  client: ClientRow;
}

const FREE_LIFETIME_MS = 365 * 24 * 60 * 60 * 1000;

/**
 * The caller of a request, from what versionAndKey read with the key's hash (`read`): 401 for
 * no key or an unknown one, 403 for a revoked one; an admin's X-Client-Id names the account
 * the request acts for (one more read).
 */
async function authenticate(store: Pick<AsyncStore, 'getClient'>, clock: Clock, read: KeyedVersion, clientIdHeader: string | undefined): Promise<AuthContext> {
  const { key, client: caller } = read;
  if (!key) throw errors.unauthorized();
  if (key.revoked) throw errors.forbidden();
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

/** What a request's arrival settles: the database's version (the caches' key) and its caller. */
export interface Arrival {
  version: string;
  auth: AuthContext;
}

/**
 * Authentication results of known keys, reused while the database is unchanged (a
 * revoked key or a new client is a write, so it is never missed); the plan's expiry,
 * which depends on the clock, is checked again on every request. The version and the key's
 * rows come from one read (versionAndKey: one round trip on PostgreSQL, shared by the
 * requests that arrive together), sent after the request arrived, so a write that
 * committed before it is never missed; a hit uses the version alone.
 */
export class AuthCache {
  private readonly entries = new Map<string, { version: string; keyHash: string; auth: AuthContext }>();

  constructor(private readonly store: Pick<AsyncStore, 'versionAndKey' | 'getClient'>, private readonly clock: Clock) {}

  async arrive(authorization: string | undefined, clientIdHeader: string | undefined): Promise<Arrival> {
    const apiKey = apiKeyFromHeader(authorization);
    if (!apiKey) throw errors.unauthorized();
    const cacheKey = `${authorization ?? ''}\n${clientIdHeader ?? ''}`;
    const known = this.entries.get(cacheKey);
    const keyHash = known?.keyHash ?? hashApiKey(apiKey);
    const read = await this.store.versionAndKey(keyHash);
    if (known && known.version === read.version) {
      assertNotExpired(known.auth, this.clock);
      return { version: read.version, auth: known.auth };
    }
    const auth = await authenticate(this.store, this.clock, read, clientIdHeader);
    if (this.entries.size >= MAX_CACHED_KEYS) this.entries.clear();
    this.entries.set(cacheKey, { version: read.version, keyHash, auth });
    return { version: read.version, auth };
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
