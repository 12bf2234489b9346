// Company and connection records (API.md), as the CLI reads them, and how a company's
// connections show up in tables.
export interface ConnectionRecord {
  id: string;
  integrationId: string;
  integrationKey: string;
  sourceId: string;
  sourceType: string;
  platformName: string;
  linkUrl: string;
  status: 'PendingAuth' | 'Linked' | 'Unlinked' | 'Deauthorized';
  lastSync?: string;
  created: string;
  dataConnectionErrors: Array<{ statusCode?: string | number; statusText?: string; errorMessage?: string; erroredOnUtc?: string; status?: string }> | null;
  connectionInfo: Record<string, unknown> | null;
}

export interface CompanyRecord {
  id: string;
  name: string;
  description?: string;
  redirect: string;
  lastSync?: string;
  created: string;
  createdByUserName: string | null;
  products: string[];
  tags: Record<string, string>;
  referenceSubsidiaryCompanies: unknown[];
  dataConnections: ConnectionRecord[];
}

export function formatTags(tags: Record<string, string> | undefined): string {
  return Object.entries(tags ?? {}).map(([k, v]) => `${k}=${v}`).join(';');
}

export function companyPath(companyId: string): string {
  return `/companies/${encodeURIComponent(companyId)}`;
}
