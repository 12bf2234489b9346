// Push operations: creates (POST …/push/{dataType}), updates (PUT …/push/{dataType}/{id})
// and deletes (DELETE …/push/{dataType}/{id}): validate, send to the platform, record the
// outcome. A platform 202 is a 200 here with status Pending; the push worker settles it later.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { randomUUID } from 'node:crypto';
import { isoSeconds } from '../../lib/clock.js';
import type { ServiceContext } from '../context.js';
import { errors } from '../errors.js';
import { failIfAny, objectBody, params, queryOf } from '../http/body.js';
import { defineRoute, withBody } from '../http/route.js';
import { pushRecord } from '../wire/sync-records.js';
import { PlatformAuthError, PlatformRateLimitError } from '../adapters/adapter.js';
import { dataTypeByKey, dataTypeByPath } from '../../platforms/data-types.js';
import { withRequiredFields } from '../../platforms/record-defaults.js';
import { integrationByKey } from '../../platforms/registry.js';
import { pushOption } from '../push/fields.js';
import { validatePush } from '../push/validate.js';
import type { PushChangeType, PushRow } from '../store/pushes.js';
import { eventsOf } from '../events/record.js';
import { deauthorized, pushEnded } from '../sync/events.js';
import { pushFieldsFor, type PushFields } from '../sync/push-outcome.js';
import { freshTokens, readTokens } from '../tokens.js';
import { operationsPage } from './company-operations.js';
import { ownedCompany } from './companies.js';
import { ownedConnection } from './connections.js';

interface Write {
  changeType: PushChangeType;
  /** The record an update or delete names. */
  recordId?: string;
  record?: Record<string, unknown>;
  /** An update that skips the platform's check that the caller's copy is current. */
  force?: boolean;
}

function booleanParam(raw: unknown, name: string): boolean {
  if (raw === undefined || raw === '' || raw === 'false') return false;
  if (raw === 'true') return true;
  throw errors.invalidParameter(name, 'must be true or false');
}

function timeoutParam(raw: unknown): number | null {
  if (raw === undefined || raw === '') return null;
  if (typeof raw !== 'string' || !/^\d+$/.test(raw) || Number(raw) < 1) throw errors.invalidParameter('timeoutInMinutes', 'must be a whole number of minutes, at least 1');
  return Number(raw);
}

export function registerPushRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  const { store } = ctx;

  // What a push of the data type accepts on this connection's platform (the same table the checks below use).
  defineRoute(app, '/companies/:companyId/connections/:connectionId/options/:dataType', {
    GET: async (request) => {
      const connection = await ownedConnection(ctx, request);
      const integration = integrationByKey(connection.integration_key);
      const { dataType: given = '' } = params(request);
      const dataType = dataTypeByKey(given) ?? dataTypeByPath(given);
      if (!dataType || !integration?.dataTypes.includes(dataType.key)) throw errors.dataTypeNotSupported(given, integration?.name ?? connection.integration_key);
      if (!dataType.pushable) throw errors.notPushable(dataType.key);
      return pushOption(dataType.key, dataType.name);
    },
  });

  defineRoute(app, '/companies/:companyId/connections/:connectionId/push/:dataType', {
    POST: withBody(async (request) => {
      const record = objectBody(request);
      return withData(record, await sendPush(ctx, request, { changeType: 'Created', record }));
    }),
  });

  defineRoute(app, '/companies/:companyId/connections/:connectionId/push/:dataType/:recordId', {
    PUT: withBody(async (request) => {
      const { recordId = '' } = params(request);
      const record = objectBody(request);
      const force = booleanParam(queryOf(request).forceUpdate, 'forceUpdate');
      return withData(record, await sendPush(ctx, request, { changeType: 'Modified', recordId, record, force }));
    }),
    DELETE: async (request) => {
      const { recordId = '' } = params(request);
      return pushRecord((await sendPush(ctx, request, { changeType: 'Deleted', recordId })).push);
    },
  });

  defineRoute(app, '/companies/:companyId/push', {
    GET: (request) => operationsPage<PushRow>(ctx, request, (companyId, page) => ctx.store.pushesPage(companyId, page), pushRecord),
  });

  defineRoute(app, '/companies/:companyId/push/:pushOperationKey', {
    GET: async (request) => {
      const company = await ownedCompany(ctx, request);
      const { pushOperationKey = '' } = params(request);
      const push = await store.getPush(pushOperationKey);
      if (!push || push.company_id !== company.id) throw errors.pushNotFound(pushOperationKey, company.id);
      return pushRecord(push);
    },
  });
}

/** What every write checks first: a connection of the caller's, a type its platform takes pushes of. */
async function pushTarget(ctx: ServiceContext, request: FastifyRequest) {
  const connection = await ownedConnection(ctx, request);
  const integration = integrationByKey(connection.integration_key);
  const { dataType: given = '' } = params(request);
  // The public key of a type, or its read path where they differ (push/accounts is chartOfAccounts).
  const dataType = dataTypeByKey(given) ?? dataTypeByPath(given);
  const key = dataType?.key ?? given;
  if (!dataType || !integration?.dataTypes.includes(key)) throw errors.dataTypeNotSupported(key, integration?.name ?? connection.integration_key);
  if (!dataType.pushable) throw errors.notPushable(key);
  return { connection, integration, key };
}

type PushTarget = Awaited<ReturnType<typeof pushTarget>>;

/**
 * Sends one write to the platform and records it as a push operation: Success or Failed at
 * once, or Pending (the platform answered 202) for the push worker to settle.
 */
async function sendPush(ctx: ServiceContext, request: FastifyRequest, write: Write): Promise<{ push: PushRow; record?: Record<string, unknown> }> {
  const target = await pushTarget(ctx, request);
  const { connection, key } = target;
  const timeoutMinutes = timeoutParam(queryOf(request).timeoutInMinutes);
  if (write.record) failIfAny(validatePush(key, write.record), (validation) => errors.invalidPushRecord(key, validation));
  if (connection.status !== 'Linked') {
    throw errors.pushNotLinked(connection.status);
  }
  const tokens = await readTokens(ctx.store, ctx.sealer, connection.id);
  if (!tokens || !ctx.platform) throw errors.noPlatformToPush();
  const requested = isoSeconds(ctx.clock.now());
  const { fields, record } = await writeToPlatform(ctx, request, ctx.platform, target, write, requested);
  const push = await ctx.store.transaction(async (tx) => {
    const inserted = await tx.insertPush({
      key: randomUUID(),
      company_id: connection.company_id,
      connection_id: connection.id,
      data_type: key,
      requested,
      completed: fields.status === 'Pending' ? null : requested,
      timeout_minutes: timeoutMinutes,
      error_message: null,
      validation: '{"errors":[],"warnings":[]}',
      changes: null,
      platform_push_id: null,
      change_type: write.changeType,
      record_id: write.recordId ?? null,
      ...fields,
    });
    await pushEnded(eventsOf(ctx), inserted);
    return inserted;
  });
  ctx.signals.pushRecorded(push.status);
  if (push.status === 'Pending') ctx.wakeWorker();
  return { push, record };
}

/**
 * The platform's answer to the write, as the push's fields (and the record it took, on
 * success). Refused tokens are a failed push, and revoked ones mark the connection
 * deauthorized; a rate limit or an outage is the caller's error instead.
 */
async function writeToPlatform(
  ctx: ServiceContext, request: FastifyRequest, platform: NonNullable<ServiceContext['platform']>, { connection, integration, key }: PushTarget, write: Write, requested: string,
): Promise<{ fields: PushFields; record?: Record<string, unknown> }> {
  const target = { dataType: key, changeType: write.changeType, recordId: write.recordId ?? null };
  try {
    const fresh = await freshTokens(ctx.store, ctx.sealer, platform, connection, () => requested);
    const outcome = write.changeType === 'Created'
      ? await platform.push(connection.integration_key, fresh, key, write.record ?? {})
      : write.changeType === 'Modified'
        ? await platform.update(connection.integration_key, fresh, key, write.recordId ?? '', write.record ?? {}, write.force ?? false)
        : await platform.remove(connection.integration_key, fresh, key, write.recordId ?? '');
    return { fields: pushFieldsFor(outcome, target), ...(outcome.status === 'Success' ? { record: outcome.record } : {}) };
  } catch (err) {
    if (err instanceof PlatformRateLimitError) throw errors.tooManyRequests(err.retryAfterSeconds, 'platform_rate_limit');
    if (!(err instanceof PlatformAuthError)) throw errors.platformUnavailable(integration.name);
    if (err.revoked) {
      await deauthorized({ ...eventsOf(ctx), publicUrl: request.baseUrl }, connection.id, { statusCode: '401', statusText: 'Unauthorized', status: 'Active', erroredOnUtc: requested, errorMessage: `Reauthorization required: ${err.message}` });
    }
    return { fields: { status: 'Failed', status_code: 401, error_message: `Reauthorization required: ${err.message}` } };
  }
}

/**
 * A create or update answers the push operation with the record: the platform's when it
 * took it, else the one sent (still Pending), with every field its type requires.
 */
const withData = (sent: Record<string, unknown>, result: { push: PushRow; record?: Record<string, unknown> }) => ({
  ...pushRecord(result.push), data: withRequiredFields(result.push.data_type, result.record ?? sent),
});
