// What an account reads beyond the standard data types: supplemental data (extra platform
// fields added to a data type's records) and custom data types (a platform endpoint of the
// account's choosing, mapped to its own fields), configured per platform and synced per
// connection; and the validation results of each pull.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ServiceContext } from '../context.js';
import { errors, type Validation } from '../errors.js';
import { failIfAny, objectBody, params, queryOf } from '../http/body.js';
import { envelope, parsePageRequest, sendRecordPage } from '../http/paging.js';
import { pullRecord } from '../wire/sync-records.js';
import { defineRoute, withBody } from '../http/route.js';
import { NAME, SUPPLEMENTAL_DATA_TYPES, checkCustom, checkSupplemental } from '../data-configs/validate-config.js';
import { queuePull } from '../sync/enqueue.js';
import type { RecordBytes } from '../store/datasets.js';
import { CUSTOM_PREFIX } from '../sync/pull-source.js';
import { companyPull } from './company-operations.js';
import { ownedCompany } from './companies.js';
import { ownedConnection } from './connections.js';
import { integrationOf } from './integrations.js';

function supplementalType(request: FastifyRequest): string {
  const { dataType = '' } = params(request);
  if (!SUPPLEMENTAL_DATA_TYPES.includes(dataType)) throw errors.invalidParameter('dataType', `must be one of ${SUPPLEMENTAL_DATA_TYPES.join(', ')}`);
  return dataType;
}

function customIdentifier(request: FastifyRequest): string {
  const { customDataIdentifier = '' } = params(request);
  if (!NAME.test(customDataIdentifier)) throw errors.invalidParameter('customDataIdentifier', 'must be 1 to 64 letters, digits, _ or -');
  return customDataIdentifier;
}

export function registerDataConfigRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  registerConfigs(app, ctx);
  registerCustomData(app, ctx);
}

/** An account's configurations, per platform: supplemental data of a data type, and custom data types. */
function registerConfigs(app: FastifyInstance, ctx: ServiceContext): void {
  const { store } = ctx;

  defineRoute(app, '/integrations/:platformKey/dataTypes/:dataType/supplementalDataConfig', {
    GET: async (request) => {
      const integration = integrationOf(request);
      const config = await store.readDataConfig('supplemental', request.auth.client.id, integration.key, supplementalType(request));
      return config ?? { supplementalDataConfig: {} };
    },
    PUT: withBody(async (request, reply) => {
      const integration = integrationOf(request);
      const dataType = supplementalType(request);
      const body = objectBody(request);
      failIfAny(checkSupplemental(body), errors.invalidSupplementalConfig);
      await store.writeDataConfig('supplemental', request.auth.client.id, integration.key, dataType, { supplementalDataConfig: body.supplementalDataConfig });
      return reply.code(200).send();
    }),
  });

  defineRoute(app, '/integrations/:platformKey/dataTypes/custom/:customDataIdentifier', {
    GET: async (request) => {
      const integration = integrationOf(request);
      const identifier = customIdentifier(request);
      const config = await store.readDataConfig('custom', request.auth.client.id, integration.key, identifier);
      if (!config) throw errors.customDataTypeNotFound(identifier, integration.name);
      return config;
    },
    PUT: withBody(async (request) => {
      const integration = integrationOf(request);
      const identifier = customIdentifier(request);
      const body = objectBody(request);
      failIfAny(checkCustom(integration, body), (validation) => errors.invalidCustomDataType(identifier, validation));
      const config = {
        dataSource: body.dataSource,
        requiredData: body.requiredData,
        keyBy: body.keyBy,
        ...(body.sourceModifiedDate !== undefined && body.sourceModifiedDate !== null ? { sourceModifiedDate: body.sourceModifiedDate } : {}),
      };
      await store.writeDataConfig('custom', request.auth.client.id, integration.key, identifier, config);
      return config;
    }),
  });
}

/** A connection's custom data: queuing its sync and reading it; and what a pull's validation found. */
function registerCustomData(app: FastifyInstance, ctx: ServiceContext): void {
  const { store, clock } = ctx;

  defineRoute(app, '/companies/:companyId/connections/:connectionId/data/queue/custom/:customDataIdentifier', {
    POST: async (request) => {
      // Checked and queued in one transaction: the connection is still Linked when its pull is queued.
      const pull = await store.transaction(async (tx) => {
        const connection = await ownedConnection(ctx, request);
        const identifier = customIdentifier(request);
        const company = await ownedCompany(ctx, request);
        if (!(await tx.readDataConfig('custom', company.client_id, connection.integration_key, identifier))) {
          throw errors.customDataTypeNotConfigured(identifier, connection.integration_key);
        }
        if (connection.status !== 'Linked') throw errors.connectionNotLinked(connection.id, connection.status);
        return queuePull(tx, clock, connection, `${CUSTOM_PREFIX}${identifier}`);
      });
      ctx.wakeWorker();
      return pullRecord(pull);
    },
  });

  defineRoute(app, '/companies/:companyId/connections/:connectionId/data/custom/:customDataIdentifier', {
    GET: async (request, reply) => {
      const connection = await ownedConnection(ctx, request);
      const dataType = `${CUSTOM_PREFIX}${customIdentifier(request)}`;
      const page = parsePageRequest(queryOf(request));
      // Nothing synced yet is an empty list: the public API documents no 409 here.
      const generation = (await store.getDataset(connection.company_id, dataType))?.visible_generation;
      if (!generation) return envelope([], 0, page, request.url);
      const { rows, total } = await ctx.reads.page<RecordBytes>(request.auth.client.id, await store.recordsPage(connection.company_id, dataType, generation, page, connection.id));
      return sendRecordPage(reply, rows.map((r) => r.data), total, page, request.url);
    },
  });

  defineRoute(app, '/companies/:companyId/sync/:datasetId/validation', {
    GET: async (request) => {
      const pull = await companyPull(ctx, request);
      return (pull.validation ? JSON.parse(pull.validation) : { errors: [], warnings: [] }) as Validation;
    },
  });
}
