// Companies a migration created before (from any machine), found once at the start by
// their ferryKey tag, so finding a row's company costs no request per row.
import * as api from '../../client/api.js';
import type { ApiClient } from '../../client/client.js';

export interface IndexedConnection {
  id: string;
  integrationKey: string;
  status: string;
}

export interface IndexedCompany {
  companyId: string;
  connections: IndexedConnection[];
}

export interface CompanyRecord {
  id: string;
  tags?: Record<string, string>;
  dataConnections?: IndexedConnection[];
}

export function indexEntry(company: CompanyRecord): IndexedCompany {
  return {
    companyId: company.id,
    connections: (company.dataConnections ?? []).map(({ id, integrationKey, status }) => ({ id, integrationKey, status })),
  };
}

export async function loadCompanyIndex(client: ApiClient, signal?: AbortSignal): Promise<Map<string, IndexedCompany>> {
  const index = new Map<string, IndexedCompany>();
  const pages = api.companyRecords<CompanyRecord>(client, { pageSize: api.MAX_PAGE_SIZE, query: 'tags.ferryKey!=null' }, signal);
  for await (const company of pages) {
    const key = company.tags?.ferryKey;
    if (key) index.set(key, indexEntry(company));
  }
  return index;
}

const PREFERENCE = ['Linked', 'PendingAuth', 'Deauthorized', 'Unlinked'];

/**
 * The connection a row should use on this company: a Linked one (already migrated), else
 * one awaiting auth, else one to re-authorize — never a second connection to the platform.
 */
export function reusableConnection(company: IndexedCompany, platformKey: string): IndexedConnection | undefined {
  const same = company.connections.filter((c) => c.integrationKey === platformKey);
  for (const status of PREFERENCE) {
    const found = same.find((c) => c.status === status);
    if (found) return found;
  }
  return undefined;
}
