// GET /companies/{companyId}/data/invoices/{invoiceId}/pdf: the invoice of the visible
// snapshot (the one GET …/data/invoices/{invoiceId} reads, with its 404 and 409 states)
// rendered as a PDF. The router prefers the static 'invoices' to data.ts's :dataPath and
// falls back to it for …/invoices/{id}, so the JSON record keeps its route. The record is
// read here (unless the PDF of this snapshot is cached) and drawn in a render thread
// (render-pool.ts).
import type { FastifyInstance } from 'fastify';
import type { ServiceContext } from '../context.js';
import { errors } from '../errors.js';
import { params } from '../http/body.js';
import { contentDisposition, wantsOctetStream } from '../http/download.js';
import { defineRoute } from '../http/route.js';
import { dataTypeByKey } from '../../platforms/data-types.js';
import { ownedCompany } from './companies.js';
import { readableGeneration } from './data.js';

/** invoice-{number}.pdf (the public API's name), the id when the invoice has no number. */
function fileName(invoiceNumber: string | undefined, id: string): string {
  const base = invoiceNumber !== undefined && invoiceNumber.trim() !== '' ? invoiceNumber.trim() : id;
  // Control characters and path separators have no place in a file name.
  const safe = [...base].slice(0, 100).map((char) => {
    const code = char.codePointAt(0)!;
    return code < 0x20 || (code >= 0x7f && code <= 0x9f) || char === '/' || char === '\\' ? '_' : char;
  });
  return `invoice-${safe.join('')}.pdf`;
}

export function registerInvoicePdfRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  const invoices = dataTypeByKey('invoices')!;

  defineRoute(app, '/companies/:companyId/data/invoices/:invoiceId/pdf', {
    GET: async (request, reply) => {
      const company = await ownedCompany(ctx, request);
      const generation = await readableGeneration(ctx.store, company.id, invoices);
      const { invoiceId = '' } = params(request);
      const { pdf, invoiceNumber } = await ctx.renders.invoicePdf(request.auth.client.id, { companyId: company.id, invoiceId, generation }, async () => {
        const data = await ctx.store.getRecord(company.id, invoices.key, generation, invoiceId);
        if (!data) throw errors.recordNotFound('invoices', invoiceId, company.id);
        return data;
      });
      return reply
        // The public API labels it application/octet-stream, and its SDK accepts only that.
        .type(wantsOctetStream(request) ? 'application/octet-stream' : 'application/pdf')
        .header('Vary', 'Accept')
        .header('Content-Disposition', contentDisposition(fileName(invoiceNumber, invoiceId)))
        .send(pdf);
    },
  });
}
