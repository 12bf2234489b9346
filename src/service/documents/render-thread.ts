// A render thread: draws invoice PDFs from the records' JSON text, so neither the parse nor
// the drawing (seconds for a long invoice) runs on the request thread.
import { serveTasks } from '../read-pool/thread-tasks.js';
import { renderInvoicePdf } from './invoice-pdf.js';

export interface RenderedInvoice {
  pdf: Uint8Array;
  /** The record's own number, for the file name. */
  invoiceNumber?: string;
}

serveTasks<string, RenderedInvoice>(async (record) => {
  const invoice = JSON.parse(record) as Record<string, unknown>;
  const drawn = await renderInvoicePdf(invoice);
  // Handed over rather than copied, so it must own its memory: a small buffer may share Node's pool.
  const pdf = drawn.byteLength === drawn.buffer.byteLength ? drawn : new Uint8Array(drawn);
  return { pdf, ...(typeof invoice.invoiceNumber === 'string' ? { invoiceNumber: invoice.invoiceNumber } : {}) };
}, { transfer: ({ pdf }) => [pdf.buffer as ArrayBuffer] });
