// What each event carries, in the public catalogue's shapes. Links are built from the base
// URL the caller knows (a request's); background work passes the service's public URL.
// Fields with no value are left out, as in every record the service sends (wire/compact.ts).
import { compact } from '../wire/compact.js';
import { companyRecord, connectionRecord } from '../wire/records.js';
import type { CompanyRow } from '../store/companies.js';
import type { ConnectionRow } from '../store/connections.js';
import type { PullRow } from '../store/pulls.js';
import type { PushRow } from '../store/pushes.js';

type Json = Record<string, unknown>;

/** The company as events name it: id, name, description, tags. */
export function companyReference(company: CompanyRow): Json {
  const reference: Json = { id: company.id, name: company.name };
  if (company.description) reference.description = company.description;
  reference.tags = JSON.parse(company.tags) as Record<string, string>;
  return reference;
}

/** company.created / company.deleted: the company as GET /companies/{id} shows it (redirect included). */
export function companyPayload(company: Omit<CompanyRow, 'seq'>, connections: ConnectionRow[], baseUrl: string): Json {
  return companyRecord(company, connections, baseUrl);
}

/** company.product.added / removed. */
export function companyProductPayload(company: CompanyRow, product: string, products: string[]): Json {
  const payload: Json = { id: company.id, name: company.name, productId: product, productName: product, products };
  if (company.description) payload.description = company.description;
  return payload;
}

/** connection.*: the company and the connection as GET …/connections/{id} shows it. */
export function connectionPayload(company: CompanyRow, connection: ConnectionRow, baseUrl: string): Json {
  return { referenceCompany: companyReference(company), connection: connectionRecord(connection, baseUrl) };
}

/** A pull's summary in read.completed, with its validation findings as issues. */
export function readSummary(pull: PullRow): Json {
  const validation = pull.validation ? (JSON.parse(pull.validation) as { errors: unknown[]; warnings: unknown[] }) : { errors: [], warnings: [] };
  const logs = `/companies/${pull.company_id}/sync/${pull.id}/validation`;
  const issues = [
    ...(validation.errors.length > 0 ? [{ type: 'error.validation', message: `${validation.errors.length} record(s) failed the read checks.`, links: { logs } }] : []),
    ...(validation.warnings.length > 0 ? [{ type: 'warning.validation', message: `${validation.warnings.length} record(s) may need a look.`, links: { logs } }] : []),
  ];
  return { connectionId: pull.connection_id, dataType: pull.data_type, recordsModified: pull.fetched > 0, status: pull.status, issues };
}

/** read.completed: every data type of the company's last round of syncs. */
export function readCompletedPayload(company: CompanyRow, pulls: PullRow[], since: string | null): Json {
  return compact({ referenceCompany: companyReference(company), modifiedFromDate: since, dataTypes: pulls.map(readSummary) });
}

/** ferry.read.dataType.completed / failed: one data type's pull. */
export function dataTypeReadPayload(company: CompanyRow, pull: PullRow, records: number | null): Json {
  return compact({
    referenceCompany: companyReference(company), connectionId: pull.connection_id, dataType: pull.data_type, pullOperationId: pull.id,
    status: pull.status, records, fetched: pull.fetched, completed: pull.completed, errorMessage: pull.error_message,
  });
}

const WRITE_TYPE: Record<PushRow['change_type'], string> = { Created: 'Create', Modified: 'Update', Deleted: 'Delete' };

/** {dataType}.write.successful / unsuccessful: a settled push operation. */
export function writePayload(company: CompanyRow, push: PushRow): Json {
  const changes = push.changes ? (JSON.parse(push.changes) as Array<{ recordRef?: { id?: string } }>) : [];
  const recordId = changes[0]?.recordRef?.id ?? push.record_id;
  return compact({
    id: push.key, type: WRITE_TYPE[push.change_type], referenceCompany: companyReference(company), connectionId: push.connection_id,
    requestedOnDate: push.requested, completedOnDate: push.completed, status: push.status, record: recordId ? { id: recordId } : undefined,
  });
}
