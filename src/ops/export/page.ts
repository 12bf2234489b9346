// One page of a data set as the service sent it: the envelope's fields, and each record of
// `results` as a byte range of the response's chunks (as they came off the socket, never
// joined into one buffer), found by a scan of the JSON structure rather than by parsing it
// into objects. ndjson and json exports copy those bytes through as they are (no JSON.parse,
// no JSON.stringify, no object per record), which keeps an export fast and its memory flat.
// CSV, --state and the fallback parse records one at a time.
//
// The scan tracks only what it needs: string boundaries (escapes included), nesting depth,
// the top-level key `results`, each element of that array, and whether an element has a
// top-level `companyId` key. A page it cannot split safely (results that are not objects, a
// line break between tokens inside a record, i.e. pretty-printed JSON, which would break an
// ndjson line) is parsed whole instead, and its records are written back with
// JSON.stringify: slower, same values.
import { createHash } from 'node:crypto';
import type { Json } from './flatten.js';

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

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const TAB = 0x09;
const COMPANY_KEY = Buffer.from('companyId');
/** Longest key whose bytes are kept while scanning (`results`, `companyId`). */
const KEY_CAP = 16;
/** The key being read (its first KEY_CAP bytes): one buffer for every scan, nothing allocated per key. */
const key = Buffer.alloc(KEY_CAP);

export interface Scan {
  /** Record i is the bytes [starts[i], ends[i]) of the body (offsets over all chunks). */
  starts: number[];
  ends: number[];
  owns: boolean[];
  resultsStart: number;
  resultsEnd: number;
}

/** Is the key just read `companyId`? Byte by byte: this runs for every top-level key of every record. */
function isCompanyKey(): boolean {
  for (let i = 0; i < COMPANY_KEY.length; i++) if (key[i] !== COMPANY_KEY[i]) return false;
  return true;
}

/** Splits the `results` array of a page envelope into record byte ranges, or undefined if it cannot be done safely. */
export function scanPage(chunks: readonly Buffer[]): Scan | undefined {
  const scanner = new PageScanner();
  let base = 0;
  for (const b of chunks) {
    if (!scanner.chunk(b, base)) return undefined;
    base += b.length;
  }
  return scanner.result();
}

/** The scan's state, carried from byte to byte and from one chunk to the next. */
class PageScanner {
  private readonly starts: number[] = [];
  private readonly ends: number[] = [];
  private readonly owns: boolean[] = [];
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** 1: reading a top-level key, 3: reading a record's key, 0: any other string. */
  private keyDepth = 0;
  private keyLength = 0;
  private topKeyExpected = false;
  private lastTopKey = '';
  private inResults = false;
  private resultsStart = -1;
  private resultsEnd = -1;
  private recordKeyExpected = false;
  private owned = false;

  /**
   * Scans the chunk whose first byte is byte `base` of the body; false when the page cannot
   * be split safely. Bytes outside strings are handled here, inline: a method call per byte
   * made the scan markedly slower, a call per string does not.
   */
  chunk(b: Buffer, base: number): boolean {
    const length = b.length;
    for (let i = 0; i < length; i++) {
      if (this.inString) {
        // To the string's closing quote, or past the chunk's end when the string goes on in the next one.
        i = this.keyDepth === 0 ? this.valueString(b, i) : this.keyString(b, i);
        continue;
      }
      const c = b[i] as number;
      const at = base + i;
      switch (c) {
        case QUOTE:
          if (!this.openString()) return false;
          break;
        case OPEN_BRACE:
          this.depth += 1;
          if (this.depth === 1) this.topKeyExpected = true;
          else if (this.inResults && this.depth === 3) {
            this.starts.push(at);
            this.owned = false;
            this.recordKeyExpected = true;
          }
          break;
        case CLOSE_BRACE:
          if (this.inResults && this.depth === 3) {
            this.ends.push(at + 1);
            this.owns.push(this.owned);
          }
          this.depth -= 1;
          break;
        case OPEN_BRACKET:
          if (this.depth === 1 && this.lastTopKey === 'results' && this.resultsStart < 0) {
            this.inResults = true;
            this.resultsStart = at;
          } else if (this.inResults && this.depth === 2) return false; // an array element
          this.depth += 1;
          break;
        case CLOSE_BRACKET:
          this.depth -= 1;
          if (this.inResults && this.depth === 1) {
            this.inResults = false;
            this.resultsEnd = at + 1;
          }
          break;
        case COMMA:
          if (this.depth === 1) this.topKeyExpected = true;
          else if (this.inResults && this.depth === 3) this.recordKeyExpected = true;
          break;
        case LF:
        case CR:
          if (this.inResults && this.depth >= 3) return false; // a pretty-printed record: not one line
          break;
        case SPACE:
        case TAB:
          break;
        default:
          if (this.inResults && this.depth === 2) return false; // a number or literal element
      }
      if (this.depth < 0) return false;
    }
    return true;
  }

  /** A string opens: a key to read (the envelope's, or a record's), or a value to skip; false for a string element of `results`. */
  private openString(): boolean {
    this.inString = true;
    if (this.depth === 1 && this.topKeyExpected) {
      this.keyDepth = 1;
      this.keyLength = 0;
      this.topKeyExpected = false;
    } else if (this.inResults) {
      if (this.depth === 2) return false; // a string element: not a record
      if (this.depth === 3 && this.recordKeyExpected) {
        this.keyDepth = 3;
        this.keyLength = 0;
        this.recordKeyExpected = false;
      }
    }
    return true;
  }

  /** The ranges found, once every chunk is scanned: undefined unless the body was whole JSON with a `results` array. */
  result(): Scan | undefined {
    const { starts, ends, owns, resultsStart, resultsEnd } = this;
    if (this.inString || this.depth !== 0 || resultsStart < 0 || resultsEnd < 0 || starts.length !== ends.length) return undefined;
    return { starts, ends, owns, resultsStart, resultsEnd };
  }

  /**
   * The bulk of a page: a value string, skipped to its closing quote by the native search, a
   * quote after an odd run of backslashes being part of the string. Returns the closing
   * quote's index, or the chunk's length when the string goes on in the next chunk.
   */
  private valueString(b: Buffer, i: number): number {
    const length = b.length;
    if (this.escaped) {
      this.escaped = false;
      i += 1;
    }
    let end = -1;
    while (i < length) {
      const quote = b.indexOf(QUOTE, i);
      if (quote < 0) break;
      let run = 0;
      while (quote - run - 1 >= i && b[quote - run - 1] === BACKSLASH) run++;
      if (run % 2 === 0) {
        end = quote;
        break;
      }
      i = quote + 1;
    }
    if (end < 0) {
      // The string goes on in the next chunk, maybe right after a backslash.
      let run = 0;
      while (length - run - 1 >= i && b[length - run - 1] === BACKSLASH) run++;
      this.escaped = run % 2 === 1;
      return length;
    }
    this.inString = false;
    return end;
  }

  /** A key being read: run to the closing quote, stepping over escapes. Returns as valueString does. */
  private keyString(b: Buffer, i: number): number {
    const length = b.length;
    for (; i < length; i++) {
      const d = b[i] as number;
      if (this.escaped) this.escaped = false;
      else if (d === BACKSLASH) this.escaped = true;
      else if (d === QUOTE) break;
      else if (this.keyDepth !== 0) {
        if (this.keyLength < KEY_CAP) key[this.keyLength] = d;
        this.keyLength += 1;
      }
    }
    if (i === length) return length; // the string goes on in the next chunk
    this.inString = false;
    if (this.keyDepth === 1) this.lastTopKey = this.keyLength <= KEY_CAP ? key.toString('latin1', 0, this.keyLength) : '';
    else if (this.keyDepth === 3 && this.keyLength === COMPANY_KEY.length && isCompanyKey()) this.owned = true;
    this.keyDepth = 0;
    return i;
  }

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
