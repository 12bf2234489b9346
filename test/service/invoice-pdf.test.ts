// GET /companies/{id}/data/invoices/{invoiceId}/pdf against the real service and sandbox
// (fake clocks, syncs driven by hand): the PDF is fetched over HTTP and opened with a real
// PDF reader (pdf.js), which must find the invoice's number, customer, total and lines.
import { CodatAccounting } from '@codat/accounting';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { getDocument, VerbosityLevel } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderInvoicePdf } from '../../src/service/documents/invoice-pdf.js';
import { MAX_RENDERS_PER_CLIENT } from '../../src/service/documents/render-pool.js';
import { basic } from '../helpers/service.js';
import { createClient, linkedCompany, readAll, waitFor, type Api } from '../helpers/sync.js';
import { type Harness, startTestStack } from '../helpers/stack.js';
import { expectErrorBody } from './support.js';

// The reader's own metrics for the 14 standard fonts, so it never has to guess them.
const STANDARD_FONTS = join(dirname(createRequire(import.meta.url).resolve('pdfjs-dist/package.json')), 'standard_fonts') + '/';

/** The PDF's page count and each page's text, one text item per line. */
async function readPdf(bytes: Uint8Array): Promise<{ pages: number; text: string }> {
  const doc = await getDocument({
    data: new Uint8Array(bytes), // the reader takes ownership of the buffer it is given
    verbosity: VerbosityLevel.ERRORS,
    standardFontDataUrl: STANDARD_FONTS,
    isEvalSupported: false,
    disableFontFace: true,
  }).promise;
  try {
    const pages: string[] = [];
    for (let n = 1; n <= doc.numPages; n++) {
      const content = await (await doc.getPage(n)).getTextContent();
      pages.push(content.items.map((item) => ('str' in item ? item.str : '')).join('\n'));
    }
    return { pages: doc.numPages, text: pages.join('\n') };
  } finally {
    await doc.destroy();
  }
}

const squash = (text: string) => text.replace(/\s+/g, ' ');
const money = (currency: string, amount: number) =>
  `${currency} ${new Intl.NumberFormat('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 }).format(amount)}`;

let h: Harness;
let api: Api;
let key: string;
let clientId: string;
let otherKey: string;
let companyId: string;
let connectionId: string;
let invoices: any[];

async function getPdf(path: string, apiKey = key, headers: Record<string, string> = {}) {
  const response = await fetch(h.baseUrl + path, { headers: { authorization: basic(apiKey), ...headers } });
  return { status: response.status, headers: response.headers, bytes: new Uint8Array(await response.arrayBuffer()) };
}

const pdfPath = (invoiceId: string, company = companyId) => `/companies/${company}/data/invoices/${encodeURIComponent(invoiceId)}/pdf`;

/** Pushes invoices to the company's platform and resyncs invoices; returns the synced records. */
async function pushAllAndSync(bodies: Array<Record<string, unknown>>): Promise<any[]> {
  const ids: string[] = [];
  for (const body of bodies) {
    const push = await api.call('POST', `/companies/${companyId}/connections/${connectionId}/push/invoices`, { body });
    expect(push.body.status, push.text).toBe('Success');
    ids.push(push.body.changes[0].recordRef.id as string);
  }
  await resync();
  return Promise.all(ids.map(async (id) => {
    const record = await api.call('GET', `/companies/${companyId}/data/invoices/${id}`);
    expect(record.status, record.text).toBe(200);
    return record.body;
  }));
}

const pushAndSync = async (body: Record<string, unknown>): Promise<any> => (await pushAllAndSync([body]))[0];

async function resync(): Promise<void> {
  expect((await api.call('POST', `/companies/${companyId}/data/queue/invoices`)).status).toBe(200);
  expect(await h.drain()).toBe(1);
}

/** An invoice of `lines` lines for the seeded customer, numbered `number`. */
function invoiceBody(number: string, lines: number, description = (n: number) => `Crossing ${n + 1} of ${lines}, vehicle deck`): Record<string, unknown> {
  const lineItems = Array.from({ length: lines }, (_, n) => ({ description: description(n), quantity: 1, unitAmount: 10, subTotal: 10, taxAmount: 2, totalAmount: 12 }));
  return {
    invoiceNumber: number, customerRef: { id: invoices[0].customerRef.id }, issueDate: '2026-11-01T00:00:00Z', dueDate: '2026-12-01T00:00:00Z',
    currency: 'GBP', status: 'Submitted', lineItems, subTotal: 10 * lines, totalTaxAmount: 2 * lines, totalAmount: 12 * lines, amountDue: 12 * lines,
  };
}

const renders = () => h.service.context.renders;

beforeAll(async () => {
  h = await startTestStack('fake-clocks');
  const client = await h.api.call('POST', '/admin/clients', { apiKey: h.adminKey, body: { name: 'Invoice PDF Ltd', plan: 'Paid' } });
  expect(client.status, client.text).toBe(201);
  ({ id: clientId, apiKey: key } = client.body);
  otherKey = await createClient(h.api, h.adminKey, 'Someone Else Ltd', 'Paid');
  api = { ...h.api, call: (method, path, options = {}) => h.api.call(method, path, { apiKey: key, ...options }) };
  ({ companyId, connectionId } = await linkedCompany(api, h.sandboxUrl, 'gbol', 12, { seed: 7 }));
  expect((await api.call('POST', `/companies/${companyId}/data/queue/invoices`)).status).toBe(200);
  expect(await h.drain()).toBe(1);
  invoices = await readAll(api, companyId, 'invoices');
  expect(invoices).toHaveLength(12);
});
afterAll(async () => {
  await h?.stop();
});

describe('the PDF of a synced invoice', () => {
  it('is a PDF with the number, dates, customer, lines and totals', async () => {
    const invoice = invoices.find((i) => i.lineItems.length > 1) ?? invoices[0];
    const result = await getPdf(pdfPath(invoice.id));
    expect(result.status).toBe(200);
    expect(result.headers.get('content-type')).toBe('application/pdf');
    expect(result.headers.get('content-disposition')).toBe(`attachment; filename="invoice-${invoice.invoiceNumber}.pdf"; filename*=UTF-8''invoice-${invoice.invoiceNumber}.pdf`);
    expect(Buffer.from(result.bytes.subarray(0, 5)).toString('latin1')).toBe('%PDF-');

    const { pages, text } = await readPdf(result.bytes);
    expect(pages).toBe(1);
    for (const expected of [
      invoice.invoiceNumber, invoice.customerRef.companyName, invoice.issueDate.slice(0, 10), invoice.dueDate.slice(0, 10), invoice.status,
      money(invoice.currency, invoice.totalAmount), money(invoice.currency, invoice.subTotal), money(invoice.currency, invoice.totalTaxAmount),
      money(invoice.currency, invoice.amountDue),
    ]) {
      expect(text).toContain(expected);
    }
    for (const line of invoice.lineItems) {
      expect(squash(text)).toContain(line.description);
      expect(text).toContain(money(invoice.currency, line.totalAmount));
    }
  });

  it('answers application/octet-stream to a caller that asks only for that (the SDK does)', async () => {
    const result = await getPdf(pdfPath(invoices[0].id), key, { accept: 'application/octet-stream' });
    expect(result.status).toBe(200);
    expect(result.headers.get('content-type')).toBe('application/octet-stream');
    expect((await readPdf(result.bytes)).text).toContain(invoices[0].invoiceNumber);
  });

  it('downloadPdf of the public accounting SDK gets it', async () => {
    const sdk = new CodatAccounting({ security: { authHeader: basic(key) }, serverURL: h.baseUrl });
    const result = await sdk.invoices.downloadPdf({ companyId, invoiceId: invoices[0].id });
    expect(result.statusCode).toBe(200);
    expect(result.contentType).toBe('application/octet-stream');
    expect((await readPdf(new Uint8Array(result.data!))).text).toContain(invoices[0].invoiceNumber);
  });

  it('leaves the JSON record route as it was, and other methods get 405', async () => {
    const record = await api.call('GET', `/companies/${companyId}/data/invoices/${invoices[0].id}`);
    expect(record.status).toBe(200);
    expect(record.body).toEqual(invoices[0]);
    const post = await api.call('POST', pdfPath(invoices[0].id));
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
  });
});

describe('long and unusual invoices', () => {
  it('a 200-line invoice with long descriptions runs over several pages, every line in it', async () => {
    const customerRef = { id: invoices[0].customerRef.id };
    const lineItems = Array.from({ length: 200 }, (_, n) => ({
      description: `Crossing ${String(n + 1).padStart(3, '0')} of 200, vehicle deck`,
      quantity: (n % 5) + 1,
      unitAmount: 12.5,
      subTotal: ((n % 5) + 1) * 12.5,
      taxAmount: 0,
      totalAmount: ((n % 5) + 1) * 12.5,
    }));
    const long = 'A long description that the renderer has to wrap over many lines of its column. '.repeat(40).trim();
    const unbroken = 'X'.repeat(300);
    lineItems[10]!.description = long;
    lineItems[20]!.description = unbroken;
    const total = lineItems.reduce((sum, line) => sum + line.totalAmount, 0);
    const invoice = await pushAndSync({
      invoiceNumber: 'LONG-200', customerRef, issueDate: '2026-11-01T00:00:00Z', dueDate: '2026-12-01T00:00:00Z', currency: 'GBP',
      status: 'Submitted', lineItems, subTotal: total, totalTaxAmount: 0, totalAmount: total, amountDue: total,
    });
    expect(invoice.lineItems).toHaveLength(200);

    const result = await getPdf(pdfPath(invoice.id));
    expect(result.status).toBe(200);
    const { pages, text } = await readPdf(result.bytes);
    expect(pages).toBeGreaterThan(1);
    const flat = squash(text);
    for (const line of lineItems.filter((_, n) => n !== 10 && n !== 20)) expect(flat).toContain(line.description);
    // Rows taller than a page go on over the next: the other cells, the footer and the
    // repeated table header come between the two halves of the long description.
    const between = /\d+ GBP [\d.,]+ GBP [\d.,]+ GBP [\d.,]+ |Invoice LONG-200 · page \d+ of \d+ |Description Quantity Unit amount Tax Total /g;
    expect(flat.replace(between, '')).toContain(long);
    expect(text.replace(/\s+/g, '')).toContain(unbroken);
    expect(text).toContain(money('GBP', total));
    expect(text).toContain(`page ${pages} of ${pages}`);
  });

  it('text the standard fonts cannot show becomes ?, and the rest is kept', async () => {
    const invoice = await pushAndSync({
      invoiceNumber: 'INTL/Ø-1', customerRef: { id: invoices[0].customerRef.id, companyName: 'Zoë & Søn — 株式会社' },
      issueDate: '2026-11-01T00:00:00Z', currency: 'EUR', status: 'Draft',
      lineItems: [{ description: 'Überfahrt 🚢 nach Göteborg – €', unitAmount: 5, quantity: 1, subTotal: 5, taxAmount: 1, totalAmount: 6 }],
      subTotal: 5, totalTaxAmount: 1, totalAmount: 6, amountDue: 6,
    });
    const result = await getPdf(pdfPath(invoice.id));
    expect(result.status).toBe(200);
    const { pages, text } = await readPdf(result.bytes);
    expect(pages).toBe(1);
    expect(result.headers.get('content-disposition')).toBe(`attachment; filename="invoice-INTL__-1.pdf"; filename*=UTF-8''invoice-INTL_%C3%98-1.pdf`);
    expect(text).toContain('INTL/Ø-1');
    expect(text).toContain('Zoë & Søn — ????');
    expect(text).toContain('Überfahrt ? nach Göteborg – €');
    expect(text).toContain('EUR 6.00');
  });

  it('renders a record with fields missing or of the wrong type', async () => {
    const bytes = await renderInvoicePdf({ id: 'x-1', lineItems: [null, { description: 42, quantity: 'two' }], totalAmount: 'lots', customerRef: 7 });
    const { pages, text } = await readPdf(bytes);
    expect(pages).toBe(1);
    expect(text).toContain('x-1');
    expect(text).toContain('42');
  });

  it('carries an overlong customer name onto the next page, and survives text that is not even valid UTF-16', async () => {
    const name = Array.from({ length: 700 }, (_, n) => `Name${n}`).join(' ');
    const bytes = await renderInvoicePdf({ invoiceNumber: '株式会社-\uD800-7', customerRef: { companyName: name }, currency: 'JPY', totalAmount: 1e9, lineItems: [] });
    const { pages, text } = await readPdf(bytes);
    expect(pages).toBeGreaterThan(1);
    expect(squash(text).replace(/Invoice \S+ · page \d+ of \d+ /g, '')).toContain(name);
    expect(text).toContain('????-?-7');
    expect(text).toContain('JPY 1,000,000,000.00');
  });
});

describe('rendering in a thread, a few at a time per client, and reused until the record changes', () => {
  // Invoices of 5,000 lines: each takes a render thread about a second or more.
  let long: any[];
  let small: any;
  let once: any;
  let otherCompanyId: string;
  beforeAll(async () => {
    [small, once, ...long] = await pushAllAndSync([invoiceBody('SMALL-1', 3), invoiceBody('ONCE-1', 4), ...['LONG-A', 'LONG-B', 'LONG-C'].map((number) => invoiceBody(number, 5000))]);
    const other = await api.call('POST', '/companies', { apiKey: otherKey, body: { name: 'Bystander Co' } });
    expect(other.status, other.text).toBe(200);
    otherCompanyId = other.body.id;
  });

  it('another client is answered while a long invoice renders, and the PDF has every line', async () => {
    const rendered = renders().rendered();
    let pdfSettled = false;
    const pdf = getPdf(pdfPath(long[2].id)).finally(() => {
      pdfSettled = true;
    });
    await waitFor('the render to be under way', async () => renders().held(clientId) === 1, 20_000, 5);
    const other = await api.call('GET', `/companies/${otherCompanyId}`, { apiKey: otherKey });
    expect(other.status, other.text).toBe(200);
    expect(other.body.name).toBe('Bystander Co');
    expect(pdfSettled).toBe(false);

    const result = await pdf;
    expect(result.status).toBe(200);
    expect(renders().rendered()).toBe(rendered + 1);
    expect(result.headers.get('content-disposition')).toContain('invoice-LONG-C.pdf');
    const { pages, text } = await readPdf(result.bytes);
    expect(pages).toBeGreaterThan(50);
    expect(text).toContain('Crossing 1 of 5000, vehicle deck');
    expect(text).toContain('Crossing 5000 of 5000, vehicle deck');
    expect(text).toContain(money('GBP', 60_000));
  });

  it(`a client has at most ${MAX_RENDERS_PER_CLIENT} renders under way: the next gets 429 with Retry-After; the same PDF again is no new render`, async () => {
    const rendered = renders().rendered();
    const first = getPdf(pdfPath(long[0].id));
    const second = getPdf(pdfPath(long[1].id));
    await waitFor('both renders to be queued', async () => renders().held(clientId) === 2, 20_000, 5);
    const refused = await api.call('GET', pdfPath(small.id));
    expectErrorBody(refused, 429, 'Too many PDFs being rendered for this client: at most 2 at once. Retry when one has been answered.');
    expect(refused.headers.get('retry-after')).toBe('2');
    // Another client is not held to this client's renders.
    const theirs = await api.call('GET', `/companies/${otherCompanyId}`, { apiKey: otherKey });
    expect(theirs.status).toBe(200);
    const again = getPdf(pdfPath(long[0].id));

    const answered = await Promise.all([first, second, again]);
    expect(answered.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(Buffer.from(answered[2]!.bytes).equals(Buffer.from(answered[0]!.bytes))).toBe(true);
    expect(renders().rendered()).toBe(rendered + 2);
    expect((await getPdf(pdfPath(small.id))).status).toBe(200);
    expect(renders().rendered()).toBe(rendered + 3);
  });

  it('renders an invoice once for repeated and simultaneous requests', async () => {
    const rendered = renders().rendered();
    const invoice = once;
    const together = await Promise.all(Array.from({ length: 5 }, () => getPdf(pdfPath(invoice.id))));
    expect(together.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    const later = await getPdf(pdfPath(invoice.id), key, { accept: 'application/octet-stream' });
    expect(later.status).toBe(200);
    expect(later.headers.get('content-type')).toBe('application/octet-stream');
    expect(renders().rendered()).toBe(rendered + 1);
    for (const result of [...together, later]) expect(Buffer.from(result.bytes).equals(Buffer.from(together[0]!.bytes))).toBe(true);
    expect((await readPdf(later.bytes)).text).toContain(invoice.invoiceNumber);
  });

  it('renders again once the record changed, and not for a sync that changed nothing', async () => {
    const invoice = await pushAndSync(invoiceBody('EDIT-1', 2, (n) => `Before the edit, line ${n + 1}`));
    const rendered = renders().rendered();
    const before = await getPdf(pdfPath(invoice.id));
    expect((await readPdf(before.bytes)).text).toContain('Before the edit, line 2');
    expect(renders().rendered()).toBe(rendered + 1);

    // A new snapshot with the same record: the cached PDF still serves.
    await resync();
    expect(Buffer.from((await getPdf(pdfPath(invoice.id))).bytes).equals(Buffer.from(before.bytes))).toBe(true);
    expect(renders().rendered()).toBe(rendered + 1);

    const edited = await api.call('PUT', `/companies/${companyId}/connections/${connectionId}/push/invoices/${invoice.id}?forceUpdate=true`, {
      body: invoiceBody('EDIT-1', 2, (n) => `After the edit, line ${n + 1}`),
    });
    expect(edited.body.status, edited.text).toBe('Success');
    await resync();
    const after = await getPdf(pdfPath(invoice.id));
    expect(after.status).toBe(200);
    expect(renders().rendered()).toBe(rendered + 2);
    const { text } = await readPdf(after.bytes);
    expect(text).toContain('After the edit, line 2');
    expect(text).not.toContain('Before the edit');
  });
});

describe('errors, as reading the invoice', () => {
  it('an unknown invoice is 404 naming it', async () => {
    const result = await api.call('GET', pdfPath('no-such-invoice'));
    expect(result.status, result.text).toBe(404);
    expect(result.body.error).toContain('no-such-invoice');
  });

  it('invoices not synced yet are 409', async () => {
    const fresh = await linkedCompany(api, h.sandboxUrl, 'gbol', 3, { seed: 8 });
    const result = await api.call('GET', pdfPath(invoices[0].id, fresh.companyId));
    expect(result.status, result.text).toBe(409);
    expect(result.body.error).toContain('has not been requested');
  });

  it("another client's company is refused as its JSON invoice is", async () => {
    const pdf = await api.call('GET', pdfPath(invoices[0].id), { apiKey: otherKey });
    const json = await api.call('GET', `/companies/${companyId}/data/invoices/${invoices[0].id}`, { apiKey: otherKey });
    expect(pdf.status, pdf.text).toBe(403);
    expect(json.status).toBe(403);
    expect((await api.call('GET', pdfPath(invoices[0].id, '00000000-0000-4000-8000-000000000000'))).status).toBe(404);
  });
});
