// Reading a tenant: GET /platforms/:key/tenants/:tenantId (who the credential is for,
// and when it expires) and GET /platforms/:key/tenants/:tenantId/:dataType (one page).
// Pages are generated on demand, so the last page of a million invoices costs what the
// first does. Paging: see ../paging.ts.
import type { FastifyInstance } from 'fastify';
import { isoSeconds } from '../../lib/clock.js';
import type { SandboxContext } from '../context.js';
import { fail } from '../errors.js';
import { generateRecords, generatedCount } from '../generate/records.js';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../../platforms/paging.js';
import { decodeCursor, encodeCursor } from '../paging.js';
import { withEdits } from '../edits.js';
import { settleDuePushes } from '../push.js';
import { authorizeTenant, platformOf, requireDataType, takeRateLimit } from './guard.js';

interface TenantParams {
  key: string;
  tenantId: string;
}

type PageQuery = Partial<Record<'page' | 'pageSize' | 'cursor', string>>;

function positiveInt(name: string, raw: string | undefined, fallback: number, max = Number.MAX_SAFE_INTEGER): number {
  if (raw === undefined) return fallback;
  const value = /^\d{1,15}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(value >= 1 && value <= max)) throw fail.badRequest(`${name} must be an integer from 1 to ${max}.`, [{ field: name, message: `must be an integer from 1 to ${max}` }]);
  return value;
}

function pageWindow(query: PageQuery): { offset: number; pageSize: number } {
  const pageSize = positiveInt('pageSize', query.pageSize, DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);
  if (query.cursor !== undefined) {
    const offset = decodeCursor(query.cursor);
    if (offset === undefined) throw fail.badRequest('cursor is not valid: pass the value of `next` unchanged.', [{ field: 'cursor', message: 'not a cursor' }]);
    return { offset, pageSize };
  }
  return { offset: (positiveInt('page', query.page, 1) - 1) * pageSize, pageSize };
}

export function registerDataRoutes(app: FastifyInstance, ctx: SandboxContext): void {
  app.get<{ Params: TenantParams }>('/platforms/:key/tenants/:tenantId', async (request, reply) => {
    const platform = platformOf(request.params.key);
    const { tenant, accessExpiresAt } = authorizeTenant(ctx, request, platform, request.params.tenantId);
    takeRateLimit(ctx, reply, tenant);
    return tenantInfo(platform, tenant, accessExpiresAt);
  });

  app.get<{ Params: TenantParams & { dataType: string }; Querystring: PageQuery }>(
    '/platforms/:key/tenants/:tenantId/:dataType',
    async (request, reply) => {
      const { key, tenantId, dataType } = request.params;
      const platform = platformOf(key);
      requireDataType(platform, dataType);
      const { tenant } = authorizeTenant(ctx, request, platform, tenantId);
      takeRateLimit(ctx, reply, tenant);
      const { offset, pageSize } = pageWindow(request.query);
      return dataPage(ctx, tenant, dataType, offset, pageSize);
    },
  );
}

type Tenant = ReturnType<typeof authorizeTenant>['tenant'];

/** Who the credential is for, and when it expires (when it does). */
function tenantInfo(platform: ReturnType<typeof platformOf>, tenant: Tenant, accessExpiresAt: Date | null): Record<string, unknown> {
  const info: Record<string, unknown> = {
    id: tenant.orgId ?? tenant.id,
    name: tenant.name,
    platform: platform.integration.key,
    platformName: platform.integration.name,
    dataTypes: platform.integration.dataTypes,
  };
  if (accessExpiresAt) info.accessTokenExpiresAt = isoSeconds(accessExpiresAt);
  return info;
}

/** One page of a tenant's records of a type, once its due pushes have landed: the generated records, then the pushed ones. */
function dataPage(ctx: SandboxContext, tenant: Tenant, dataType: string, offset: number, pageSize: number): Record<string, unknown> {
  settleDuePushes(ctx, tenant, dataType);
  const generated = generatedCount(tenant, dataType);
  const total = generated + ctx.store.countRecords(tenant.id, dataType);
  const records = generateRecords(tenant, dataType, offset, pageSize);
  // Pushed records follow the generated ones.
  if (records.length < pageSize && offset + records.length < total) {
    records.push(...ctx.store.pageRecords(tenant.id, dataType, Math.max(0, offset - generated), pageSize - records.length));
  }
  const page: Record<string, unknown> = { results: withEdits(ctx, tenant, dataType, records), offset, pageSize, totalResults: total };
  if (offset + pageSize < total) page.next = encodeCursor(offset + pageSize);
  return page;
}
