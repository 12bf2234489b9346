// /integrations: ferry's registry of platforms, their token schemas and data types.
import type { FastifyInstance } from 'fastify';
import { errors } from '../errors.js';
import { params, queryOf } from '../http/body.js';
import { envelope, parsePageRequest } from '../http/paging.js';
import { defineRoute } from '../http/route.js';
import { integrationByKey } from '../../platforms/registry.js';
import type { Integration } from '../../platforms/types.js';
import { listIntegrationKeys, registryTable } from '../store/integrations.js';

function integrationRecord(integration: Integration): Record<string, unknown> {
  return {
    key: integration.key,
    name: integration.name,
    sourceType: integration.sourceType,
    migrationRoute: integration.migrationRoute,
    tokenFields: integration.tokenFields.map(({ name, required, description }) => ({ name, required, description })),
    dataTypes: integration.dataTypes,
  };
}

export function registerIntegrationRoutes(app: FastifyInstance): void {
  const table = registryTable();
  app.addHook('onClose', async () => table.close());

  defineRoute(app, '/integrations', {
    GET: async (request) => {
      const page = parsePageRequest(queryOf(request));
      const { rows, total } = listIntegrationKeys(table, page);
      return envelope(rows.map((row) => integrationRecord(integrationByKey(row.key)!)), total, page, request.url);
    },
  });

  defineRoute(app, '/integrations/:platformKey', {
    GET: async (request) => {
      const { platformKey = '' } = params(request);
      const integration = integrationByKey(platformKey.toLowerCase());
      if (!integration) throw errors.integrationNotFound(platformKey);
      return integrationRecord(integration);
    },
  });
}
