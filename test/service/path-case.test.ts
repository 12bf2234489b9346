// Path words match in any case, as the public API's do (an earlier published document, and
// the earlier "common" SDK built from it, spell `/integrations/{key}/datatypes/…`), while
// identifiers and keys in the path stay exactly as sent.
import { CodatCommon } from '@codat/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestService } from '../helpers/stack.js';
import { basic } from '../helpers/service.js';
import { expectErrorBody } from './support.js';

let t: TestService;
let key: string;

beforeAll(async () => {
  t = await startTestStack('service');
  key = (await t.createClient('Path Case Ltd', 'Paid')).apiKey;
});
afterAll(async () => t?.stop());

const call = (method: string, path: string, body?: unknown) => t.call(method, path, { apiKey: key, ...(body === undefined ? {} : { body }) });

describe('path words in any case', () => {
  it('GET /INTEGRATIONS/gbol answers as /integrations/gbol', async () => {
    const canonical = await call('GET', '/integrations/gbol');
    for (const path of ['/INTEGRATIONS/gbol', '/Integrations/GBOL', '/integrations/gbol/']) {
      const other = await call('GET', path);
      expect(other.status, path).toBe(200);
      expect(other.body, path).toEqual(canonical.body);
    }
  });

  it('the earlier common SDK configures supplemental data at /integrations/gbol/datatypes/customers/…, read back at the current spelling', async () => {
    const sdk = new CodatCommon({ security: { authHeader: basic(key) }, serverURL: t.baseUrl });
    const config = { supplementalDataConfig: { extras: { dataSource: '/customers', pullData: { code: '$[*].id' } } } };
    const put = await sdk.supplementalData.configure({ platformKey: 'gbol', dataType: 'customers' as never, supplementalDataConfiguration: config });
    expect(put.statusCode).toBe(200);
    expect(put.rawResponse?.config.url).toMatch(/\/integrations\/gbol\/datatypes\/customers\/supplementalDataConfig$/);
    expect((await call('GET', '/integrations/gbol/dataTypes/customers/supplementalDataConfig')).body).toEqual(config);
    const read = await sdk.supplementalData.getConfiguration({ platformKey: 'gbol', dataType: 'customers' as never });
    expect(read.statusCode).toBe(200);
    expect(read.supplementalDataConfiguration?.supplementalDataConfig?.extras?.pullData).toEqual({ code: '$[*].id' });
  });

  it('identifiers stay as sent: a company id in another case is another id (404), a data type key in another case is not one (400)', async () => {
    const company = (await call('POST', '/companies', { name: 'Cased Ltd' })).body;
    expect((await call('GET', `/COMPANIES/${company.id}`)).body).toMatchObject({ id: company.id, name: 'Cased Ltd' });
    expectErrorBody(await call('GET', `/companies/${company.id.toUpperCase()}`), 404, `Company ${company.id.toUpperCase()} not found.`);
    const wrongType = await call('GET', '/integrations/gbol/dataTypes/Customers/supplementalDataConfig');
    expectErrorBody(wrongType, 400);
    expect(wrongType.body.validation.errors[0].itemId).toBe('dataType');
  });

  it('a known path in another case with a method it lacks is 405; an unknown route is 404 naming the path as sent', async () => {
    const wrongMethod = await call('DELETE', '/PROFILE');
    expectErrorBody(wrongMethod, 405);
    expect(wrongMethod.headers.get('allow')).toBe('GET, PUT, HEAD');
    expectErrorBody(await call('GET', '/Nowhere/At/All'), 404, 'No route GET /Nowhere/At/All.');
  });

  it('branding images need no key in any case, and other routes still do', async () => {
    const image = await fetch(`${t.baseUrl}/BRANDING/gbol/logo-full.svg`);
    expect(image.status).toBe(200);
    expect(image.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
    expect((await fetch(`${t.baseUrl}/Companies`)).status).toBe(401);
  });
});
