// Store rows → wire records. Optional fields without a value are omitted (never null),
// except the fields the contract lists as nullable.
import type { ClientRow } from '../store/clients.js';
import type { CompanyRow } from '../store/companies.js';
import type { ConnectionRow } from '../store/connections.js';
import { integrationByKey, integrationId } from '../../platforms/registry.js';

export function clientRecord(row: ClientRow): Record<string, unknown> {
  return { id: row.id, name: row.name, plan: row.plan, created: row.created, isAdmin: row.is_admin === 1 };
}

export function connectionRecord(row: ConnectionRow, baseUrl: string): Record<string, unknown> {
  const integration = integrationByKey(row.integration_key);
  const record: Record<string, unknown> = {
    id: row.id,
    integrationId: integrationId(row.integration_key),
    integrationKey: row.integration_key,
    sourceId: row.source_id,
    sourceType: integration?.sourceType ?? 'Unknown',
    platformName: integration?.name ?? row.integration_key,
    linkUrl: `${baseUrl}/link/companies/${row.company_id}/connections/${row.id}`,
    status: row.status,
    created: row.created,
    dataConnectionErrors: row.errors ? JSON.parse(row.errors) : null,
    connectionInfo: row.connection_info ? JSON.parse(row.connection_info) : null,
  };
  if (row.last_sync) record.lastSync = row.last_sync;
  return record;
}

export function companyRecord(row: CompanyRow, connections: ConnectionRow[], baseUrl: string): Record<string, unknown> {
  const record: Record<string, unknown> = { id: row.id, name: row.name };
  if (row.description) record.description = row.description;
  record.redirect = `${baseUrl}/link/companies/${row.id}`;
  if (row.last_sync) record.lastSync = row.last_sync;
  record.created = row.created;
  record.createdByUserName = row.created_by_user_name;
  record.products = JSON.parse(row.products);
  record.tags = JSON.parse(row.tags);
  record.referenceSubsidiaryCompanies = JSON.parse(row.ref_subsidiaries);
  record.dataConnections = connections.map((c) => connectionRecord(c, baseUrl));
  return record;
}
