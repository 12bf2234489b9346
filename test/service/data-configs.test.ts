// Supplemental data, custom data types and read validation results, on a fake clock with
// the sync driven by hand: configurations are checked field by field and kept per account
// and platform; the next sync adds the configured fields to each record, or fills a custom
// data type from the platform endpoint it names; each pull keeps what its checks found.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, linkedCompany, readAll, sampleInvoice, type Api, type Linked } from '../helpers/sync.js';
import { startTestStack, type Harness } from '../helpers/stack.js';

const INVOICES = 8;

describe('supplemental data, custom data types, validation results', () => {
  let h: Harness;
  let api: Api;
  let other: Api;
  let linked: Linked;

  const as = (key: string): Api => ({ ...h.api, call: (method, path, options = {}) => h.api.call(method, path, { apiKey: key, ...options }) });

  async function sync(dataType: string, client = api, company = linked): Promise<any> {
    const queued = await client.call('POST', `/companies/${company.companyId}/data/queue/${dataType}`);
    expect(queued.status, queued.text).toBe(200);
    await h.drain();
    return queued.body;
  }

  beforeAll(async () => {
    h = await startTestStack('fake-clocks');
    api = as(await createClient(h.api, h.adminKey, 'Configs Ltd', 'Paid'));
    other = as(await createClient(h.api, h.adminKey, 'Other Ltd', 'Paid'));
    linked = await linkedCompany(api, h.sandboxUrl, 'gbol', INVOICES, { seed: 5 });
  });
  afterAll(async () => {
    await h?.stop();
  });

  describe('supplemental data', () => {
    const path = '/integrations/gbol/dataTypes/invoices/supplementalDataConfig';
    const config = {
      supplementalDataConfig: {
        'ledger-extras': {
          dataSource: '/Invoices',
          pullData: { number: '$[*].invoiceNumber', firstLine: 'lineItems[0].description', customer: '$.customerRef.companyName', absent: 'no.such.field' },
          pushData: { number: 'InvoiceNumber' },
        },
      },
    };

    it('is empty until configured, then reads back as sent, for this account only', async () => {
      expect((await api.call('GET', path)).body).toEqual({ supplementalDataConfig: {} });
      const put = await api.call('PUT', path, { body: config });
      expect(put.status, put.text).toBe(200);
      expect((await api.call('GET', path)).body).toEqual(config);
      expect((await api.call('GET', path.replace('gbol', 'GBOL'))).body).toEqual(config);
      expect((await other.call('GET', path)).body).toEqual({ supplementalDataConfig: {} });
    });

    it('the next sync adds the configured fields to each record; a field the record lacks is left out', async () => {
      await sync('invoices');
      const records = await readAll(api, linked.companyId, 'invoices');
      expect(records).toHaveLength(INVOICES);
      for (const record of records) {
        expect(record.supplementalData).toEqual({
          content: {
            'ledger-extras': { number: record.invoiceNumber, firstLine: record.lineItems[0].description, customer: record.customerRef.companyName },
          },
        });
      }
    });

    it.each([
      { case: 'no supplementalDataConfig', body: {}, items: ['supplementalDataConfig'] },
      { case: 'a source that is not an object', body: { supplementalDataConfig: { a: 'x' } }, items: ['supplementalDataConfig.a'] },
      { case: 'a bad path and a bad name', body: { supplementalDataConfig: { a: { pullData: { ok: 'id', bad: 'a..b', 'no spaces': 'id' } } } }, items: ['supplementalDataConfig.a.pullData.bad', 'supplementalDataConfig.a.pullData.no spaces'] },
    ])('refuses $case: 400 naming $items', async ({ body, items }) => {
      const result = await api.call('PUT', path, { body });
      expect(result.status, result.text).toBe(400);
      expect(result.body.validation.errors.map((e: { itemId: string }) => e.itemId)).toEqual(items);
      expect((await api.call('GET', path)).body).toEqual(config);
    });

    it('a data type that takes no supplemental data is a 400; an unknown platform a 404', async () => {
      const wrong = await api.call('PUT', '/integrations/gbol/dataTypes/payments/supplementalDataConfig', { body: config });
      expect(wrong.status).toBe(400);
      expect(wrong.body.error).toContain('dataType');
      expect((await api.call('GET', '/integrations/nope/dataTypes/invoices/supplementalDataConfig')).status).toBe(404);
    });
  });

  describe('custom data types', () => {
    const identifier = 'invoice-totals';
    const configPath = `/integrations/gbol/dataTypes/custom/${identifier}`;
    const config = {
      dataSource: '/invoices?status=any',
      requiredData: { number: '$[*].invoiceNumber', total: '$[*].totalAmount', currency: '$[*].currency' },
      keyBy: ['$[*].id'],
      sourceModifiedDate: ['$[*].sourceModifiedDate'],
    };
    const refreshPath = () => `/companies/${linked.companyId}/connections/${linked.connectionId}/data/queue/custom/${identifier}`;
    const listPath = () => `/companies/${linked.companyId}/connections/${linked.connectionId}/data/custom/${identifier}`;

    it('unconfigured: GET is 404 and a refresh is 404 naming how to configure it', async () => {
      expect((await api.call('GET', configPath)).status).toBe(404);
      const refresh = await api.call('POST', refreshPath());
      expect(refresh.status).toBe(404);
      expect(refresh.body.error).toContain(`PUT /integrations/gbol/dataTypes/custom/${identifier}`);
    });

    it('refuses a source the platform does not serve and malformed mappings, naming each field', async () => {
      const result = await api.call('PUT', configPath, { body: { dataSource: '/widgets', requiredData: {}, keyBy: [] } });
      expect(result.status, result.text).toBe(400);
      expect(result.body.validation.errors.map((e: { itemId: string }) => e.itemId)).toEqual(['dataSource', 'requiredData', 'keyBy']);
      expect(result.body.validation.errors[0].message).toContain('invoices');
      expect((await api.call('PUT', '/integrations/gbol/dataTypes/custom/has%20space', { body: config })).status).toBe(400);
    });

    it('configured, refreshed per connection, then listed: one record per source record, keyed and mapped', async () => {
      const put = await api.call('PUT', configPath, { body: config });
      expect(put.status, put.text).toBe(200);
      expect(put.body).toEqual(config);
      expect((await api.call('GET', configPath)).body).toEqual(config);

      const before = await api.call('GET', listPath());
      expect(before.body).toMatchObject({ results: [], totalResults: 0 });

      const refresh = await api.call('POST', refreshPath());
      expect(refresh.status, refresh.text).toBe(200);
      expect(refresh.body).toMatchObject({ dataType: `custom/${identifier}`, status: 'Queued', connectionId: linked.connectionId });
      await h.drain();
      const pull = await api.call('GET', `/companies/${linked.companyId}/data/history/${refresh.body.id}`);
      expect(pull.body.status).toBe('Complete');

      const invoices = await readAll(api, linked.companyId, 'invoices');
      const list = await api.call('GET', `${listPath()}?pageSize=100`);
      expect(list.status, list.text).toBe(200);
      expect(list.body.totalResults).toBe(INVOICES);
      expect(list.body.results.map((r: { id: string }) => r.id).sort()).toEqual(invoices.map((i) => i.id).sort());
      for (const record of list.body.results) {
        const source = invoices.find((i) => i.id === record.id);
        expect(record.content).toEqual({ number: { value: source.invoiceNumber }, total: { value: source.totalAmount }, currency: { value: source.currency } });
        expect(record.modifiedDate.modifiedDate).toMatch(/^\d{4}-\d{2}-\d{2}T/);
        expect(record.sourceModifiedDate).toBe(source.sourceModifiedDate);
      }
      // Custom data types are not standard data types: the data status leaves them out.
      const status = await api.call('GET', `/companies/${linked.companyId}/dataStatus`);
      expect(Object.keys(status.body).some((k) => k.startsWith('custom'))).toBe(false);
      // Another account's configuration of the same name is its own.
      expect((await other.call('GET', configPath)).status).toBe(404);
    });
  });

  describe('read validation results', () => {
    it('a clean sync has none; a document whose lines do not add up is an error naming it, its subtotal a warning', async () => {
      const clean = await sync('invoices');
      const none = await api.call('GET', `/companies/${linked.companyId}/sync/${clean.id}/validation`);
      expect(none.status, none.text).toBe(200);
      expect(none.body).toEqual({ errors: [], warnings: [] });

      const customers = await readAll(api, linked.companyId, 'customers').catch(async () => {
        await sync('customers');
        return readAll(api, linked.companyId, 'customers');
      });
      const pushed = await api.call('POST', `/companies/${linked.companyId}/connections/${linked.connectionId}/push/invoices`, {
        body: sampleInvoice(customers[0].id, { invoiceNumber: 'ODD-1', subTotal: 90, totalAmount: 110, amountDue: 110 }),
      });
      expect(pushed.body.status, pushed.text).toBe('Success');
      const odd = pushed.body.data.id;

      const next = await sync('invoices');
      const found = await api.call('GET', `/companies/${linked.companyId}/sync/${next.id}/validation`);
      expect(found.body.errors).toEqual([{ ruleId: 'ferry-invoices-total', itemId: odd, validatorName: 'invoicesValidator', message: expect.stringContaining('add up to 120.00, not its totalAmount 110.00') }]);
      expect(found.body.warnings).toEqual([{ ruleId: 'ferry-invoices-subtotal', itemId: odd, validatorName: 'invoicesValidator', message: expect.stringContaining('100.00, not its subTotal 90.00') }]);
    });

    it('an unknown pull, or another company\'s, is 404', async () => {
      expect((await api.call('GET', `/companies/${linked.companyId}/sync/00000000-0000-4000-8000-000000000000/validation`)).status).toBe(404);
    });
  });
});
