// One page of a data set as the service sent it: the envelope's fields, and each record of
// `results` as a byte range of the response's chunks (as they came off the socket, never
// joined into one buffer), found by a scan of the JSON structure (page-scan.ts) rather than
// by parsing it into objects. ndjson and json exports copy those bytes through as they are
// (no JSON.parse, no JSON.stringify, no object per record), which keeps an export fast and
// its memory flat. CSV, --state and the fallback parse records one at a time. A page the
// scan cannot split safely is parsed whole instead, and its records are written back with
// JSON.stringify: slower, same values.
import { createHash } from 'node:crypto';
import type { Json } from './flatten.js';
import { scanPage } from './page-scan.js';

export interface PageMeta {
  totalResults: number;
  pageNumber?: number;
  pageSize?: number;
  next?: string;
}

export interface PageRecords {
  readonly count: number;
  /** Bytes of the record's JSON text (one line), or undefined when the page was parsed whole. */
  byteLength(i: number): number | undefined;
  /** Copies the record's bytes into `target` at `at` (a scanned page only); returns the bytes copied. */
  copy(i: number, target: Buffer, at: number): number;
  /** The record's bytes as a new Buffer (a scanned page only; for tests and diagnostics). */
  bytes(i: number): Buffer | undefined;
  /** The record as an object (parsed on demand from its bytes; call it once per record). */
  object(i: number): Json;
  /** Does the record have a top-level `companyId` field of its own? */
  ownsCompanyId(i: number): boolean;
  /**
   * When every record follows the previous one after a single byte (the `,` of compact
   * JSON), overwrites those bytes with `separator` in the response itself and returns the
   * slices from the first record's start to the last one's end: every record, one per line,
   * with nothing copied. Otherwise (or for a parsed page) undefined, and nothing is changed.
   */
  joinInPlace(separator: number): Buffer[] | undefined;
  /** A digest of the records as sent (call it before joinInPlace): two reads of a page hold the same records if and only if theirs agree. */
  digest(): string;
}

export interface ReadPage {
  meta: PageMeta;
  records: PageRecords;
  /** The records were split out of the bytes (true) or the page was parsed whole (false). */
  scanned: boolean;
}

/** Byte ranges of a body held as chunks, as slices (no copy). */
class Chunks {
  private readonly offsets: number[] = [];
  readonly length: number;

  constructor(private readonly chunks: readonly Buffer[]) {
    let offset = 0;
    for (const chunk of chunks) {
      this.offsets.push(offset);
      offset += chunk.length;
    }
    this.length = offset;
  }

  /** The chunk holding byte `at` (binary search). */
  private find(at: number): number {
    let lo = 0;
    let hi = this.offsets.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((this.offsets[mid] as number) <= at) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** Sets the byte at `at`. */
  set(at: number, value: number): void {
    const k = this.find(at);
    (this.chunks[k] as Buffer)[at - (this.offsets[k] as number)] = value;
  }

  /** Copies bytes [start, end) into target at `at`; returns the count. */
  copy(start: number, end: number, target: Buffer, at: number): number {
    let k = this.find(start);
    let written = 0;
    while (start < end) {
      const chunk = this.chunks[k] as Buffer;
      const offset = this.offsets[k] as number;
      const to = Math.min(chunk.length, end - offset);
      written += chunk.copy(target, at + written, start - offset, to);
      start = offset + to;
      k += 1;
    }
    return written;
  }

  slices(start: number, end: number): Buffer[] {
    const out: Buffer[] = [];
    for (let k = this.find(start); k < this.chunks.length && start < end; k++) {
      const chunk = this.chunks[k] as Buffer;
      const offset = this.offsets[k] as number;
      const from = start - offset;
      const to = Math.min(chunk.length, end - offset);
      out.push(chunk.subarray(from, to));
      start = offset + to;
    }
    return out;
  }

  text(start: number, end: number): string {
    const slices = this.slices(start, end);
    return slices.length === 1 ? (slices[0] as Buffer).toString('utf8') : Buffer.concat(slices).toString('utf8');
  }
}

function metaOf(envelope: { totalResults?: unknown; pageNumber?: unknown; pageSize?: unknown; _links?: { next?: { href?: unknown } } }): PageMeta {
  const meta: PageMeta = { totalResults: typeof envelope.totalResults === 'number' ? envelope.totalResults : -1 };
  if (typeof envelope.pageNumber === 'number') meta.pageNumber = envelope.pageNumber;
  if (typeof envelope.pageSize === 'number') meta.pageSize = envelope.pageSize;
  const next = envelope._links?.next?.href;
  if (typeof next === 'string' && next !== '') meta.next = next;
  return meta;
}

/** A page from the response's chunks: split when possible, parsed whole otherwise. */
export function readPage(body: Buffer | readonly Buffer[]): ReadPage {
  const list = Buffer.isBuffer(body) ? [body] : body;
  const scan = scanPage(list);
  const chunks = new Chunks(list);
  if (!scan) return parsedPage(JSON.parse(chunks.text(0, chunks.length)));
  const envelope = JSON.parse(`${chunks.text(0, scan.resultsStart)}[]${chunks.text(scan.resultsEnd, chunks.length)}`);
  const { starts, ends, owns } = scan;
  return {
    meta: metaOf(envelope),
    scanned: true,
    records: {
      count: starts.length,
      byteLength: (i) => (ends[i] as number) - (starts[i] as number),
      copy: (i, target, at) => chunks.copy(starts[i] as number, ends[i] as number, target, at),
      bytes: (i) => Buffer.concat(chunks.slices(starts[i] as number, ends[i] as number)),
      object: (i) => JSON.parse(chunks.text(starts[i] as number, ends[i] as number)) as Json,
      ownsCompanyId: (i) => owns[i] === true,
      digest: () => {
        const hash = createHash('sha256');
        for (const slice of chunks.slices(scan.resultsStart, scan.resultsEnd)) hash.update(slice);
        return hash.digest('hex');
      },
      joinInPlace: (separator) => {
        if (starts.length === 0) return [];
        for (let i = 1; i < starts.length; i++) if ((starts[i] as number) !== (ends[i - 1] as number) + 1) return undefined;
        for (let i = 1; i < starts.length; i++) chunks.set(starts[i] as number - 1, separator);
        return chunks.slices(starts[0] as number, ends[ends.length - 1] as number);
      },
    },
  };
}

/** A page already parsed (the fallback, and pages from clients that hand back objects). */
export function parsedPage(envelope: { results?: unknown; totalResults?: unknown }): ReadPage {
  const results = Array.isArray(envelope.results) ? (envelope.results as Json[]) : [];
  return {
    meta: metaOf(envelope as Parameters<typeof metaOf>[0]),
    scanned: false,
    records: {
      count: results.length,
      byteLength: () => undefined,
      copy: () => 0,
      bytes: () => undefined,
      object: (i) => results[i] as Json,
      ownsCompanyId: (i) => {
        const record = results[i];
        return record !== null && typeof record === 'object' && 'companyId' in record;
      },
      joinInPlace: () => undefined,
      digest: () => createHash('sha256').update(JSON.stringify(results)).digest('hex'),
    },
  };
}

/** Bytes of a response body as the client hands it back (chunks, one buffer, or a parsed value: 0). */
export function bodyBytes(body: unknown): number {
  if (Buffer.isBuffer(body)) return body.length;
  if (Array.isArray(body) && body.every((b) => Buffer.isBuffer(b))) return (body as Buffer[]).reduce((n, b) => n + b.length, 0);
  return 0;
}
