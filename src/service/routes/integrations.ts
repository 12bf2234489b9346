// /integrations: ferry's registry of platforms, their token schemas and data types.
import type { FastifyInstance } from 'fastify';
import { errors } from '../errors.js';
import { params, queryOf } from '../http/body.js';
import { envelope, parsePageRequest } from '../http/paging.js';
import { defineRoute } from '../http/route.js';
import { INTEGRATIONS, integrationByKey } from '../../platforms/registry.js';
import type { Integration } from '../../platforms/types.js';
import { openDatabase } from '../store/db.js';
import { selectPage } from '../store/paging.js';
import type { FieldResolver } from '../query/types.js';

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

const integrationFields: FieldResolver = (path) => {
  switch (path) {
    case 'key': return { sql: 'key', type: 'string' };
    case 'name': return { sql: 'name', type: 'string' };
    case 'sourceType': return { sql: 'source_type', type: 'string' };
    case 'migrationRoute': return { sql: 'migration_route', type: 'string' };
    default: return undefined;
  }
};

/** The registry is code, not data; an in-memory table lets the list share the query language. */
function registryTable() {
  const db = openDatabase(':memory:');
  db.exec('CREATE TABLE integrations (seq INTEGER PRIMARY KEY, key TEXT, name TEXT, source_type TEXT, migration_route TEXT)');
  const insert = db.prepare('INSERT INTO integrations (key, name, source_type, migration_route) VALUES (?, ?, ?, ?)');
  for (const i of INTEGRATIONS) insert.run(i.key, i.name, i.sourceType, i.migrationRoute);
  return db;
}

export function registerIntegrationRoutes(app: FastifyInstance): void {
  const table = registryTable();
  app.addHook('onClose', async () => table.close());

  defineRoute(app, '/integrations', {
    GET: async (request) => {
      const page = parsePageRequest(queryOf(request));
      const { rows, total } = selectPage<{ key: string }>(table, {
        columns: 'key', from: 'integrations', scope: '1', scopeParams: [], resolve: integrationFields, defaultOrder: 'seq',
      }, page);
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
