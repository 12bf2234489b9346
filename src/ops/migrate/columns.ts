// Maps a CSV header onto the migration's columns: matched case-insensitively (and
// ignoring spaces, dashes and underscores), so `Company Name`, `company_name` and
// `companyName` are the same column. Token columns are matched the same way against
// every integration's token fields.
import type { IntegrationInfo } from './types.js';

export const BASE_COLUMNS = ['companyName', 'companyId', 'platformKey', 'externalId', 'connectionId', 'description', 'tags'] as const;

export function normaliseHeader(name: string): string {
  return name.replace(/^\uFEFF/, '').trim().toLowerCase().replace(/[\s_-]+/g, '');
}

export interface HeaderMap {
  /** Canonical name per column position (undefined: a column ferry does not know). */
  names: Array<string | undefined>;
  unknown: string[];
  duplicates: string[];
}

export function mapHeader(header: string[], integrations: IntegrationInfo[]): HeaderMap {
  const canonical = new Map<string, string>();
  for (const column of BASE_COLUMNS) canonical.set(normaliseHeader(column), column);
  for (const integration of integrations) {
    for (const field of integration.tokenFields) canonical.set(normaliseHeader(field.name), field.name);
  }
  const seen = new Set<string>();
  const unknown: string[] = [];
  const duplicates: string[] = [];
  const names = header.map((raw) => {
    const name = canonical.get(normaliseHeader(raw));
    if (!name) {
      if (raw.trim() !== '') unknown.push(raw.trim());
      return undefined;
    }
    if (seen.has(name)) duplicates.push(raw.trim());
    seen.add(name);
    return name;
  });
  return { names, unknown, duplicates };
}
