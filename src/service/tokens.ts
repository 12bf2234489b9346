// A connection's tokens, sealed at rest. The only code that opens or seals them.
import type { Tokens } from './integrations/verifier.js';
import type { Sealer } from './secrets.js';
import { loadSealedTokens, storeTokens } from './store/connections.js';
import type { Db } from './store/db.js';

export function readTokens(db: Db, sealer: Sealer, connectionId: string): Tokens | undefined {
  const sealed = loadSealedTokens(db, connectionId);
  return sealed ? sealer.open<Tokens>(sealed, connectionId) : undefined;
}

export function writeTokens(db: Db, sealer: Sealer, connectionId: string, tokens: Tokens, updated: string): void {
  storeTokens(db, connectionId, sealer.seal(tokens, connectionId), updated);
}

export function sameTokens(a: Tokens, b: Tokens): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const key of keys) if (a[key] !== b[key]) return false;
  return true;
}
