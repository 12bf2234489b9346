// /admin: ferry's own account management, for admin keys only.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isoSeconds } from '../../lib/clock.js';
import type { ServiceContext } from '../context.js';
import { errors, type ValidationItem } from '../errors.js';
import { requireAdmin } from '../http/auth.js';
import { failIfAny, objectBody, params, queryOf } from '../http/body.js';
import { refuseUnknownFields } from '../http/known-fields.js';
import { envelope, parsePageRequest } from '../http/paging.js';
import { clientRecord } from '../wire/records.js';
import { defineRoute, withBody } from '../http/route.js';
import type { ClientRow, Plan } from '../store/clients.js';

function clientInput(body: Record<string, unknown>, now: Date): { name: string; plan: Plan; created: string } {
  refuseUnknownFields(body, ['name', 'plan', 'created']);
  const items: ValidationItem[] = [];
  const name = typeof body.name === 'string' ? body.name.trim() : '';
  if (!name) items.push({ itemId: 'name', message: 'name is required.', validatorName: 'Client' });
  const plan = body.plan;
  if (plan !== 'Free' && plan !== 'Paid') items.push({ itemId: 'plan', message: 'plan must be Free or Paid.', validatorName: 'Client' });
  let created = isoSeconds(now);
  if (body.created !== undefined) {
    const parsed = typeof body.created === 'string' ? new Date(body.created) : new Date(Number.NaN);
    if (Number.isNaN(parsed.getTime())) items.push({ itemId: 'created', message: 'created must be an ISO 8601 date.', validatorName: 'Client' });
    else created = isoSeconds(parsed);
  }
  failIfAny(items, errors.invalidClient);
  return { name, plan: plan as Plan, created };
}

export function registerAdminRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  const { store, clock } = ctx;
  const adminClient = async (request: FastifyRequest): Promise<ClientRow> => {
    requireAdmin(request.auth);
    const { clientId = '' } = params(request);
    const client = await store.getClient(clientId);
    if (!client) throw errors.clientNotFound(clientId);
    return client;
  };

  defineRoute(app, '/admin/clients', {
    GET: async (request) => {
      requireAdmin(request.auth);
      const page = parsePageRequest(queryOf(request));
      const { rows, total } = await store.listClients(page);
      return envelope(rows.map(clientRecord), total, page, request.url);
    },
    POST: withBody(async (request, reply) => {
      requireAdmin(request.auth);
      const input = clientInput(objectBody(request), clock.now());
      const result = await store.transaction(async (tx) => {
        const client = await tx.insertClient(input);
        return { ...clientRecord(client), apiKey: (await tx.insertApiKey(client.id, isoSeconds(clock.now()))).apiKey };
      });
      return reply.code(201).send(result);
    }),
  });

  // Where this service's third-party platforms (the sandbox) are, for `ferry sandbox …`.
  defineRoute(app, '/admin/sandbox', {
    GET: async (request) => {
      requireAdmin(request.auth);
      if (!ctx.platformUrl) throw errors.noSandbox();
      return { url: ctx.platformUrl };
    },
  });

  defineRoute(app, '/admin/clients/:clientId', {
    GET: async (request) => clientRecord(await adminClient(request)),
  });

  defineRoute(app, '/admin/clients/:clientId/apiKeys', {
    GET: async (request) => {
      const client = await adminClient(request);
      const page = parsePageRequest(queryOf(request));
      const { rows, total } = await store.listApiKeys(client.id, page);
      const results = rows.map((k) => (k.revoked ? { id: k.id, created: k.created, revoked: k.revoked } : { id: k.id, created: k.created }));
      return envelope(results, total, page, request.url);
    },
    POST: async (request, reply) => {
      const client = await adminClient(request);
      return reply.code(201).send(await store.insertApiKey(client.id, isoSeconds(clock.now())));
    },
  });

  defineRoute(app, '/admin/clients/:clientId/apiKeys/:keyId', {
    DELETE: async (request, reply) => {
      const client = await adminClient(request);
      const { keyId = '' } = params(request);
      if (!(await store.getApiKey(client.id, keyId))) throw errors.keyNotFound(keyId);
      await store.revokeApiKey(keyId, isoSeconds(clock.now()));
      return reply.code(204).send();
    },
  });
}
