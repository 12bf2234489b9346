// What every platform data and push route checks first: the platform exists, the data
// type is one it supports, the credential is live and belongs to the tenant in the
// path, and the tenant is within its rate limit.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { dataTypeByKey } from '../../platforms/data-types.js';
import { integrationByKey } from '../../platforms/registry.js';
import type { Integration } from '../../platforms/types.js';
import type { SandboxContext } from '../context.js';
import { CURRENT_TENANT, credentialRoles, readCredential, type CredentialRoles } from '../../platforms/credentials.js';
import { fail } from '../errors.js';
import type { TenantRow } from '../store.js';

export interface Platform {
  integration: Integration;
  roles: CredentialRoles;
}

export function platformOf(key: string): Platform {
  const integration = integrationByKey(key);
  if (!integration) throw fail.notFound(`No platform ${key}.`);
  return { integration, roles: credentialRoles(integration) };
}

/** The public API's wording for a data type the platform lacks. */
export function requireDataType(platform: Platform, dataType: string): void {
  if (!dataTypeByKey(dataType) || !platform.integration.dataTypes.includes(dataType)) {
    throw fail.notFound(`Datatype ${dataType} not supported by platform(s) ${platform.integration.name}`);
  }
}

export interface Authorized {
  tenant: TenantRow;
  accessExpiresAt: Date | null;
}

export function authorizeTenant(ctx: SandboxContext, request: FastifyRequest, platform: Platform, tenantParam: string): Authorized {
  const credential = readCredential(platform.roles, request.headers);
  if (!credential) {
    const where = platform.roles.header ? `the ${platform.roles.header} header` : 'Authorization: Bearer';
    throw fail.unauthorized('invalid_token', `No access credential: send it in ${where}.`);
  }
  const check = ctx.tokens.check(platform.integration.key, credential);
  if (!check.ok) throw fail.unauthorized(check.code, check.message);
  const tenant = ctx.store.getTenant(check.tenantId) as TenantRow;
  if (tenantParam !== tenant.id && tenantParam !== tenant.orgId && tenantParam !== CURRENT_TENANT) {
    throw fail.forbidden(`The access token is not valid for organisation ${tenantParam}.`);
  }
  return { tenant, accessExpiresAt: check.accessExpiresAt };
}

export function takeRateLimit(ctx: SandboxContext, reply: FastifyReply, tenant: TenantRow): void {
  if (!ctx.limiter) return;
  const decision = ctx.limiter.take(tenant.id);
  reply.headers(decision.headers);
  if (!decision.allowed) throw fail.rateLimited(decision.retryAfterSeconds);
}
