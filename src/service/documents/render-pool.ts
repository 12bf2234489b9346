// Invoice PDFs, drawn in a render thread (render-thread.ts) so the request thread never
// waits for one, and kept until their record changes.
//
// Renders get threads of their own, not the reader threads: a render takes seconds, and
// costly reads would wait behind it; a reader holds a SQLite connection a render does not
// need (and on PostgreSQL there are no reader threads). Clients take turns at the render
// threads as at the readers (the same ThreadPool and FairQueue). A client has at most
// MAX_RENDERS_PER_CLIENT renders waiting or running: past that a request is refused (429),
// so no client can pile up work. A request for a PDF already being drawn for the client
// waits for that render and adds none; a cached PDF needs none.
//
// Cached by client, company and invoice, with the snapshot (generation) the record was read
// from and the SHA-256 of its JSON. A visible snapshot never changes (a sync writes one of its
// own and publishes it whole: sync/run-pull.ts), so a PDF cached for the visible snapshot is
// served without reading the record again. A new snapshot has the record read: the same
// content keeps its PDF; a changed one (a sync that brought an edit) is drawn again, and its
// PDF replaces the old one. Bounded in bytes like the response cache (lib/byte-lru.ts).
import { createHash } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import { ByteLru, type CacheLimits } from '../../lib/byte-lru.js';
import { threadUrl } from '../../lib/thread-url.js';
import { errors } from '../errors.js';
import { ThreadPool } from '../read-pool/thread-pool.js';
import type { RenderedInvoice } from './render-thread.js';

/** Renders one client may have waiting or running. */
export const MAX_RENDERS_PER_CLIENT = 2;

export const DEFAULT_PDF_CACHE_LIMITS: CacheLimits = { maxBytes: 64 * 1024 * 1024, maxBytesPerClient: 16 * 1024 * 1024 };

export interface RenderPoolOptions {
  /** Render threads. */
  threads: number;
  cache?: CacheLimits;
}

/** Which invoice, and the snapshot it is read from. */
export interface InvoiceRef {
  companyId: string;
  invoiceId: string;
  generation: number;
}

export interface InvoicePdf {
  pdf: Buffer;
  /** The record's own number, for the file name. */
  invoiceNumber?: string;
}

export class RenderPool {
  private readonly threads: ThreadPool<string, RenderedInvoice>;
  private readonly cache: ByteLru<{ generation: number; hash: string; drawn: InvoicePdf }>;
  /** Renders under way, by client, company, invoice and record hash. */
  private readonly drawing = new Map<string, Promise<InvoicePdf>>();
  private renders = 0;

  constructor(options: RenderPoolOptions) {
    this.threads = new ThreadPool({
      threads: Math.max(1, options.threads),
      maxWaitingPerClient: MAX_RENDERS_PER_CLIENT,
      start: () => new Worker(threadUrl('./render-thread.js', import.meta.url)),
      // A render holds nothing to release, and may run for seconds.
      stop: (worker) => worker.terminate(),
    });
    this.cache = new ByteLru(options.cache ?? DEFAULT_PDF_CACHE_LIMITS, ({ drawn }) => drawn.pdf.length);
  }

  /**
   * The PDF of an invoice, from the cache or drawn for `client`. `readRecord` answers the
   * record's JSON text as stored (or throws its 404); it is called unless the PDF of this
   * snapshot is cached.
   */
  async invoicePdf(client: string, invoice: InvoiceRef, readRecord: () => Promise<string>): Promise<InvoicePdf> {
    const key = `${client}\n${invoice.companyId}\n${invoice.invoiceId}`;
    const cached = this.cache.get(key);
    if (cached?.generation === invoice.generation) return cached.drawn;
    const record = await readRecord();
    const hash = createHash('sha256').update(record).digest('base64url');
    // Looked up again: a render of this record may have finished while the read was awaited.
    const now = this.cache.get(key);
    if (now?.hash === hash) {
      now.generation = invoice.generation;
      return now.drawn;
    }
    const under = `${key}\n${hash}`;
    const pending = this.drawing.get(under);
    if (pending) return pending;
    if (this.threads.held(client) >= MAX_RENDERS_PER_CLIENT) throw errors.tooManyRenders(MAX_RENDERS_PER_CLIENT);
    const drawn = this.threads.run(client, record).then(({ pdf, invoiceNumber }) => {
      this.renders++;
      const made: InvoicePdf = { pdf: Buffer.from(pdf.buffer, pdf.byteOffset, pdf.byteLength), ...(invoiceNumber !== undefined ? { invoiceNumber } : {}) };
      this.cache.set(client, key, { generation: invoice.generation, hash, drawn: made });
      return made;
    });
    this.drawing.set(under, drawn);
    try {
      return await drawn;
    } finally {
      this.drawing.delete(under);
    }
  }

  /** Renders drawn so far (not served from the cache), for tests and benches. */
  rendered(): number {
    return this.renders;
  }

  /** Renders of `client` waiting or running, for tests and benches. */
  held(client: string): number {
    return this.threads.held(client);
  }

  /** Bytes of PDFs cached, overall or for one client. */
  cachedBytes(client?: string): number {
    return this.cache.size(client);
  }

  close(): Promise<void> {
    return this.threads.close();
  }
}
