// Writing records: POST /platforms/:key/tenants/:tenantId/:dataType creates one, PUT …/:id
// replaces one (refused when the caller's sourceModifiedDate is stale, unless ?force=true)
// and DELETE …/:id deletes one. Each answers 200 with the record, 400 with field errors,
// 404 for an unknown record, or 202 with a pending push (when the pushMode setting is
// 'async', or the request says `Prefer: respond-async`, RFC 7240). A push's status is at
// GET /platforms/:key/tenants/:tenantId/pushes/:pushId (also the 202's Location).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { dataTypeByKey } from '../../platforms/data-types.js';
import type { SandboxContext } from '../context.js';
import { fail } from '../errors.js';
import { deleteNow, pushNow, pushView, queuePush, settlePush, updateNow, type QueuedPush } from '../push.js';
import type { TenantRow } from '../store.js';
import { authorizeTenant, platformOf, requireDataType, takeRateLimit } from './guard.js';

interface PushParams {
  key: string;
  tenantId: string;
  dataType: string;
}

function wantsAsync(ctx: SandboxContext, request: FastifyRequest): boolean {
  const prefer = request.headers.prefer;
  return ctx.settings.pushMode === 'async' || (typeof prefer === 'string' && /\brespond-async\b/i.test(prefer));
}

function jsonObject(body: unknown): Record<string, unknown> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw fail.badRequest('The request body must be a JSON object (the record).');
  return body as Record<string, unknown>;
}

/** Checks shared by every write: the platform takes writes of the type, the credential, the rate limit. */
function writable(ctx: SandboxContext, request: FastifyRequest<{ Params: PushParams }>, reply: FastifyReply): TenantRow {
  const { key, tenantId, dataType } = request.params;
  const platform = platformOf(key);
  requireDataType(platform, dataType);
  if (!dataTypeByKey(dataType)?.pushable) throw fail.notPushable(dataType);
  const { tenant } = authorizeTenant(ctx, request, platform, tenantId);
  takeRateLimit(ctx, reply, tenant);
  return tenant;
}

function accepted(ctx: SandboxContext, request: FastifyRequest<{ Params: PushParams }>, reply: FastifyReply, tenant: TenantRow, push: QueuedPush) {
  const queued = queuePush(ctx, tenant, push);
  const { key, tenantId } = request.params;
  return reply.code(202).header('Location', `/platforms/${key}/tenants/${encodeURIComponent(tenantId)}/pushes/${queued.id}`).send(pushView(ctx, queued));
}

export function registerPushRoutes(app: FastifyInstance, ctx: SandboxContext): void {
  app.post<{ Params: PushParams }>('/platforms/:key/tenants/:tenantId/:dataType', async (request, reply) => {
    const tenant = writable(ctx, request, reply);
    const payload = jsonObject(request.body);
    const { dataType } = request.params;
    if (wantsAsync(ctx, request)) return accepted(ctx, request, reply, tenant, { op: 'Create', dataType, payload });
    return pushNow(ctx, tenant, dataType, payload);
  });

  app.put<{ Params: PushParams & { recordId: string }; Querystring: { force?: string } }>('/platforms/:key/tenants/:tenantId/:dataType/:recordId', async (request, reply) => {
    const tenant = writable(ctx, request, reply);
    const payload = jsonObject(request.body);
    const { dataType, recordId } = request.params;
    const force = request.query.force === 'true';
    if (wantsAsync(ctx, request)) return accepted(ctx, request, reply, tenant, { op: 'Update', dataType, recordId, force, payload });
    return updateNow(ctx, tenant, dataType, recordId, payload, force);
  });

  app.delete<{ Params: PushParams & { recordId: string } }>('/platforms/:key/tenants/:tenantId/:dataType/:recordId', async (request, reply) => {
    const tenant = writable(ctx, request, reply);
    const { dataType, recordId } = request.params;
    if (wantsAsync(ctx, request)) return accepted(ctx, request, reply, tenant, { op: 'Delete', dataType, recordId, payload: {} });
    return deleteNow(ctx, tenant, dataType, recordId);
  });

  app.get<{ Params: Omit<PushParams, 'dataType'> & { pushId: string } }>(
    '/platforms/:key/tenants/:tenantId/pushes/:pushId',
    async (request, reply) => {
      const { key, tenantId, pushId } = request.params;
      const platform = platformOf(key);
      const { tenant } = authorizeTenant(ctx, request, platform, tenantId);
      takeRateLimit(ctx, reply, tenant);
      const push = ctx.store.getPush(pushId);
      if (!push || push.tenantId !== tenant.id) throw fail.notFound(`No push ${pushId} for this organisation.`);
      return pushView(ctx, settlePush(ctx, tenant, push));
    },
  );
}
