// The scan that splits a page's `results` into records without parsing it (page.ts reads
// pages with it). It tracks only what it needs: string boundaries (escapes included),
// nesting depth, the top-level key `results`, each element of that array, and whether an
// element has a top-level `companyId` key. A page it cannot split safely (results that are
// not objects, a line break between tokens inside a record, i.e. pretty-printed JSON, which
// would break an ndjson line) gets undefined, and the caller parses it whole.

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
