// The bulk migration template for one integration: the CSV header `ferry migrate
// tokens` reads, plus one example row showing the expected shape of every value.

import { stringify } from 'csv-stringify/sync';
import type { Integration } from '../../platforms/types.js';

/** The bulk CSV's own columns, before the integration's token fields. */
export const TEMPLATE_BASE_COLUMNS = ['companyName', 'externalId', 'platformKey', 'description', 'tags'] as const;

export function migrationTemplateCsv(integration: Integration): string {
  const header = [...TEMPLATE_BASE_COLUMNS, ...integration.tokenFields.map((f) => f.name)];
  const example = [
    'Example Trading Ltd',
    'crm-000123',
    integration.key,
    `Migrated from ${integration.name}, example row`,
    'region=eu;tier=gold',
    ...integration.tokenFields.map((f) => f.example),
  ];
  // LF line endings whatever the OS, so generated files are byte-identical everywhere.
  return stringify([header, example], { record_delimiter: 'unix' });
}
