// A connection's tokens, sealed at rest. The only code that opens or seals them.
import { setTimeout as sleep } from 'node:timers/promises';
import { PlatformAuthError, PlatformFetchError, type PlatformAdapter } from './integrations/adapter.js';
import type { Tokens } from './integrations/verifier.js';
import type { Sealer } from './secrets.js';
import type { AsyncStore } from './store/async-store.js';

export async function readTokens(store: AsyncStore, sealer: Sealer, connectionId: string): Promise<Tokens | undefined> {
  const sealed = await store.loadSealedTokens(connectionId);
  return sealed ? sealer.open<Tokens>(sealed, connectionId) : undefined;
}

export async function writeTokens(store: AsyncStore, sealer: Sealer, connectionId: string, tokens: Tokens, updated: string): Promise<void> {
  await store.storeTokens(connectionId, sealer.seal(tokens, connectionId), updated);
}

export function sameTokens(a: Tokens, b: Tokens): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const key of keys) if (a[key] !== b[key]) return false;
  return true;
}

/** Refresh when the access token expires within this many seconds. */
export const REFRESH_WITHIN_SECONDS = 300;
/** Longest a refresh may hold a connection's lease; a holder that died is passed over after it. */
const LOCK_MS = 30_000;
const LOCK_POLL_MS = 20;

/**
 * Runs `work` holding the connection's refresh lease, a row lock in the database shared by
 * every thread. The lease is wall-clock time: it is about the holder being alive, not
 * about business time (which tests move with a fake clock).
 */
async function withRefreshLease<T>(store: AsyncStore, connectionId: string, work: () => Promise<T>): Promise<T> {
  const giveUp = Date.now() + LOCK_MS * 2;
  for (;;) {
    const now = Date.now();
    if (await store.takeRefreshLease(connectionId, now, now + LOCK_MS)) break;
    if (!(await store.getConnectionById(connectionId))) throw new PlatformAuthError('The connection was deleted.', true);
    if (now > giveUp) throw new PlatformFetchError('Another refresh of this connection did not finish in time.');
    await sleep(LOCK_POLL_MS);
  }
  try {
    return await work();
  } finally {
    await store.releaseRefreshLease(connectionId);
  }
}

/**
 * The connection's stored tokens, refreshed first when the access token expires within
 * `withinSeconds`, or when `refused` (tokens the platform just refused as expired) are
 * still the stored ones. Refresh tokens are single-use, so two refreshes with the same
 * one revoke the grant: refreshes of a connection take turns under its lease, each from
 * the latest stored tokens. Tokens that need no refresh need no turn: taking and freeing
 * the lease would be two writes (two commits) for every pull and push.
 */
export async function freshTokens(
  store: AsyncStore, sealer: Sealer, adapter: PlatformAdapter, connection: { id: string; integration_key: string },
  now: () => string, options: { withinSeconds?: number; refused?: Tokens } = {},
): Promise<Tokens> {
  const withinSeconds = options.withinSeconds ?? REFRESH_WITHIN_SECONDS;
  if (!options.refused) {
    const stored = await readTokens(store, sealer, connection.id);
    if (stored && !adapter.needsRefresh(connection.integration_key, stored, withinSeconds)) return stored;
  }
  return withRefreshLease(store, connection.id, async () => {
    const current = await readTokens(store, sealer, connection.id);
    if (!current) throw new PlatformAuthError('The connection has no tokens.', true);
    const forced = options.refused !== undefined && sameTokens(current, options.refused);
    const next = await adapter.ensureFresh(connection.integration_key, current, forced ? Number.MAX_SAFE_INTEGER : withinSeconds);
    if (!sameTokens(current, next)) await writeTokens(store, sealer, connection.id, next, now());
    return next;
  });
}
