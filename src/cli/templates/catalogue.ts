// The migration CSV templates shipped in the package (templates/migration/<key>.csv),
// read straight from disk: no service is needed. This file sits three levels below the
// package root both as src/cli/templates/catalogue.ts (vitest) and as
// dist/cli/templates/catalogue.js (the binary), so one relative URL finds them.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const TEMPLATES_DIR = fileURLToPath(new URL('../../../templates/migration/', import.meta.url));

export interface TemplateField {
  name: string;
  required: boolean;
  description: string;
}

export interface MigrationTemplate {
  key: string;
  /** The integration's name, when the registry knows the key. */
  name?: string;
  migrationRoute?: 'self-service' | 'managed';
  file: string;
  /** The file as shipped: header line and example row, LF line endings. */
  text: string;
  header: string[];
  example: Record<string, string>;
  /** The integration's token columns (the header's columns after the CSV's own ones). */
  tokenFields: TemplateField[];
}

/** Keys of every shipped template, sorted. */
export function templateKeys(dir: string = TEMPLATES_DIR): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((n) => n.endsWith('.csv')).map((n) => n.slice(0, -4)).sort();
}

export function templateFile(key: string, dir: string = TEMPLATES_DIR): string {
  return `${dir}${dir.endsWith('/') ? '' : '/'}${key}.csv`;
}

/** Reads one template; undefined when no file exists for the key. */
export async function readTemplate(key: string, dir: string = TEMPLATES_DIR): Promise<MigrationTemplate | undefined> {
  const file = templateFile(key, dir);
  if (!/^[a-z0-9-]+$/.test(key) || !existsSync(file)) return undefined;
  const text = readFileSync(file, 'utf8');
  const { parse } = await import('csv-parse/sync');
  const rows = parse(text, { bom: true, relax_column_count: true }) as string[][];
  const header = rows[0] ?? [];
  const values = rows[1] ?? [];
  const example = Object.fromEntries(header.map((column, i) => [column, values[i] ?? '']));
  const { integrationByKey } = await import('../../platforms/registry.js');
  const integration = integrationByKey(key);
  const template: MigrationTemplate = { key, file, text, header, example, tokenFields: [] };
  if (integration) {
    template.name = integration.name;
    template.migrationRoute = integration.migrationRoute;
    template.tokenFields = integration.tokenFields.map(({ name, required, description }) => ({ name, required, description }));
  }
  return template;
}

/** Every shipped template with its integration's name, sorted by key. */
export async function listTemplates(dir: string = TEMPLATES_DIR): Promise<MigrationTemplate[]> {
  const templates: MigrationTemplate[] = [];
  for (const key of templateKeys(dir)) {
    const template = await readTemplate(key, dir);
    if (template) templates.push(template);
  }
  return templates;
}
