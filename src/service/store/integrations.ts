// The integration registry is code, not data; an in-memory table of it lets GET
// /integrations share the query language and paging of every other list.
import { INTEGRATIONS } from '../../platforms/registry.js';
import type { FieldResolver } from '../query/types.js';
import { openDatabase, type Db } from './sqlite/db.js';
import type { Page, PageRequest } from './paging.js';
import { selectPage } from './sqlite/paging.js';

const integrationFields: FieldResolver = (path) => {
  switch (path) {
    case 'key': return { sql: 'key', type: 'string' };
    case 'name': return { sql: 'name', type: 'string' };
    case 'sourceType': return { sql: 'source_type', type: 'string' };
    case 'migrationRoute': return { sql: 'migration_route', type: 'string' };
    default: return undefined;
  }
};

export function registryTable(): Db {
  const db = openDatabase(':memory:');
  db.exec('CREATE TABLE integrations (seq INTEGER PRIMARY KEY, key TEXT, name TEXT, source_type TEXT, migration_route TEXT)');
  const insert = db.prepare('INSERT INTO integrations (key, name, source_type, migration_route) VALUES (?, ?, ?, ?)');
  for (const i of INTEGRATIONS) insert.run(i.key, i.name, i.sourceType, i.migrationRoute);
  return db;
}

/** A page of integration keys, in registry order unless orderBy says otherwise. */
export function listIntegrationKeys(table: Db, request: PageRequest): Page<{ key: string }> {
  return selectPage<{ key: string }>(table, {
    columns: 'key', from: 'integrations', scope: '1', scopeParams: [], resolve: integrationFields, defaultOrder: 'seq',
  }, request);
}
