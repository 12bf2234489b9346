// Creating records: POST /platforms/:key/tenants/:tenantId/:dataType answers 200 with the
// created record, 400 with field errors, or 202 with a pending push (when the pushMode
// setting is 'async', or the request says `Prefer: respond-async`, RFC 7240). Its status
// is at GET /platforms/:key/tenants/:tenantId/pushes/:pushId (also the 202's Location).
import type { FastifyInstance } from 'fastify';
import { dataTypeByKey } from '../../platforms/data-types.js';
import type { SandboxContext } from '../context.js';
import { fail } from '../errors.js';
import { pushNow, pushView, queuePush, settlePush } from '../push.js';
import { authorizeTenant, platformOf, requireDataType, takeRateLimit } from './guard.js';

interface PushParams {
  key: string;
  tenantId: string;
  dataType: string;
}

export function registerPushRoutes(app: FastifyInstance, ctx: SandboxContext): void {
  app.post<{ Params: PushParams }>('/platforms/:key/tenants/:tenantId/:dataType', async (request, reply) => {
    const { key, tenantId, dataType } = request.params;
    const platform = platformOf(key);
    requireDataType(platform, dataType);
    if (!dataTypeByKey(dataType)?.pushable) throw fail.notPushable(dataType);
    const { tenant } = authorizeTenant(ctx, request, platform, tenantId);
    takeRateLimit(ctx, reply, tenant);
    const body = request.body;
    if (body === null || typeof body !== 'object' || Array.isArray(body)) throw fail.badRequest('The request body must be a JSON object (the record).');
    const payload = body as Record<string, unknown>;
    const prefer = request.headers.prefer;
    if (ctx.settings.pushMode === 'async' || (typeof prefer === 'string' && /\brespond-async\b/i.test(prefer))) {
      const push = queuePush(ctx, tenant, dataType, payload);
      return reply.code(202).header('Location', `/platforms/${key}/tenants/${encodeURIComponent(tenantId)}/pushes/${push.id}`).send(pushView(ctx, push));
    }
    return pushNow(ctx, tenant, dataType, payload);
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
