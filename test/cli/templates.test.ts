// `ferry templates list|show`: the shipped CSV files, read with no service at all, in
// every output mode, in-process (from src/). The binary (from dist/, from any working
// directory) is in binary.test.ts.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { migrationTemplateCsv } from '../../src/service/integrations/templates.js';
import { INTEGRATIONS, integrationByKey } from '../../src/platforms/registry.js';
import { closeMatches } from '../../src/cli/suggest.js';
import { ferry } from '../helpers/in-process.js';
import { tempDir } from '../helpers/service.js';

const TEMPLATES = fileURLToPath(new URL('../../templates/migration/', import.meta.url));
const template = (key: string) => readFileSync(join(TEMPLATES, `${key}.csv`), 'utf8');

/** A data dir that must never be created: proof the embedded service did not start. */
function untouchedDataDir(): string[] {
  return ['--data-dir', join(tempDir(), 'never-created')];
}

describe('ferry templates (in-process)', () => {
  it('list, piped: one line per template with key, name, route and token fields', async () => {
    const args = untouchedDataDir();
    const result = await ferry([...args, 'templates', 'list']);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(existsSync(args[1]!)).toBe(false);
    const lines = result.stdout.trim().split('\n').map((l) => l.split('\t'));
    expect(lines.map((l) => l[0])).toEqual(INTEGRATIONS.map((i) => i.key).sort());
    expect(lines).toContainEqual(['gbol', 'Xero', 'self-service', 'accessToken,refreshToken,tenantId,expiresAt']);
    expect(lines).toContainEqual(['qhyg', 'QuickBooks Online', 'managed', expect.stringContaining('realmId')]);
  });

  it('list on a terminal: a table and where the files are', async () => {
    const result = await ferry([...untouchedDataDir(), 'templates', 'list'], { tty: true });
    expect(result.code).toBe(0);
    expect(result.stdout.split('\n')[0]).toMatch(/^KEY\s+NAME\s+ROUTE\s+TOKEN FIELDS$/);
    expect(result.stderr).toContain(`${INTEGRATIONS.length} templates in ${TEMPLATES}`);
    expect(result.stderr).not.toContain('embedded');
  });

  it('list --json: key, name, route, file, columns and token fields', async () => {
    const result = await ferry(['--json', ...untouchedDataDir(), 'templates', 'list']);
    expect(result.code).toBe(0);
    const list = JSON.parse(result.stdout);
    const gbol = list.find((t: { key: string }) => t.key === 'gbol');
    expect(gbol).toEqual({
      key: 'gbol', name: 'Xero', migrationRoute: 'self-service', file: join(TEMPLATES, 'gbol.csv'),
      columns: ['companyName', 'externalId', 'platformKey', 'description', 'tags', 'accessToken', 'refreshToken', 'tenantId', 'expiresAt'],
      tokenFields: integrationByKey('gbol')!.tokenFields.map(({ name, required, description }) => ({ name, required, description })),
    });
  });

  it('show prints the shipped file byte for byte on stdout, notes on stderr', async () => {
    const args = untouchedDataDir();
    const result = await ferry([...args, 'templates', 'show', 'gbol']);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(template('gbol'));
    expect(result.stdout).toBe(migrationTemplateCsv(integrationByKey('gbol')!));
    expect(result.stderr).toContain('Xero token columns: accessToken, refreshToken, tenantId (required); expiresAt (optional).');
    expect(result.stderr).toContain('ferry migrate tokens');
    expect(existsSync(args[1]!)).toBe(false);
    const tty = await ferry(['templates', 'show', 'GBOL'], { tty: true });
    expect(tty.stdout).toBe(template('gbol'));
    const quiet = await ferry(['-q', 'templates', 'show', 'gbol']);
    expect(quiet.stderr).toBe('');
  });

  it('show of a managed integration says who migrates it', async () => {
    const result = await ferry(['templates', 'show', 'qhyg']);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('QuickBooks Online is a managed migration');
  });

  it('show --json: header, example row by column, token fields', async () => {
    const result = await ferry(['--json', 'templates', 'show', 'akxx']);
    expect(result.code).toBe(0);
    const shown = JSON.parse(result.stdout);
    expect(shown).toMatchObject({ key: 'akxx', name: 'Oracle NetSuite', migrationRoute: 'self-service', file: join(TEMPLATES, 'akxx.csv') });
    expect(shown.header.slice(0, 5)).toEqual(['companyName', 'externalId', 'platformKey', 'description', 'tags']);
    expect(shown.example).toMatchObject({ platformKey: 'akxx', description: 'Migrated from Oracle NetSuite, example row', accountId: '1234567_SB1' });
    expect(shown.tokenFields.map((f: { name: string }) => f.name)).toEqual(shown.header.slice(5));
  });

  it('an unknown key is a usage error listing close matches', async () => {
    const byName = await ferry(['templates', 'show', 'xero']);
    expect(byName.code).toBe(2);
    expect(byName.stdout).toBe('');
    expect(byName.stderr).toContain('error: No migration template for "xero".');
    expect(byName.stderr).toContain('hint: Did you mean gbol (Xero)? Every key: ferry templates list');
    const typo = await ferry(['templates', 'show', 'gbl']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('gbol (Xero)');
    const quickbooks = await ferry(['templates', 'show', 'quickbooks']);
    expect(quickbooks.stderr).toContain('qhyg (QuickBooks Online)');
    const nothing = await ferry(['--json', 'templates', 'show', 'zzzzzzzz']);
    expect(nothing.code).toBe(2);
    expect(JSON.parse(nothing.stderr).error).toEqual({ message: 'No migration template for "zzzzzzzz".', exitCode: 2, hint: 'Every key: ferry templates list' });
  });

  it('a key is never a path', async () => {
    for (const key of ['../migration/gbol', '/etc/passwd', 'gbol.csv']) {
      const result = await ferry(['templates', 'show', key]);
      expect(result.code, key).toBe(2);
      expect(result.stdout).toBe('');
    }
  });

  it('close matches: keys within two edits, names by word or substring', () => {
    const candidates = INTEGRATIONS.map(({ key, name }) => ({ key, name }));
    expect(closeMatches('gbol', candidates)[0]!.key).toBe('gbol');
    expect(closeMatches('netsuite', candidates).map((c) => c.key)).toContain('akxx');
    expect(closeMatches('sage', candidates).length).toBeGreaterThan(0);
    expect(closeMatches('', candidates)).toEqual([]);
  });
});
