// /rules: the public API's webhook interface before consumers (deprecated there in 2024, and
// still what the earlier SDKs call), served as a view over the account's webhook consumers.
// A rule made here is a consumer (GET /webhooks lists it, DELETE /webhooks/{id} removes it)
// and its notifications are that consumer's deliveries: the same events, signed and retried
// the same way. Every consumer shows here as a rule: its rule type, or for one made through
// /webhooks its event types.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ServiceContext } from '../context.js';
import { errors } from '../errors.js';
import { objectBody, params, queryOf } from '../http/body.js';
import { envelope, parsePageRequest } from '../http/paging.js';
import { defineRoute, withBody } from '../http/route.js';
import type { ConsumerRow } from '../store/events.js';
import { createConsumer } from '../webhooks/create-consumer.js';
import { parseRuleInput } from '../webhooks/rule-input.js';
import { compact } from '../wire/compact.js';

/** A consumer in the legacy rule's shape. ferry sends no email, so `emails` is always empty. */
export function ruleRecord(row: ConsumerRow): Record<string, unknown> {
  return compact({
    id: row.id,
    type: row.rule_type ?? (JSON.parse(row.event_types) as string[]).join(', '),
    companyId: row.company_id,
    notifiers: { emails: [], webhook: row.url },
  });
}

/** The rules list is the account's consumers, at most 50: paged in memory. Filters are refused rather than ignored. */
function rulesPage(request: FastifyRequest, rows: ConsumerRow[]): unknown {
  const query = queryOf(request);
  for (const name of ['query', 'orderBy']) {
    if (query[name] !== undefined) throw errors.invalidParameter(name, 'the legacy rules list takes no filter or order; GET /webhooks lists the consumers');
  }
  const page = parsePageRequest(query);
  const start = (page.page - 1) * page.pageSize;
  return envelope(rows.slice(start, start + page.pageSize).map(ruleRecord), rows.length, page, request.url);
}

export function registerRuleRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  defineRoute(app, '/rules', {
    GET: async (request) => rulesPage(request, await ctx.store.listConsumers(request.auth.client.id)),
    // As the legacy document: 200 with the rule. Its signing secret is not shown (the rule has no field for it).
    POST: withBody(async (request) => {
      const input = parseRuleInput(objectBody(request), ctx.webhookTargets);
      const { row } = await createConsumer(ctx, request.auth.client.id, input, errors.invalidRule);
      return ruleRecord(row);
    }),
  });

  defineRoute(app, '/rules/:ruleId', {
    GET: async (request) => {
      const { ruleId = '' } = params(request);
      const consumer = await ctx.store.getConsumer(ruleId);
      if (!consumer || consumer.client_id !== request.auth.client.id) throw errors.ruleNotFound(ruleId);
      return ruleRecord(consumer);
    },
  });
}
