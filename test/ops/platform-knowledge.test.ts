// What ferry knows of an integration whatever the target says: the bundled registry, refined
// by ferry's extension fields where a target has them; an integration it does not know is a
// row-level error that says what to do, or works with --token-fields.
import { describe, expect, it } from 'vitest';
import { RowValidator } from '../../src/ops/migrate/validate.js';
import { knowIntegration } from '../../src/ops/platform-knowledge.js';
import { integrationByKey } from '../../src/platforms/registry.js';

const xero = integrationByKey('gbol')!;

describe('knowIntegration', () => {
  it('a public record (no ferry fields) gets the bundled token fields, route and data types', () => {
    const known = knowIntegration({ key: 'gbol', name: 'Xero' });
    expect(known).toMatchObject({ key: 'gbol', name: 'Xero', migrationRoute: xero.migrationRoute, dataTypes: xero.dataTypes, known: true });
    expect(known.tokenFields.map((f) => f.name)).toEqual(xero.tokenFields.map((f) => f.name));
  });

  it('ferry\'s extension fields on the record refine the bundled knowledge', () => {
    const known = knowIntegration({ key: 'gbol', name: 'Xero', migrationRoute: 'managed', dataTypes: ['invoices'], tokenFields: [{ name: 'accessToken', required: true, description: 'd' }] });
    expect(known).toMatchObject({ migrationRoute: 'managed', dataTypes: ['invoices'], tokenFields: [{ name: 'accessToken', required: true, description: 'd' }] });
  });

  it('malformed extension fields are ignored, not trusted', () => {
    const known = knowIntegration({ key: 'gbol', migrationRoute: 'sideways', dataTypes: [1, 2], tokenFields: 'accessToken' });
    expect(known).toMatchObject({ name: xero.name, migrationRoute: xero.migrationRoute, dataTypes: xero.dataTypes, known: true });
  });

  it('an integration the bundled registry does not know: unknown, unless --token-fields names its columns', () => {
    expect(knowIntegration({ key: 'zzzz', name: 'Future Ledger' })).toMatchObject({ known: false, tokenFields: [], dataTypes: [] });
    expect(knowIntegration({ key: 'zzzz', name: 'Future Ledger' }, ['apiKey', 'orgId'])).toMatchObject({
      known: true, tokenFields: [{ name: 'apiKey', required: true }, { name: 'orgId', required: true }],
    });
  });
});

describe('a row for an integration ferry does not know', () => {
  const row = { row: 2, values: { companyName: 'Acme', externalId: 'e1', platformKey: 'zzzz', apiKey: 'k', orgId: 'o' } };
  const validator = (tokenFields?: string[]) => new RowValidator({ integrations: [knowIntegration({ key: 'zzzz', name: 'Future Ledger' }, tokenFields)] });

  it('is one row-level problem naming the platform and what to do, not a crash', () => {
    expect(validator().validate(row)).toMatchObject({
      ok: false,
      problems: [{ field: 'platformKey', message: 'this ferry does not know the token fields of Future Ledger (zzzz): name the file\'s token columns with --token-fields a,b,c, or update ferry' }],
    });
  });

  it('is valid with --token-fields, and the named columns are its tokens', () => {
    const validated = validator(['apiKey', 'orgId']).validate(row);
    expect(validated).toMatchObject({ ok: true, row: { platformKey: 'zzzz', tokens: { apiKey: 'k', orgId: 'o' } } });
  });
});
