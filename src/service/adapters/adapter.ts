// One interface between the service and a third-party platform. The sync worker, the push
// worker and the authorization endpoint speak only this; the sandbox platforms' HTTP
// adapter implements it (as a real platform's adapter would), and one contract test
// suite runs against every integration.
import type { Tokens } from './verifier.js';

/** Tokens as the service stores them (sealed): the client's fields, possibly rotated by a refresh. */
export type StoredTokens = Tokens;

export class PlatformAuthError extends Error {
  /** The platform says the grant is gone (revoked, or a refresh token was reused): reauthorization required. */
  constructor(message: string, readonly revoked: boolean) {
    super(message);
    this.name = 'PlatformAuthError';
  }
}

export class PlatformRateLimitError extends Error {
  constructor(readonly retryAfterSeconds: number) {
    super(`The platform rate limit was hit; retry after ${retryAfterSeconds}s.`);
    this.name = 'PlatformRateLimitError';
  }
}

/** Anything else the platform answered badly (5xx, bad payload, unreachable). */
export class PlatformFetchError extends Error {
  constructor(message: string, readonly status?: number) {
    super(message);
    this.name = 'PlatformFetchError';
  }
}

export interface PlatformPage {
  records: Record<string, unknown>[];
  /** Total records of this data type on the platform, when it says so (for progress). */
  total?: number;
  /** Opaque cursor for the next page; absent on the last page. */
  next?: string;
}

export type PushOutcome =
  | { status: 'Success'; record: Record<string, unknown> }
  | { status: 'Pending'; platformPushId: string }
  | { status: 'Failed'; statusCode: number; errors: Array<{ field?: string; message: string }> };

export interface PlatformSession {
  /** The tokens to store after the call (a refresh rotates them); compare to decide whether to re-seal. */
  tokens: StoredTokens;
}

export interface PlatformAdapter {
  /** Verifies migrated tokens (refreshing an expired access token); returns the tokens to store. */
  verify(integrationKey: string, tokens: StoredTokens): Promise<{ tokens: StoredTokens; connectionInfo?: Record<string, unknown> }>;
  /** Whether ensureFresh would refresh these tokens: looks at them only, never at the platform. */
  needsRefresh(integrationKey: string, tokens: StoredTokens, withinSeconds: number): boolean;
  /** Refreshes if the access token expires within `withinSeconds`; returns the (maybe rotated) tokens. */
  ensureFresh(integrationKey: string, tokens: StoredTokens, withinSeconds: number): Promise<StoredTokens>;
  fetchPage(integrationKey: string, tokens: StoredTokens, dataType: string, cursor: string | undefined, pageSize: number): Promise<PlatformPage>;
  push(integrationKey: string, tokens: StoredTokens, dataType: string, record: Record<string, unknown>): Promise<PushOutcome>;
  /** Replaces a record; `force` skips the platform's check that the caller's copy is current. */
  update(integrationKey: string, tokens: StoredTokens, dataType: string, recordId: string, record: Record<string, unknown>, force: boolean): Promise<PushOutcome>;
  remove(integrationKey: string, tokens: StoredTokens, dataType: string, recordId: string): Promise<PushOutcome>;
  pushStatus(integrationKey: string, tokens: StoredTokens, platformPushId: string): Promise<PushOutcome>;
}
