// Store rows → wire records. Optional fields without a value are left out, never null
// (compact.ts), the fields the contract lists as nullable included: both readings of a
// nullable field accept it left out.
import type { ClientRow } from '../store/clients.js';
import type { CompanyRow } from '../store/companies.js';
import type { ConnectionRow } from '../store/connections.js';
import { integrationByKey, integrationId } from '../../platforms/registry.js';
import { compact } from './compact.js';

export function clientRecord(row: ClientRow): Record<string, unknown> {
  return { id: row.id, name: row.name, plan: row.plan, created: row.created, isAdmin: row.is_admin === 1 };
}

export function connectionRecord(row: ConnectionRow, baseUrl: string): Record<string, unknown> {
  const integration = integrationByKey(row.integration_key);
  return compact({
    id: row.id,
    integrationId: integrationId(row.integration_key),
    integrationKey: row.integration_key,
    sourceId: row.source_id,
    sourceType: integration?.sourceType ?? 'Unknown',
    platformName: integration?.name ?? row.integration_key,
    linkUrl: `${baseUrl}/link/companies/${row.company_id}/connections/${row.id}`,
    status: row.status,
    lastSync: row.last_sync,
    created: row.created,
    dataConnectionErrors: row.errors ? JSON.parse(row.errors) : undefined,
    connectionInfo: row.connection_info ? JSON.parse(row.connection_info) : undefined,
  });
}

/**
 * The company as GET /companies/{id} shows it, and as company.created and company.deleted
 * carry it. ferry keeps no parent companies, so referenceParentCompany is never known.
 */
export function companyRecord(row: Omit<CompanyRow, 'seq'>, connections: ConnectionRow[], baseUrl: string): Record<string, unknown> {
  return compact({
    id: row.id,
    name: row.name,
    description: row.description || undefined,
    redirect: `${baseUrl}/link/companies/${row.id}`,
    lastSync: row.last_sync,
    created: row.created,
    createdByUserName: row.created_by_user_name,
    products: JSON.parse(row.products),
    tags: JSON.parse(row.tags),
    referenceSubsidiaryCompanies: JSON.parse(row.ref_subsidiaries),
    dataConnections: connections.map((c) => connectionRecord(c, baseUrl)),
  });
}
