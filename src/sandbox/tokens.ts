// Grants and their tokens, as an OAuth 2.0 server with refresh-token rotation keeps
// them: access tokens expire; each refresh token works once and is replaced on use;
// presenting a used one again is taken as theft and revokes the whole grant (every
// access and refresh token issued under it). Only SHA-256 hashes are stored.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { isoSeconds, type Clock } from '../lib/clock.js';
import { integrationByKey } from '../platforms/registry.js';
import { credentialRoles } from '../platforms/credentials.js';
import type { AuthErrorCode } from './errors.js';
import type { SandboxStore, TenantRow, TokenRow } from './store.js';

export type TokenState = 'valid' | 'expired' | 'revoked';

export interface IssuedTokens {
  grantId: string;
  access: string;
  /** null: the credential never expires (a platform without refresh tokens). */
  accessExpiresAt: Date | null;
  refresh: string | null;
  refreshExpiresAt: Date | null;
}

export type AccessCheck =
  | { ok: true; tenantId: string; accessExpiresAt: Date | null }
  | { ok: false; code: AuthErrorCode; message: string };

export type RefreshFailure = 'unknown' | 'revoked' | 'reused' | 'expired' | 'wrong_client';

export type RefreshResult =
  | { ok: true; tenantId: string; issued: IssuedTokens }
  | { ok: false; reason: RefreshFailure; message: string };

/** Refresh tokens live 100 days, as Intuit's and Xero's do. */
export const REFRESH_TOKEN_TTL_SECONDS = 100 * 86_400;

const REVOKE_REASONS: Record<string, string> = {
  refresh_token_reused: 'a refresh token was used twice, so the grant was revoked',
  revoked_by_admin: 'the grant was revoked by the organisation',
};

export const hashToken = (token: string): string => createHash('sha256').update(token).digest('hex');

/** Token prefix like the registry example's ('at_', 'Atzr|', 'access-'), so values look like the platform's. */
function prefixFor(platform: string, field: string | undefined, fallback: string): string {
  const example = integrationByKey(platform)?.tokenFields.find((f) => f.name === field)?.example ?? '';
  return /^[A-Za-z]+[_|-]/.exec(example)?.[0] ?? fallback;
}

export class TokenAuthority {
  constructor(
    private readonly store: SandboxStore,
    private readonly clock: Clock,
    private readonly accessTtlSeconds: number,
  ) {}

  /** A new grant for the tenant, its tokens in the requested state. */
  issue(tenant: TenantRow, state: TokenState, clientId: string | null): IssuedTokens {
    return this.store.transaction(() => {
      const grantId = randomUUID();
      const now = this.clock.now().getTime();
      this.store.insertGrant(grantId, tenant.id, clientId, now);
      // 'expired': the access token expired a second ago; the refresh token still works.
      const issued = this.mint(tenant.platform, grantId, now, state === 'expired');
      if (state === 'revoked') this.store.revokeGrant(grantId, now, 'revoked_by_admin');
      return issued;
    });
  }

  check(platform: string, credential: string): AccessCheck {
    const row = this.store.getToken(hashToken(credential));
    if (!row || row.kind !== 'access' || row.platform !== platform) {
      return { ok: false, code: 'invalid_token', message: 'The access token is not recognised by this platform.' };
    }
    if (row.revokedAt !== null) return { ok: false, code: 'token_revoked', message: revokedMessage(row) };
    const now = this.clock.now().getTime();
    if (row.expiresAt !== null && row.expiresAt <= now) {
      return { ok: false, code: 'token_expired', message: `The access token expired at ${isoSeconds(new Date(row.expiresAt))}; refresh it.` };
    }
    return { ok: true, tenantId: row.tenantId, accessExpiresAt: row.expiresAt === null ? null : new Date(row.expiresAt) };
  }

  /** Redeems a refresh token (single use) for a new access and refresh token on the same grant. */
  refresh(platform: string, refreshToken: string, clientId?: string): RefreshResult {
    return this.refreshHash(platform, hashToken(refreshToken), clientId);
  }

  /** As refresh(), by the token's hash: the legacy application's token is only known by hash. */
  refreshHash(platform: string, hash: string, clientId?: string): RefreshResult {
    return this.store.transaction((): RefreshResult => {
      const row = this.store.getToken(hash);
      if (!row || row.kind !== 'refresh' || row.platform !== platform) {
        return { ok: false, reason: 'unknown', message: 'The refresh token is not recognised.' };
      }
      if (row.revokedAt !== null) return { ok: false, reason: 'revoked', message: revokedMessage(row) };
      if (clientId !== undefined && row.clientId !== null && row.clientId !== clientId) {
        return { ok: false, reason: 'wrong_client', message: 'The refresh token was issued to another client.' };
      }
      const now = this.clock.now().getTime();
      const reused = (): RefreshResult => {
        this.store.revokeGrant(row.grantId, now, 'refresh_token_reused');
        return { ok: false, reason: 'reused', message: 'The refresh token was already used; the grant has been revoked.' };
      };
      if (row.usedAt !== null) return reused();
      if (row.expiresAt !== null && row.expiresAt <= now) {
        return { ok: false, reason: 'expired', message: 'The refresh token has expired; the organisation must authorize again.' };
      }
      // Losing a race to use the token is a reuse too.
      if (!this.store.useToken(hash, now)) return reused();
      return { ok: true, tenantId: row.tenantId, issued: this.mint(platform, row.grantId, now) };
    });
  }

  private mint(platform: string, grantId: string, now: number, expired = false): IssuedTokens {
    const integration = integrationByKey(platform);
    const roles = integration ? credentialRoles(integration) : {};
    const access = `${prefixFor(platform, roles.access, 'at_')}${randomBytes(24).toString('base64url')}`;
    const refreshable = roles.refresh !== undefined;
    const accessExpiresAt = !refreshable ? null : expired ? now - 1000 : now + this.accessTtlSeconds * 1000;
    this.store.insertToken(hashToken(access), grantId, 'access', accessExpiresAt, now);
    if (!refreshable) return { grantId, access, accessExpiresAt: null, refresh: null, refreshExpiresAt: null };
    const refresh = `${prefixFor(platform, roles.refresh, 'rt_')}${randomBytes(32).toString('base64url')}`;
    const refreshExpiresAt = now + REFRESH_TOKEN_TTL_SECONDS * 1000;
    this.store.insertToken(hashToken(refresh), grantId, 'refresh', refreshExpiresAt, now);
    return { grantId, access, accessExpiresAt: new Date(accessExpiresAt as number), refresh, refreshExpiresAt: new Date(refreshExpiresAt) };
  }
}

function revokedMessage(row: TokenRow): string {
  const why = REVOKE_REASONS[row.revokedReason ?? ''] ?? 'the grant was revoked';
  return `The grant is revoked: ${why}. The organisation must authorize again.`;
}
