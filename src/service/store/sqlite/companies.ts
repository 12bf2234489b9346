// Companies of a client. Tags and the other object/array fields are JSON text columns;
// queries reach into tags with json_extract (indexed for the ferryKey tag).
import { timeOrderedId } from '../../../lib/time-ordered-id.js';
import { noteCascade, settleFiles } from './attachment-files.js';
import { companyFields, jsonPath } from './company-fields.js';
import type { Db } from './db.js';
import { planPage, type PagePlan, type PageRequest } from '../paging.js';
import { prepared } from './statements.js';
import { NEW_COMPANY_COLUMNS, type CompanyRow, type CompanyInput, type NewCompanyRow } from '../companies.js';
import type { EventInput } from '../events.js';
import { insertEvents } from './events.js';

export function insertCompany(db: Db, clientId: string, input: CompanyInput, created: string): CompanyRow {
  const id = timeOrderedId();
  prepared(db, 'INSERT INTO companies (id, client_id, name, description, created, tags) VALUES (?, ?, ?, ?, ?, ?)')
    .run(id, clientId, input.name, input.description ?? null, created, JSON.stringify(input.tags));
  return getCompany(db, id)!;
}

/** The company and its event in one transaction (a savepoint inside one already open): both or neither. */
export function insertCompanyWithEvent(db: Db, company: NewCompanyRow, event: EventInput): CompanyRow {
  return db.transaction(() => {
    prepared(db, `INSERT INTO companies (${NEW_COMPANY_COLUMNS.join(', ')}) VALUES (${NEW_COMPANY_COLUMNS.map(() => '?').join(', ')})`)
      .run(...NEW_COMPANY_COLUMNS.map((column) => company[column]));
    insertEvents(db, [event]);
    return getCompany(db, company.id)!;
  })();
}

export function getCompany(db: Db, id: string): CompanyRow | undefined {
  return prepared(db, 'SELECT * FROM companies WHERE id = ?').get(id) as CompanyRow | undefined;
}

export function countCompanies(db: Db, clientId: string): number {
  return (prepared(db, 'SELECT count(*) AS n FROM companies WHERE client_id = ?').get(clientId) as { n: number }).n;
}

/** A page of a client's companies, as a plan to run on any connection (http/ runs it through the read pool). */
export function companiesPage(clientId: string, request: PageRequest, tag?: { key: string; value: string }): PagePlan {
  let scope = 'client_id = ?';
  const scopeParams: string[] = [clientId];
  if (tag) {
    scope += ` AND json_extract(tags, '${jsonPath(tag.key)}') = ?`;
    scopeParams.push(tag.value);
  }
  return planPage({ columns: '*', from: 'companies', scope, scopeParams, resolve: companyFields, defaultOrder: 'seq' }, request);
}

export function replaceCompany(db: Db, id: string, input: CompanyInput): CompanyRow {
  prepared(db, 'UPDATE companies SET name = ?, description = ?, tags = ? WHERE id = ?')
    .run(input.name, input.description ?? null, JSON.stringify(input.tags), id);
  return getCompany(db, id)!;
}

export function setCompanyProducts(db: Db, id: string, products: string[]): void {
  prepared(db, 'UPDATE companies SET products = ? WHERE id = ?').run(JSON.stringify(products), id);
}

/** Deletes the company and all it holds; its attachments' files go once the deletion commits. */
export function deleteCompany(db: Db, id: string): void {
  noteCascade(db, { companyId: id });
  prepared(db, 'DELETE FROM companies WHERE id = ?').run(id);
  settleFiles(db);
}
