// The probe's SQL injection payloads, word for word: a brand-new client with no companies
// must never see another client's, and a hostile tag key is a 400, never a 500.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { companiesPage } from '../../src/service/store/sqlite/companies.js';
import { jsonPath } from '../../src/service/store/sqlite/company-fields.js';
import { listRecords } from '../../src/service/store/sqlite/datasets.js';
import { openDatabase } from '../../src/service/store/sqlite/db.js';
import { tempDir } from '../helpers/service.js';
import { expectErrorBody } from './support.js';
import { type TestService, startTestStack } from '../helpers/stack.js';

let t: TestService;
let victimKey: string;
let attackerKey: string;

beforeAll(async () => {
  t = await startTestStack('service');
  victimKey = (await t.createClient('Victim Ltd', 'Paid')).apiKey;
  attackerKey = (await t.createClient('Attacker Ltd', 'Free')).apiKey;
  for (const name of ['Victim One', 'Victim Two']) {
    const created = await t.call('POST', '/companies', { apiKey: victimKey, body: { name, tags: { region: 'eu', 'a.b': 'x' } } });
    expect(created.status, created.text).toBe(200);
  }
});

afterAll(async () => {
  await t?.stop();
});

const list = (search: string) => t.call('GET', `/companies?${search}`, { apiKey: attackerKey });

describe('GET /companies?tags=…: the tag key never reaches SQL as text', () => {
  const hostile = [
    `' || char(34)) OR 1 OR ('=x`,
    `a'=x`,
    `x') OR 1=1 --=x`,
    `") OR 1 OR ("=x`,
    `$."a" OR 1=x`,
    `a\\'=x`,
    `ferryKey') GLOB (SELECT key_hash FROM api_keys LIMIT 1) OR ('=x`,
    `a b=x`,
    `=x`.padStart(70, 'k'),
  ];
  for (const tags of hostile) {
    it(`tags=${tags} is a 400 naming the parameter`, async () => {
      const result = await list(`tags=${encodeURIComponent(tags)}`);
      expectErrorBody(result, 400);
      expect(result.text).toContain('tags');
      expect(result.text).not.toContain('Victim');
    });
  }

  it('keys with letters, digits, "_", "-" and "." still filter, and only within the caller\'s companies', async () => {
    const own = await t.call('GET', '/companies?tags=region=eu', { apiKey: victimKey });
    expect(own.status).toBe(200);
    expect(own.body.totalResults).toBe(2);
    const dotted = await t.call('GET', `/companies?tags=${encodeURIComponent('a.b=x')}`, { apiKey: victimKey });
    expect(dotted.body.totalResults).toBe(2);
    const attacker = await list('tags=region=eu');
    expect(attacker.status).toBe(200);
    expect(attacker.body.totalResults).toBe(0);
    const dashed = await list('tags=my-key_1.x=eu');
    expect(dashed.status).toBe(200);
  });

  it('a hostile value is only ever a value', async () => {
    const result = await list(`tags=region=${encodeURIComponent(`eu' OR 1 OR '`)}`);
    expect(result.status).toBe(200);
    expect(result.body.totalResults).toBe(0);
  });

  it('query-language tag paths are held to the same rule', async () => {
    const result = await list(`query=${encodeURIComponent(`tags.${'k'.repeat(70)}=x`)}`);
    expectErrorBody(result, 400);
  });
});

describe('the store itself: unsafe keys never become SQL text, plain keys keep the index', () => {
  const db = openDatabase(join(tempDir('ferry-inject-'), 'ferry.db'));
  afterAll(() => db.close());

  it.each([`a'`, `' || char(34)) OR 1 OR ('`, 'a"b', 'a b', '', 'k'.repeat(65), 'a\u0000b'])('jsonPath refuses %j', (key) => {
    expect(() => jsonPath(key)).toThrow(/Unsafe/);
    expect(() => companiesPage('c1', { page: 1, pageSize: 10 }, { key, value: 'x' })).toThrow(/Unsafe/);
  });

  it('listRecords refuses a data type that is not letters only', () => {
    expect(() => listRecords(db, 'c1', `invoices' OR 1 OR '`, 1, { page: 1, pageSize: 10 })).toThrow(/Unsafe/);
  });

  it('tags=ferryKey=… builds the very expression the migration indexed, and SQLite uses that index', () => {
    const plan = companiesPage('c1', { page: 1, pageSize: 10 }, { key: 'ferryKey', value: 'ext:1' });
    expect(plan.rowsSql).toContain(`json_extract(tags, '$.ferryKey') = ?`);
    const explain = db.prepare(`EXPLAIN QUERY PLAN ${plan.rowsSql}`).all(...plan.params, plan.limit, plan.offset)
      .map((row) => (row as { detail: string }).detail).join('\n');
    expect(explain).toContain('USING INDEX companies_client_ferry_key');
  });
});
