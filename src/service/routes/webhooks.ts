// /webhooks: an account's webhook consumers (create, list, get, delete), and each one's
// delivery log (list, one delivery with its attempts, replay, a test event). The signing
// secret is answered once, at creation, and kept sealed with the consumer id bound in. A
// consumer's url is held to the target policy at creation, and again by a test or a replay
// (the operator may have withdrawn an opt-in since); the delivery loop checks every connection.
// The legacy rules API (rules.ts), a view over the same consumers, is registered with them.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { randomUUID } from 'node:crypto';
import { isoSeconds } from '../../lib/clock.js';
import type { ServiceContext } from '../context.js';
import { errors } from '../errors.js';
import { FERRY_EVENTS } from '../events/catalogue.js';
import { eventsOf, recordEvent } from '../events/record.js';
import { objectBody, params, queryOf } from '../http/body.js';
import { envelope, parsePageRequest } from '../http/paging.js';
import { defineRoute, withBody } from '../http/route.js';
import type { ConsumerRow } from '../store/events.js';
import type { AttemptRow, DeliveryRow } from '../store/webhook-deliveries.js';
import { parseConsumerInput, targetProblem } from '../webhooks/consumer-input.js';
import { createConsumer } from '../webhooks/create-consumer.js';
import { registerRuleRoutes } from './rules.js';
import { compact } from '../wire/compact.js';

const STATUSES = ['Pending', 'Delivered', 'Failed'];

export function consumerRecord(row: ConsumerRow): Record<string, unknown> {
  return compact({
    id: row.id,
    url: row.url,
    eventTypes: JSON.parse(row.event_types) as string[],
    companyTags: row.company_tags === null ? undefined : (JSON.parse(row.company_tags) as string[]),
    companyId: row.company_id,
    disabled: row.disabled === 1,
    disabledReason: row.disabled_reason,
    created: row.created,
  });
}

function attemptRecord(row: Pick<AttemptRow, 'at' | 'status_code' | 'error' | 'latency_ms'>): Record<string, unknown> {
  return compact({ at: row.at, statusCode: row.status_code, error: row.error, latencyMs: row.latency_ms });
}

export function deliveryRecord(row: DeliveryRow): Record<string, unknown> {
  return compact({
    id: row.id, eventId: row.event_id, eventType: row.event_type, status: row.status, attempts: row.attempts,
    nextAttempt: row.next_attempt, created: row.created, completed: row.completed,
    lastAttempt: row.last_at === null ? undefined
      : attemptRecord({ at: row.last_at, status_code: row.last_status_code, error: row.last_error, latency_ms: row.last_latency_ms ?? 0 }),
  });
}

/** The consumer named in the path; another account's is as unknown as one that never was. */
async function ownedConsumer(ctx: ServiceContext, request: FastifyRequest): Promise<ConsumerRow> {
  const { webhookId = '' } = params(request);
  const consumer = await ctx.store.getConsumer(webhookId);
  if (!consumer || consumer.client_id !== request.auth.client.id) throw errors.webhookConsumerNotFound(webhookId);
  return consumer;
}

async function ownedDelivery(ctx: ServiceContext, request: FastifyRequest): Promise<{ consumer: ConsumerRow; delivery: DeliveryRow }> {
  const consumer = await ownedConsumer(ctx, request);
  const { deliveryId = '' } = params(request);
  const delivery = await ctx.store.getDelivery(consumer.id, deliveryId);
  if (!delivery) throw errors.deliveryNotFound(deliveryId, consumer.id);
  return { consumer, delivery };
}

function refuseDisabled(consumer: ConsumerRow): void {
  if (consumer.disabled) throw errors.consumerDisabled(consumer.id);
}

/** Sending on demand to a url the policy refuses now: a 400 naming `url`, as at creation. */
function refuseTarget(ctx: ServiceContext, consumer: ConsumerRow): void {
  const problem = targetProblem(new URL(consumer.url), ctx.webhookTargets);
  if (problem) throw errors.consumerUrlRefused(consumer.id, problem);
}

/** `status=Failed` is the query `status=Failed`, so the page links (which keep `query`) keep it too. */
function deliveryListQuery(request: FastifyRequest): { url: string; query: Record<string, string | string[] | undefined> } {
  const query = { ...queryOf(request) };
  const path = request.url.split('?')[0] ?? request.url;
  const status = query.status;
  if (status === undefined) return { url: request.url, query };
  if (typeof status !== 'string' || !STATUSES.includes(status)) throw errors.invalidParameter('status', `one of ${STATUSES.join(', ')}`);
  const given = typeof query.query === 'string' && query.query.trim() !== '' ? query.query : undefined;
  query.query = given ? `{${given}}&&status=${status}` : `status=${status}`;
  delete query.status;
  const kept = new URLSearchParams();
  for (const name of ['query', 'orderBy']) if (typeof query[name] === 'string') kept.set(name, query[name] as string);
  return { url: `${path}?${kept.toString()}`, query };
}

export function registerWebhookRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  registerConsumerRoutes(app, ctx);
  registerDeliveryRoutes(app, ctx);
  registerRuleRoutes(app, ctx);
}

/** The account's consumers: created (the secret answered once), listed, read and deleted. */
function registerConsumerRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  const { store } = ctx;

  defineRoute(app, '/webhooks', {
    GET: async (request) => ({ results: (await store.listConsumers(request.auth.client.id)).map(consumerRecord) }),
    POST: withBody(async (request, reply) => {
      const input = parseConsumerInput(objectBody(request), ctx.webhookTargets);
      const { row, secret } = await createConsumer(ctx, request.auth.client.id, input, errors.invalidWebhookConsumer);
      return reply.code(201).send({ ...consumerRecord(row), secret });
    }),
  });

  defineRoute(app, '/webhooks/:webhookId', {
    GET: async (request) => consumerRecord(await ownedConsumer(ctx, request)),
    DELETE: async (request, reply) => {
      const consumer = await ownedConsumer(ctx, request);
      await store.deleteConsumer(consumer.id);
      return reply.code(204).send();
    },
  });
}

/** A consumer's deliveries: the log, one delivery with its attempts, a replay, and a test event. */
function registerDeliveryRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  const { store, clock } = ctx;

  defineRoute(app, '/webhooks/:webhookId/deliveries', {
    GET: async (request) => {
      const consumer = await ownedConsumer(ctx, request);
      const { url, query } = deliveryListQuery(request);
      const page = parsePageRequest(query);
      const { rows, total } = await ctx.reads.page<DeliveryRow>(request.auth.client.id, store.webhookDeliveriesPage(consumer.id, page));
      return envelope(rows.map(deliveryRecord), total, page, url);
    },
  });

  defineRoute(app, '/webhooks/:webhookId/deliveries/:deliveryId', {
    GET: async (request) => {
      const { delivery } = await ownedDelivery(ctx, request);
      return { ...deliveryRecord(delivery), attemptLog: (await store.deliveryAttempts(delivery.seq)).map(attemptRecord) };
    },
  });

  defineRoute(app, '/webhooks/:webhookId/deliveries/:deliveryId/replay', {
    POST: async (request, reply) => {
      // Checked and replayed in one transaction: a consumer disabled or deleted meanwhile gets nothing.
      const replayed = await store.transaction(async (tx) => {
        const { consumer, delivery } = await ownedDelivery(ctx, request);
        refuseDisabled(consumer);
        refuseTarget(ctx, consumer);
        return tx.replayDelivery(consumer.id, delivery.id, randomUUID(), isoSeconds(clock.now()));
      });
      ctx.wakeDeliveries();
      return reply.code(202).send(deliveryRecord(replayed!));
    },
  });

  defineRoute(app, '/webhooks/:webhookId/test', {
    POST: async (request, reply) => {
      const delivery = await store.transaction(async (tx) => {
        const consumer = await ownedConsumer(ctx, request);
        refuseDisabled(consumer);
        refuseTarget(ctx, consumer);
        const { seq } = await recordEvent(eventsOf(ctx), {
          clientId: consumer.client_id, eventType: FERRY_EVENTS.webhookTest, onlyConsumer: consumer.id,
          payload: { id: consumer.id, message: 'A test event from ferry: if its signature checks out, this consumer receives deliveries.' },
        });
        return tx.deliveryOfEvent(consumer.id, seq);
      });
      ctx.wakeDeliveries();
      return reply.code(202).send(deliveryRecord(delivery!));
    },
  });
}
