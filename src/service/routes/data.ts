// Syncs and data sets: POST /data/all, /data/queue/{dataType}, /dataStatus,
// /data/history, and the paged data set reads with their 409/404 states.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ServiceContext } from '../context.js';
import { errors } from '../errors.js';
import { assertOwns } from '../http/auth.js';
import { params, queryOf } from '../http/body.js';
import { parsePageRequest, sendRecordPage } from '../http/paging.js';
import { dataStatusRecord, pullRecord } from '../wire/sync-records.js';
import { defineRoute } from '../http/route.js';
import { dataTypeByKey, dataTypeByPath, type DataType } from '../../platforms/data-types.js';
import { integrationByKey } from '../../platforms/registry.js';
import { outOfScopeProduct } from '../out-of-scope.js';
import type { ConnectionRow } from '../store/connections.js';
import type { RecordBytes } from '../store/datasets.js';
import type { AsyncStore } from '../store/async-store.js';
import type { PullRow } from '../store/pulls.js';
import { queueAll, queuePull } from '../sync/enqueue.js';
import { CUSTOM_PREFIX } from '../sync/pull-source.js';
import { asksInteractive, lanePriority } from '../sync/lanes.js';
import { companyPull, operationsPage } from './company-operations.js';
import { ownedCompany } from './companies.js';
import { ownedConnection } from './connections.js';

/** The data types the public API reads under a connection. */
const CONNECTION_SCOPED = new Set(['bankAccounts', 'accountTransactions', 'directCosts', 'directIncomes', 'transfers']);

async function companyConnections(store: AsyncStore, companyId: string): Promise<ConnectionRow[]> {
  return (await store.listConnections(companyId, { page: 1, pageSize: 5000 })).rows;
}

/** 404 when the company's platforms lack the type; 409 until a sync of it has completed. */
export async function readableGeneration(store: AsyncStore, companyId: string, dataType: DataType): Promise<number> {
  const connections = await companyConnections(store, companyId);
  const integrations = [...new Set(connections.map((c) => c.integration_key))].map((key) => integrationByKey(key));
  if (integrations.length > 0 && !integrations.some((i) => i?.dataTypes.includes(dataType.key))) {
    throw errors.dataTypeNotSupported(dataType.key, integrations.map((i) => i?.name ?? 'Unknown').join(', '));
  }
  const dataset = await store.getDataset(companyId, dataType.key);
  if (dataset?.visible_generation) return dataset.visible_generation;
  if (dataset?.last_requested) {
    throw errors.dataSetSyncing(dataType.key, companyId);
  }
  throw errors.dataSetNotRequested(dataType.key, companyId);
}

/** The path's data type; a path of a product ferry does not serve (financial statements, banking data…) says so. */
function dataTypeFromPath(request: FastifyRequest): DataType {
  const { dataPath = '' } = params(request);
  const dataType = dataTypeByPath(dataPath);
  if (dataType) return dataType;
  const path = request.url.split('?')[0] ?? '/';
  const product = outOfScopeProduct(path);
  throw product ? errors.outOfScope(request.method, path, product) : errors.unknownDataType(dataPath);
}

export function registerDataRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  registerSyncRoutes(app, ctx);
  registerDataSetReads(app, ctx);
}

/** Asking for syncs and reading how they went: queue all or one type, the data status, the sync history. */
function registerSyncRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  const { store, clock } = ctx;

  defineRoute(app, '/companies/:companyId/data/all', {
    POST: async (request, reply) => {
      const interactive = asksInteractive(request);
      // The company and its connections as they are when the pulls are queued.
      const pulls = await store.transaction(async (tx) => {
        const company = await ownedCompany(ctx, request);
        const connections = await companyConnections(tx, company.id);
        const priority = connections.some((c) => c.status === 'Linked') ? await lanePriority(tx, company.client_id, company.id, interactive) : 0;
        return queueAll(tx, clock, connections, priority);
      });
      if (pulls.length > 0) ctx.wakeWorker();
      return reply.code(204).send();
    },
  });

  defineRoute(app, '/companies/:companyId/data/queue/:dataType', {
    POST: async (request) => {
      const { dataType: key = '' } = params(request);
      const dataType = dataTypeByKey(key);
      if (!dataType) throw errors.unknownDataType(key);
      return queueOne(ctx, request, dataType);
    },
  });

  defineRoute(app, '/companies/:companyId/dataStatus', {
    GET: async (request) => {
      // The company, its data sets and their latest pulls in one read: a sync's waiter asks this of each company again and again.
      const { companyId = '' } = params(request);
      const found = await store.companyDataStatus(companyId);
      if (!found) throw errors.companyNotFound(companyId);
      assertOwns(request.auth, found.company.client_id);
      const status: Record<string, unknown> = {};
      // Custom data types are read per connection and are not data types of the public status.
      for (const { dataset, latest } of found.datasets) if (!dataset.data_type.startsWith(CUSTOM_PREFIX)) status[dataset.data_type] = dataStatusRecord(dataset, latest);
      return status;
    },
  });

  defineRoute(app, '/companies/:companyId/data/history', {
    GET: (request) => operationsPage<PullRow>(ctx, request, (companyId, page) => ctx.store.pullsPage(companyId, page), pullRecord),
  });

  defineRoute(app, '/companies/:companyId/data/history/:datasetId', {
    GET: async (request) => pullRecord(await companyPull(ctx, request)),
  });
}

/** Queues a pull of one data type on a Linked connection that has it (or the one the caller names). */
async function queueOne(ctx: ServiceContext, request: FastifyRequest, dataType: DataType) {
  const { store, clock } = ctx;
  const interactive = asksInteractive(request);
  // The connection is chosen and its pull queued in one transaction: it is still Linked when queued.
  const pull = await store.transaction(async (tx) => {
    const company = await ownedCompany(ctx, request);
    const connections = await companyConnections(tx, company.id);
    const wanted = queryOf(request).connectionId;
    const linked = connections.filter((c) => c.status === 'Linked' && (wanted === undefined || c.id === wanted));
    const connection = linked.find((c) => integrationByKey(c.integration_key)?.dataTypes.includes(dataType.key)) ?? linked[0];
    if (!connection) {
      throw wanted ? errors.notALinkedConnection(String(wanted), company.id) : errors.noLinkedConnection(company.id);
    }
    return queuePull(tx, clock, connection, dataType.key, await lanePriority(tx, company.client_id, company.id, interactive));
  });
  ctx.wakeWorker();
  return pullRecord(pull);
}

/** The synced data sets, a page or a record at a time: per company, and per connection for the types read that way. */
function registerDataSetReads(app: FastifyInstance, ctx: ServiceContext): void {
  const { store } = ctx;

  defineRoute(app, '/companies/:companyId/data/:dataPath', {
    GET: async (request, reply) => {
      const company = await ownedCompany(ctx, request);
      const dataType = dataTypeFromPath(request);
      const generation = await readableGeneration(store, company.id, dataType);
      // Company info is one record, answered as itself (the public API's shape), not as a page.
      if (dataType.key === 'company') {
        const [info] = (await store.listRecords(company.id, dataType.key, generation, { page: 1, pageSize: 1 })).rows;
        if (!info) throw errors.noCompanyInfo(company.id);
        return reply.type('application/json; charset=utf-8').send(info.data);
      }
      const page = parsePageRequest(queryOf(request));
      const { rows, total } = await ctx.reads.page<RecordBytes>(request.auth.client.id, await store.recordsPage(company.id, dataType.key, generation, page));
      return sendRecordPage(reply, rows.map((r) => r.data), total, page, request.url);
    },
    // Refreshing company info has a path of its own publicly (POST /data/info); other types queue at /data/queue/{dataType}.
    POST: async (request) => {
      const dataType = dataTypeFromPath(request);
      if (dataType.key !== 'company') throw errors.methodNotAllowed(['GET']);
      return queueOne(ctx, request, dataType);
    },
  });

  // The data types the public API reads per connection (a company's bank accounts come from
  // each of its connections): the same snapshot, only the records this connection synced.
  defineRoute(app, '/companies/:companyId/connections/:connectionId/data/:dataPath', {
    GET: async (request, reply) => {
      const { connection, dataType, generation } = await connectionDataSet(ctx, request);
      const page = parsePageRequest(queryOf(request));
      const { rows, total } = await ctx.reads.page<RecordBytes>(request.auth.client.id, await store.recordsPage(connection.company_id, dataType.key, generation, page, connection.id));
      return sendRecordPage(reply, rows.map((r) => r.data), total, page, request.url);
    },
  });

  defineRoute(app, '/companies/:companyId/connections/:connectionId/data/:dataPath/:recordId', {
    GET: async (request, reply) => {
      const { connection, dataType, generation } = await connectionDataSet(ctx, request);
      const { recordId = '' } = params(request);
      const data = await store.getRecord(connection.company_id, dataType.key, generation, recordId, connection.id);
      if (!data) throw errors.connectionRecordNotFound(dataType.key, recordId, connection.id);
      return reply.type('application/json; charset=utf-8').send(data);
    },
  });

  defineRoute(app, '/companies/:companyId/data/:dataPath/:recordId', {
    GET: async (request, reply) => {
      const company = await ownedCompany(ctx, request);
      const dataType = dataTypeFromPath(request);
      const generation = await readableGeneration(store, company.id, dataType);
      const { recordId = '' } = params(request);
      const data = await store.getRecord(company.id, dataType.key, generation, recordId);
      if (!data) throw errors.recordNotFound(dataType.key, recordId, company.id);
      return reply.type('application/json; charset=utf-8').send(data);
    },
  });
}

/** The connection's data set of the path's type: a type read per connection, synced at least once. */
async function connectionDataSet(ctx: ServiceContext, request: FastifyRequest) {
  const connection = await ownedConnection(ctx, request);
  const dataType = dataTypeFromPath(request);
  if (!CONNECTION_SCOPED.has(dataType.key)) {
    throw errors.readPerCompany(dataType.key, connection.company_id, dataType.path);
  }
  return { connection, dataType, generation: await readableGeneration(ctx.store, connection.company_id, dataType) };
}
