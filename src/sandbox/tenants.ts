// Tenants (organisations) and the token field values handed to the client: exactly the
// integration's tokenFields, so they go straight into a migration CSV. Also the legacy
// application, which keeps the refresh token it was last given and may still use it.
import { randomInt, randomUUID } from 'node:crypto';
import { isoSeconds } from '../lib/clock.js';
import type { Integration } from '../platforms/types.js';
import type { SandboxContext } from './context.js';
import { credentialRoles, type CredentialRoles } from '../platforms/credentials.js';
import { fail } from './errors.js';
import { tenantName } from './generate/records.js';
import type { TenantRow } from './store.js';
import { hashToken, type IssuedTokens, type TokenState } from './tokens.js';

export interface TenantInput {
  integration: Integration;
  count: number;
  invoices: number;
  /** Tenant k of the batch gets seed + k; random when absent. */
  seed?: number;
  clientId: string | null;
}

export interface IssuedTenant {
  tenant: TenantRow;
  tokens: Record<string, string>;
}

export type LegacyOutcome = 'grant-revoked' | 'rotated' | 'rejected';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const ALNUM = `${LOWER}0123456789`;

/** A fresh value with the example's shape: letters stay letters of the same case, digits stay digits. */
function shapedLike(example: string): string {
  if (UUID.test(example)) return randomUUID();
  return example.replace(/[a-zA-Z0-9]/g, (c) => {
    if (c >= '0' && c <= '9') return String(randomInt(10));
    const letter = LOWER.charAt(randomInt(26));
    return c >= 'a' && c <= 'z' ? letter : letter.toUpperCase();
  });
}

function fromTemplate(template: string): string {
  return template.replace('*', Array.from({ length: 10 }, () => ALNUM.charAt(randomInt(ALNUM.length))).join(''));
}

function valueFor(integration: Integration, roles: CredentialRoles, name: string): string {
  const template = roles.templates?.[name];
  if (template) return fromTemplate(template);
  const example = integration.tokenFields.find((f) => f.name === name)?.example ?? '';
  return roles.fixed?.includes(name) ? example : shapedLike(example);
}

function roleFields(roles: CredentialRoles): Set<string> {
  return new Set([roles.access, roles.refresh, roles.tenant, roles.expiresAt, roles.refreshExpiresAt].filter((n): n is string => n !== undefined));
}

export function createTenants(ctx: SandboxContext, input: TenantInput): IssuedTenant[] {
  const { integration } = input;
  const roles = credentialRoles(integration);
  const base = input.seed ?? randomInt(2 ** 32);
  return ctx.store.transaction(() => Array.from({ length: input.count }, (_, k) => {
    const seed = (base + k) >>> 0;
    let orgId: string | null = null;
    if (roles.tenant) {
      // Retry the rare clash of short numeric ids (Exact divisions, Pandle companies).
      do orgId = valueFor(integration, roles, roles.tenant);
      while (ctx.store.orgIdTaken(integration.key, orgId));
    }
    const special = roleFields(roles);
    const fields: Record<string, string> = {};
    for (const f of integration.tokenFields) if (!special.has(f.name)) fields[f.name] = valueFor(integration, roles, f.name);
    const tenant: TenantRow = {
      id: randomUUID(), platform: integration.key, orgId, name: tenantName(seed), seed, invoices: input.invoices, fields,
      legacyRefreshHash: null, created: ctx.clock.now().getTime(),
    };
    ctx.store.insertTenant(tenant);
    return { tenant, tokens: issueTokenFields(ctx, integration, tenant, 'valid', input.clientId) };
  }));
}

/**
 * Issues a new grant in `state` and returns its token field values. These are what the
 * client (and so its old application) now holds: the legacy application's refresh token
 * becomes this grant's.
 */
export function issueTokenFields(ctx: SandboxContext, integration: Integration, tenant: TenantRow, state: TokenState, clientId: string | null): Record<string, string> {
  const roles = credentialRoles(integration);
  if (state === 'expired' && !roles.refresh) throw fail.badRequest(`${integration.name} credentials do not expire.`);
  return ctx.store.transaction(() => {
    const issued = ctx.tokens.issue(tenant, state, clientId);
    const legacyHash = issued.refresh === null ? null : hashToken(issued.refresh);
    ctx.store.setLegacyRefresh(tenant.id, legacyHash);
    tenant.legacyRefreshHash = legacyHash;
    return tokenFieldValues(integration, roles, tenant, issued);
  });
}

function tokenFieldValues(integration: Integration, roles: CredentialRoles, tenant: TenantRow, issued: IssuedTokens): Record<string, string> {
  const byRole: Record<string, string | null> = {};
  if (roles.access) byRole[roles.access] = issued.access;
  if (roles.refresh) byRole[roles.refresh] = issued.refresh;
  if (roles.tenant) byRole[roles.tenant] = tenant.orgId;
  if (roles.expiresAt) byRole[roles.expiresAt] = issued.accessExpiresAt && isoSeconds(issued.accessExpiresAt);
  if (roles.refreshExpiresAt) byRole[roles.refreshExpiresAt] = issued.refreshExpiresAt && isoSeconds(issued.refreshExpiresAt);
  const values: Record<string, string> = {};
  for (const f of integration.tokenFields) {
    const value = f.name in byRole ? byRole[f.name] : tenant.fields[f.name];
    if (value) values[f.name] = value;
  }
  return values;
}

/**
 * "The client's old application refreshed this tenant's token": it presents the refresh
 * token it holds. If the service has rotated that token since, this is a reuse and the
 * grant is revoked; if not, the legacy app rotates it away from the service (whose next
 * refresh is then the reuse). Either way the event is logged for the managed migration.
 */
export function legacyRefresh(ctx: SandboxContext, tenant: TenantRow): { at: string; outcome: LegacyOutcome; message: string } {
  if (!tenant.legacyRefreshHash) throw fail.badRequest('This tenant\'s platform has no refresh tokens to refresh.');
  const held = tenant.legacyRefreshHash;
  return ctx.store.transaction(() => {
    const result = ctx.tokens.refreshHash(tenant.platform, held);
    const at = ctx.clock.now().getTime();
    let outcome: LegacyOutcome;
    if (result.ok) {
      outcome = 'rotated';
      ctx.store.setLegacyRefresh(tenant.id, hashToken(result.issued.refresh as string));
    } else {
      outcome = result.reason === 'reused' ? 'grant-revoked' : 'rejected';
    }
    ctx.store.insertLegacyRefresh(tenant.id, at, outcome);
    const message = result.ok ? 'The legacy application rotated the refresh token; the service\'s refresh token is now spent.' : result.message;
    return { at: isoSeconds(new Date(at)), outcome, message };
  });
}

/** The admin view of a tenant: no secrets (token values are shown once, when issued). */
export function tenantView(tenant: TenantRow): Record<string, unknown> {
  const view: Record<string, unknown> = { id: tenant.id, platform: tenant.platform };
  if (tenant.orgId !== null) view.orgId = tenant.orgId;
  return { ...view, name: tenant.name, seed: tenant.seed, invoices: tenant.invoices, created: isoSeconds(new Date(tenant.created)) };
}
