// A connection's tokens, sealed at rest. The only code that opens or seals them.
import { setTimeout as sleep } from 'node:timers/promises';
import { PlatformAuthError, PlatformFetchError, type PlatformAdapter } from './adapters/adapter.js';
import type { Tokens } from './adapters/verifier.js';
import type { Sealer } from './secrets.js';
import type { AsyncStore } from './store/async-store.js';

export async function readTokens(store: AsyncStore, sealer: Sealer, connectionId: string): Promise<Tokens | undefined> {
  return openTokens(sealer, connectionId, await store.loadSealedTokens(connectionId));
}

/** Tokens read sealed (getPullConnection), opened once they are wanted. */
export function openTokens(sealer: Sealer, connectionId: string, sealed: Buffer | undefined): Tokens | undefined {
  return sealed ? sealer.open<Tokens>(sealed, connectionId) : undefined;
}

/** Tokens sealed for the connection, to be stored (storeTokens, or markLinked with them). */
export function sealTokens(sealer: Sealer, connectionId: string, tokens: Tokens): Buffer {
  return sealer.seal(tokens, connectionId);
}

export async function writeTokens(store: AsyncStore, sealer: Sealer, connectionId: string, tokens: Tokens, updated: string): Promise<void> {
  await store.storeTokens(connectionId, sealTokens(sealer, connectionId, tokens), updated);
}

export function sameTokens(a: Tokens, b: Tokens): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const key of keys) if (a[key] !== b[key]) return false;
  return true;
}

/** Refresh when the access token expires within this many seconds. */
export const REFRESH_WITHIN_SECONDS = 300;
/**
 * A refresh's lease on its connection, renewed every third of this while the refresh runs;
 * a holder that died is passed over once it runs out.
 */
const REFRESH_LEASE_MS = 30_000;
const LOCK_POLL_MS = 20;

/**
 * Runs `work` holding the connection's refresh lease, a row lock in the database shared by
 * every thread and process. The lease is wall-clock time: it is about the holder being
 * alive, not about business time (which tests move with a fake clock). It is renewed while
 * the work runs rather than bounding the work by it: a platform call may take longer than
 * the lease (the adapter allows 30 s for headers and 30 s between body chunks), and a
 * refresh cut off by a timeout may still have been taken by the platform, which would have
 * spent the refresh token the next holder then sends again. The value this holder last
 * wrote is its token: renewing and freeing touch only that, never the next holder's lease.
 */
export async function withRefreshLease<T>(store: AsyncStore, connectionId: string, work: () => Promise<T>, leaseMs = REFRESH_LEASE_MS): Promise<T> {
  const giveUp = Date.now() + leaseMs * 2;
  let held: number;
  for (;;) {
    const now = Date.now();
    held = now + leaseMs;
    if (await store.takeRefreshLease(connectionId, now, held)) break;
    if (!(await store.getConnectionById(connectionId))) throw new PlatformAuthError('The connection was deleted.', true);
    if (now > giveUp) throw new PlatformFetchError('Another refresh of this connection did not finish in time.');
    await sleep(LOCK_POLL_MS);
  }
  // One renewal at a time; one that fails (the database slow or away) is tried again at the next beat.
  let renewal: Promise<void> = Promise.resolve();
  const beat = setInterval(() => {
    renewal = renewal.then(async () => {
      const until = Date.now() + leaseMs;
      if (await store.renewRefreshLease(connectionId, held, until)) held = until;
    }).catch(() => undefined);
  }, leaseMs / 3);
  beat.unref();
  try {
    return await work();
  } finally {
    clearInterval(beat);
    await renewal;
    await store.releaseRefreshLease(connectionId, held);
  }
}

/**
 * The connection's stored tokens, refreshed first when the access token expires within
 * `withinSeconds`, or when `refused` (tokens the platform just refused as expired) are
 * still the stored ones. Refresh tokens are single-use, so two refreshes with the same
 * one revoke the grant: refreshes of a connection take turns under its lease, each from
 * the latest stored tokens. Tokens that need no refresh need no turn: taking and freeing
 * the lease would be two writes (two commits) for every pull and push. `stored`: the
 * tokens the caller has just read (readTokens), not read again unless they need a refresh.
 */
export async function freshTokens(
  store: AsyncStore, sealer: Sealer, adapter: PlatformAdapter, connection: { id: string; integration_key: string },
  now: () => string, options: { withinSeconds?: number; refused?: Tokens; stored?: Tokens } = {},
): Promise<Tokens> {
  const withinSeconds = options.withinSeconds ?? REFRESH_WITHIN_SECONDS;
  if (!options.refused) {
    const stored = options.stored ?? await readTokens(store, sealer, connection.id);
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
