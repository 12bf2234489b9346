// Writes templates/migration/<key>.csv for every integration. The directory belongs
// to the generator: CSV files of integrations no longer in the registry are removed,
// so a rerun always leaves it exactly in step with the registry.

import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { INTEGRATIONS } from '../../platforms/registry.js';
import { migrationTemplateCsv } from './templates.js';

/** Writes one template per integration into `dir` and returns the written paths. */
export function writeMigrationTemplates(dir: string): string[] {
  mkdirSync(dir, { recursive: true });
  const wanted = new Set(INTEGRATIONS.map((i) => `${i.key}.csv`));
  for (const name of readdirSync(dir)) {
    if (name.endsWith('.csv') && !wanted.has(name)) rmSync(join(dir, name));
  }
  return INTEGRATIONS.map((integration) => {
    const path = join(dir, `${integration.key}.csv`);
    writeFileSync(path, migrationTemplateCsv(integration));
    return path;
  });
}
