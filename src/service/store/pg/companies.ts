// Companies of a client on PostgreSQL: ../sqlite/companies.ts statement by statement. Tags are a
// json column holding the text SQLite holds; queries read a tag with `->>`, the expression
// the ferryKey index is built on.
import { timeOrderedId } from '../../../lib/time-ordered-id.js';
import { FILTERABLE_TAG_KEY } from '../../../platforms/limits.js';
import { jsonField, postgresDate } from '../../query/index.js';
import type { FieldResolver } from '../../query/types.js';
import type { AsyncStore } from '../async-store.js';
import type { CompanyStore } from '../store.js';
import { NEW_COMPANY_COLUMNS, type CompanyRow } from '../companies.js';
import type { PagePlan, PageRequest } from '../paging.js';
import { EVENT_CTES, eventParams } from './events.js';
import { planPgPage } from './paging.js';
import { row, run, type Queryable } from './query.js';

type CompanyMethods = keyof CompanyStore | 'companiesPage';

/** `(tags ->> 'key')`; jsonField refuses any key that is not safe to splice into SQL. */
const tagField = (key: string): string => jsonField('postgres', 'tags', [key], 'string');

export const pgCompanyFields: FieldResolver = (path) => {
  switch (path) {
    case 'id': return { sql: 'id', type: 'string' };
    case 'name': return { sql: 'name', type: 'string' };
    case 'description': return { sql: 'description', type: 'string' };
    case 'created': return { sql: postgresDate('created'), type: 'date' };
    case 'lastSync': return { sql: postgresDate('last_sync'), type: 'date' };
    case 'createdByUserName': return { sql: 'created_by_user_name', type: 'string' };
  }
  if (path.startsWith('tags.') && FILTERABLE_TAG_KEY.test(path.slice(5))) return { sql: tagField(path.slice(5)), type: 'string' };
  return undefined;
};

/** A page of a client's companies, optionally those whose tag `key` is exactly `value` (bytewise, as SQLite's =). */
export function companiesPage(clientId: string, request: PageRequest, tag?: { key: string; value: string }): PagePlan {
  let scope = 'client_id = ?';
  const scopeParams: string[] = [clientId];
  if (tag) {
    if (!FILTERABLE_TAG_KEY.test(tag.key)) throw new Error('Unsafe tag key reached companiesPage.');
    scope += ` AND ${tagField(tag.key)} = ?`;
    scopeParams.push(tag.value);
  }
  return planPgPage({ table: 'companies', key: 'seq', scope, scopeParams, resolve: pgCompanyFields }, request);
}

// The company and its event (with its deliveries) in one statement: written together or not
// at all without a transaction, in one round trip. The event's company_id names the company
// inserted beside it; the foreign key is checked at the statement's end, when both are there.
const INSERT_COMPANY_WITH_EVENT = `WITH co AS (
    INSERT INTO companies (${NEW_COMPANY_COLUMNS.join(', ')}) VALUES (${NEW_COMPANY_COLUMNS.map(() => '?').join(', ')}) RETURNING *
  ), ${EVENT_CTES}
  SELECT * FROM co`;

export function companyMethods(db: Queryable): Pick<AsyncStore, CompanyMethods> {
  return {
    insertCompany: async (clientId, input, created) => (await row<CompanyRow>(db,
      'INSERT INTO companies (id, client_id, name, description, created, tags) VALUES (?, ?, ?, ?, ?, ?) RETURNING *',
      [timeOrderedId(), clientId, input.name, input.description ?? null, created, JSON.stringify(input.tags)]))!,
    insertCompanyWithEvent: async (company, event) => (await row<CompanyRow>(db, INSERT_COMPANY_WITH_EVENT,
      [...NEW_COMPANY_COLUMNS.map((column) => company[column]), ...eventParams([event])]))!,
    getCompany: (id) => row<CompanyRow>(db, 'SELECT * FROM companies WHERE id = ?', [id]),
    countCompanies: async (clientId) => Number((await row<{ n: number }>(db, 'SELECT count(*) AS n FROM companies WHERE client_id = ?', [clientId]))!.n),
    // Undefined when no company has that id, as ../sqlite/companies.ts reads it back.
    replaceCompany: async (id, input) => (await row<CompanyRow>(db, 'UPDATE companies SET name = ?, description = ?, tags = ? WHERE id = ? RETURNING *',
      [input.name, input.description ?? null, JSON.stringify(input.tags), id]))!,
    deleteCompany: async (id) => {
      await run(db, 'DELETE FROM companies WHERE id = ?', [id]);
    },
    setCompanyProducts: async (id, products) => {
      await run(db, 'UPDATE companies SET products = ? WHERE id = ?', [JSON.stringify(products), id]);
    },
    companiesPage,
  };
}
