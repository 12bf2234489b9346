import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DATA_TYPES, dataTypeByKey, dataTypeByPath } from '../src/platforms/data-types.js';
import { INTEGRATIONS, integrationByKey, integrationId } from '../src/platforms/registry.js';
import { migrationTemplateCsv } from '../src/service/integrations/templates.js';
import { writeMigrationTemplates } from '../src/service/integrations/write-templates.js';

const TEMPLATE_DIR = fileURLToPath(new URL('../templates/migration/', import.meta.url));
const REGENERATE =
  'Migration templates are out of step with src/service/integrations/registry.ts. ' +
  'Run `npm run build && npm run templates` (or `UPDATE_TEMPLATES=1 npx vitest run test/integrations.test.ts`) and commit templates/migration/.';
const MANAGED = ['FreeAgent', 'FreshBooks', 'QuickBooks Online', 'Shopify', 'Wave', 'Zoho Books'];
// The bulk CSV's own columns; a token field with one of these names would be ambiguous.
const CSV_COLUMNS = ['companyName', 'companyId', 'platformKey', 'externalId', 'connectionId', 'description', 'tags'];

describe('data types', () => {
  it('has the contract keys, read where the public API reads them', () => {
    for (const key of ['invoices', 'bills', 'customers', 'suppliers', 'payments', 'billPayments', 'creditNotes', 'journalEntries', 'items', 'taxRates']) {
      expect(dataTypeByKey(key)?.path).toBe(key);
    }
    expect(dataTypeByKey('chartOfAccounts')?.path).toBe('accounts');
    expect(dataTypeByKey('company')?.path).toBe('info');
    expect(dataTypeByPath('accounts')?.key).toBe('chartOfAccounts');
    expect(dataTypeByPath('info')?.key).toBe('company');
    expect(dataTypeByPath('chartOfAccounts')).toBeUndefined();
    for (const key of ['invoices', 'customers', 'suppliers', 'bills']) expect(dataTypeByKey(key)?.pushable).toBe(true);
  });

  it('has unique keys and paths', () => {
    expect(new Set(DATA_TYPES.map((t) => t.key)).size).toBe(DATA_TYPES.length);
    expect(new Set(DATA_TYPES.map((t) => t.path)).size).toBe(DATA_TYPES.length);
  });
});

describe('integration registry', () => {
  it('has the self-service and managed routes the contract names', () => {
    expect(INTEGRATIONS.length).toBeGreaterThanOrEqual(26);
    expect(INTEGRATIONS.filter((i) => i.migrationRoute === 'self-service').length).toBeGreaterThanOrEqual(20);
    const managed = INTEGRATIONS.filter((i) => i.migrationRoute === 'managed').map((i) => i.name);
    expect(managed.sort()).toEqual(MANAGED);
  });

  it('has unique four-letter keys and unique names', () => {
    for (const i of INTEGRATIONS) expect(i.key).toMatch(/^[a-z]{4}$/);
    expect(new Set(INTEGRATIONS.map((i) => i.key)).size).toBe(INTEGRATIONS.length);
    expect(new Set(INTEGRATIONS.map((i) => i.name)).size).toBe(INTEGRATIONS.length);
  });

  it('uses the public platform keys', () => {
    expect(integrationByKey('gbol')?.name).toBe('Xero');
    expect(integrationByKey('qhyg')?.name).toBe('QuickBooks Online');
    expect(integrationByKey('knfz')?.name).toBe('Sage Intacct');
    expect(integrationByKey('akxx')?.name).toBe('Oracle NetSuite');
    expect(integrationByKey('fbrh')?.name).toBe('FreeAgent');
    expect(integrationByKey('zzzz')).toBeUndefined();
  });

  it('lists only known data types, once each; accounting platforms all support invoices', () => {
    for (const i of INTEGRATIONS) {
      expect(i.dataTypes.length, i.key).toBeGreaterThan(0);
      expect(new Set(i.dataTypes).size, i.key).toBe(i.dataTypes.length);
      for (const t of i.dataTypes) expect(dataTypeByKey(t), `${i.key}: ${t}`).toBeDefined();
      if (i.sourceType === 'Accounting') expect(i.dataTypes, i.key).toContain('invoices');
    }
    // Some platforms must lack a type, or the "not supported" path is never exercised.
    expect(INTEGRATIONS.some((i) => i.sourceType === 'Accounting' && !i.dataTypes.includes('journalEntries'))).toBe(true);
  });

  it('has well-formed token fields that never clash with the bulk CSV columns', () => {
    const reserved = new Set(CSV_COLUMNS.map((c) => c.toLowerCase()));
    for (const i of INTEGRATIONS) {
      expect(i.tokenFields.length, i.key).toBeGreaterThanOrEqual(2);
      expect(i.tokenFields.some((f) => f.required), i.key).toBe(true);
      // Header names are matched case-insensitively, so uniqueness must hold that way too.
      expect(new Set(i.tokenFields.map((f) => f.name.toLowerCase())).size, i.key).toBe(i.tokenFields.length);
      for (const f of i.tokenFields) {
        expect(f.name, i.key).toMatch(/^[a-z][a-zA-Z0-9]*$/);
        expect(reserved.has(f.name.toLowerCase()), `${i.key}: ${f.name}`).toBe(false);
        expect(f.description.trim(), `${i.key}: ${f.name}`).not.toBe('');
        expect(f.description, `${i.key}: ${f.name}`).not.toMatch(/\n/);
        expect(f.example.trim(), `${i.key}: ${f.name}`).not.toBe('');
      }
    }
  });

  it('derives stable, distinct v4-shaped integration ids', () => {
    const ids = INTEGRATIONS.map((i) => integrationId(i.key));
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set(ids).size).toBe(ids.length);
    expect(integrationId('gbol')).toBe(integrationId('gbol'));
  });
});

describe('migration templates', () => {
  it('quotes values and ends with a newline', () => {
    const xero = integrationByKey('gbol');
    if (!xero) throw new Error('Xero missing');
    const lines = migrationTemplateCsv(xero).split('\n');
    expect(lines[0]).toBe('companyName,externalId,platformKey,description,tags,accessToken,refreshToken,tenantId,expiresAt');
    expect(lines[1]).toContain(',gbol,"Migrated from Xero, example row",region=eu;tier=gold,');
    expect(lines).toHaveLength(3);
    expect(lines[2]).toBe('');
  });

  // Set UPDATE_TEMPLATES=1 to rewrite the files instead of checking them.
  if (process.env.UPDATE_TEMPLATES === '1') {
    it('rewrites templates/migration/', () => {
      expect(writeMigrationTemplates(TEMPLATE_DIR)).toHaveLength(INTEGRATIONS.length);
    });
  }

  it('templates/migration/ is in step with the registry', () => {
    for (const i of INTEGRATIONS) {
      const path = join(TEMPLATE_DIR, `${i.key}.csv`);
      expect(existsSync(path), `${path} is missing. ${REGENERATE}`).toBe(true);
      expect(readFileSync(path, 'utf8'), `${path} is stale. ${REGENERATE}`).toBe(migrationTemplateCsv(i));
    }
    const expected = new Set(INTEGRATIONS.map((i) => `${i.key}.csv`));
    const stray = readdirSync(TEMPLATE_DIR).filter((name) => name.endsWith('.csv') && !expected.has(name));
    expect(stray, `Stray templates with no integration. ${REGENERATE}`).toEqual([]);
  });
});
