// Paths the public API has and ferry answered 404 to: pushes by the public key of the
// chart of accounts (push/accounts), and the data types read per connection. Also the
// branding images, which an <img> fetches without a key.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type Harness } from '../helpers/stack.js';
import { linkedCompany, readAll, type Linked } from '../helpers/sync.js';

let h: Harness;
let linked: Linked;

beforeAll(async () => {
  h = await startTestStack('fake-clocks');
  linked = await linkedCompany(h.api, h.sandboxUrl, 'gbol', 3);
  expect((await h.api.call('POST', `/companies/${linked.companyId}/data/all`)).status).toBe(204);
  await h.drain();
});
afterAll(async () => h?.stop());

describe('connection-scoped data paths', () => {
  it.each(['bankAccounts', 'accountTransactions'])('%s: the list and one record, as the company path has them', async (dataType) => {
    const base = `/companies/${linked.companyId}/connections/${linked.connectionId}/data/${dataType}`;
    const page = await h.api.call('GET', `${base}?pageSize=5000`);
    expect(page.status, page.text).toBe(200);
    const all = await readAll(h.api, linked.companyId, dataType);
    expect(page.body.results).toEqual(all);
    expect(page.body.totalResults).toBe(all.length);
    const one = await h.api.call('GET', `${base}/${encodeURIComponent(all[0].id)}`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual(all[0]);
    expect((await h.api.call('GET', `${base}/no-such-record`)).status).toBe(404);
  });

  it('a data type the public API reads per company is 404 there, naming the company path', async () => {
    const wrong = await h.api.call('GET', `/companies/${linked.companyId}/connections/${linked.connectionId}/data/invoices`);
    expect(wrong.status).toBe(404);
    expect(wrong.body.error).toBe(`invoices is read per company: GET /companies/${linked.companyId}/data/invoices.`);
  });

  it('another client\'s connection is not readable', async () => {
    const other = await h.api.call('POST', '/admin/clients', { body: { name: 'Other Ltd', plan: 'Paid' } });
    const read = await h.api.call('GET', `/companies/${linked.companyId}/connections/${linked.connectionId}/data/bankAccounts`, { apiKey: other.body.apiKey });
    expect(read.status).toBe(403);
  });
});

describe('push by the public key of the chart of accounts', () => {
  it('push/accounts creates a chartOfAccounts push operation, as push/chartOfAccounts does', async () => {
    const account = { name: 'Ferry fares', nominalCode: '4100', type: 'Income', currency: 'GBP' };
    for (const path of ['accounts', 'chartOfAccounts']) {
      const push = await h.api.call('POST', `/companies/${linked.companyId}/connections/${linked.connectionId}/push/${path}`, { body: account });
      expect(push.status, push.text).toBeLessThan(300);
      expect(push.body).toMatchObject({ dataType: 'chartOfAccounts', companyId: linked.companyId });
    }
  });
});

describe('branding images', () => {
  it('are served without a key, as SVG; an unknown image is 404', async () => {
    const image = await fetch(`${h.baseUrl}/branding/gbol/logo-square.svg`);
    expect(image.status).toBe(200);
    expect(image.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
    expect(await image.text()).toMatch(/^<svg [^>]*aria-label="X"/);
    expect((await fetch(`${h.baseUrl}/branding/gbol/logo.png`)).status).toBe(404);
    expect((await fetch(`${h.baseUrl}/branding/zzzz/logo-full.svg`)).status).toBe(404);
    // Nothing else is open: the same host still wants a key everywhere else.
    expect((await fetch(`${h.baseUrl}/integrations/gbol/branding`)).status).toBe(401);
  });
});
