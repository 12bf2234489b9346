// The three output formats as streaming encoders (a page of records in, text out), and
// the two places the text goes: a part file beside the final one (renamed over it when the
// export is complete) or a stream (stdout) with backpressure.
//
// An encoder's whole state is a small JSON value (records so far, the CSV header once
// written), saved in the checkpoint after every page, so an export resumed from a byte
// offset continues the document exactly where the complete pages ended.
import { open, type FileHandle } from 'node:fs/promises';
import { linkSync, renameSync, rmSync } from 'node:fs';
import type { Writable } from 'node:stream';
import { ColumnOrder, CsvRows, type Json } from './flatten.js';
import type { PageRecords } from './page.js';

export type Format = 'ndjson' | 'csv' | 'json';
export const FORMATS: readonly Format[] = ['ndjson', 'csv', 'json'];

/** The field ferry adds to each record with --all-companies (CSV: the first column). */
export const COMPANY_FIELD = 'companyId';

export interface EncoderState {
  format: Format;
  /** Records encoded so far (json: whether a separator is needed). */
  records: number;
  /** csv: the header, once written (the record columns, without leading columns or `_extra`). */
  columns?: string[];
}

export interface EncodedPage {
  /** The page's bytes, in order. They may live in a buffer the encoder reuses for its next page. */
  chunks: Buffer[];
  /** Records encoded. */
  count: number;
  /** csv: rows that needed the `_extra` column. */
  extraRows: number;
}

export interface Encoder {
  /** Text that opens the document (json: `[`); not written again by a resumed export. */
  start(): string;
  /**
   * The page's records, those `keep` says yes to (all without it). `companyId` is added to
   * each record with --all-companies.
   */
  page(records: PageRecords, keep?: (i: number) => boolean, companyId?: string): EncodedPage;
  /** Text that closes the document. */
  finish(): string;
  state(): EncoderState;
}

/**
 * `withCompany`: add the company id to each record (--all-companies); `csvEscape`: neutralise
 * formula-like CSV cells; `schema`: the data type's columns (platforms/record-columns.ts),
 * where a CSV header starts, so a field the first records lack is still a column.
 */
export function createEncoder(format: Format, withCompany: boolean, from?: EncoderState, csvEscape = true, schema: readonly string[] = []): Encoder {
  const records = from?.records ?? 0;
  switch (format) {
    case 'ndjson':
      return new LinesEncoder('ndjson', withCompany, records);
    case 'json':
      return new LinesEncoder('json', withCompany, records);
    case 'csv':
      return new CsvEncoder(withCompany, records, csvEscape, from?.columns, schema);
  }
}

const NEWLINE = Buffer.from('\n');

/** `{}` (or `{ }`) at out[at, at + length). */
function emptyObject(out: Buffer, at: number, length: number): boolean {
  if (length > 16) return false;
  let i = at + 1;
  while (out[i] === 0x20 || out[i] === 0x09) i++;
  return out[i] === 0x7d;
}

/**
 * ndjson (a record per line) and json (one array, a record per line: `[\n{…},\n{…}\n]\n`,
 * or `[]\n` when there are none). A record's bytes are copied as the service sent them into
 * one output buffer per page, which is reused for the next page (the sinks are done with it
 * by then: a part file's write has completed, a stream gets a copy). With --all-companies
 * `{"companyId":"…",` replaces a record's opening brace; a record that has a companyId field
 * of its own keeps it and gets none added.
 */
class LinesEncoder implements Encoder {
  private prefix: Buffer | undefined;
  private prefixFor: string | undefined;
  private scratch = Buffer.alloc(0);

  constructor(private readonly format: 'ndjson' | 'json', private readonly withCompany: boolean, private records: number) {}

  start(): string {
    return this.format === 'json' ? '[' : '';
  }

  private companyPrefix(companyId: string): Buffer {
    if (this.prefixFor !== companyId || !this.prefix) {
      this.prefix = Buffer.from(`{${JSON.stringify(COMPANY_FIELD)}:${JSON.stringify(companyId)}`);
      this.prefixFor = companyId;
    }
    return this.prefix;
  }

  page(records: PageRecords, keep?: (i: number) => boolean, companyId?: string): EncodedPage {
    const prefix = this.withCompany && companyId ? this.companyPrefix(companyId) : undefined;
    // The common case, ndjson of every record as it came: the response's own bytes, a newline
    // where each comma between two records was, written as they are (no copy at all).
    if (this.format === 'ndjson' && !prefix && !keep) {
      const joined = records.joinInPlace(0x0a);
      if (joined) {
        this.records += records.count;
        return { chunks: joined.length === 0 ? [] : [...joined, NEWLINE], count: records.count, extraRows: 0 };
      }
    }
    // An upper bound of the page's bytes; undefined when the page was parsed whole.
    let size = 0;
    for (let i = 0; i < records.count; i++) {
      if (keep && !keep(i)) continue;
      const length = records.byteLength(i);
      if (length === undefined) return this.parsedPage(records, keep, companyId);
      size += length + 2 + (prefix ? prefix.length + 1 : 0);
    }
    if (this.scratch.length < size) this.scratch = Buffer.allocUnsafeSlow(Math.max(size, this.scratch.length * 2));
    const out = this.scratch;
    const json = this.format === 'json';
    let at = 0;
    let count = 0;
    for (let i = 0; i < records.count; i++) {
      if (keep && !keep(i)) continue;
      if (json) {
        if (this.records + count > 0) out[at++] = 0x2c; // ,
        out[at++] = 0x0a;
      }
      if (prefix && !records.ownsCompanyId(i)) {
        at += prefix.copy(out, at);
        const length = records.copy(i, out, at); // its `{` lands here and becomes `,`
        if (emptyObject(out, at, length)) {
          out[at] = 0x7d; // `{}` → `{"companyId":"…"}`
          at += 1;
        } else {
          out[at] = 0x2c;
          at += length;
        }
      } else {
        at += records.copy(i, out, at);
      }
      if (!json) out[at++] = 0x0a;
      count += 1;
    }
    this.records += count;
    return { chunks: at === 0 ? [] : [out.subarray(0, at)], count, extraRows: 0 };
  }

  /** The fallback: records as objects, written back with JSON.stringify. */
  private parsedPage(records: PageRecords, keep: ((i: number) => boolean) | undefined, companyId: string | undefined): EncodedPage {
    let text = '';
    let count = 0;
    const json = this.format === 'json';
    for (let i = 0; i < records.count; i++) {
      if (keep && !keep(i)) continue;
      const record = records.object(i);
      const add = this.withCompany && companyId !== undefined && !records.ownsCompanyId(i);
      const line = JSON.stringify(add ? { [COMPANY_FIELD]: companyId, ...record } : record);
      text += json ? `${this.records + count === 0 ? '\n' : ',\n'}${line}` : `${line}\n`;
      count += 1;
    }
    this.records += count;
    return { chunks: [Buffer.from(text, 'utf8')], count, extraRows: 0 };
  }

  finish(): string {
    if (this.format === 'ndjson') return '';
    return this.records === 0 ? ']\n' : '\n]\n';
  }

  state(): EncoderState {
    return { format: this.format, records: this.records };
  }
}

class CsvEncoder implements Encoder {
  private rows: CsvRows | undefined;
  private readonly leading: string[];

  constructor(withCompany: boolean, private records: number, private readonly escape: boolean, columns?: string[], private readonly schema: readonly string[] = []) {
    this.leading = withCompany ? [COMPANY_FIELD] : [];
    if (columns) this.rows = new CsvRows(this.leading, columns, escape);
  }

  start(): string {
    return '';
  }

  page(records: PageRecords, keep?: (i: number) => boolean, companyId?: string): EncodedPage {
    const objects: Json[] = [];
    for (let i = 0; i < records.count; i++) if (!keep || keep(i)) objects.push(records.object(i));
    if (objects.length === 0) return { chunks: [], count: 0, extraRows: 0 };
    let text = '';
    if (!this.rows) {
      const order = new ColumnOrder();
      order.addPaths(this.schema);
      for (const record of objects) order.add(record);
      this.rows = new CsvRows(this.leading, order.list().filter((c) => !this.leading.includes(c)), this.escape);
      text += this.rows.headerLine();
    }
    const lead = this.leading.length > 0 ? [companyId ?? ''] : [];
    let extraRows = 0;
    for (const record of objects) {
      // With --all-companies a record's own companyId field (no built-in data type has one) is not a header column: it lands in `_extra`.
      const { line, extra } = this.rows.row(record, lead);
      text += line;
      if (extra) extraRows += 1;
    }
    this.records += objects.length;
    return { chunks: [Buffer.from(text, 'utf8')], count: objects.length, extraRows };
  }

  /** No records at all: the header is just the leading columns and `_extra`. */
  finish(): string {
    return this.rows ? '' : new CsvRows(this.leading, []).headerLine();
  }

  state(): EncoderState {
    const state: EncoderState = { format: 'csv', records: this.records };
    if (this.rows) state.columns = [...this.rows.columns];
    return state;
  }
}

// ---- Sinks ----

export interface Sink {
  /** Bytes of the document written so far (complete pages only, for a part file). */
  readonly bytes: number;
  write(data: Buffer[] | Buffer | string): Promise<void>;
}

/** The export's part file: written at an offset, truncated back on resume or rewind. */
export class PartFile implements Sink {
  private constructor(private readonly handle: FileHandle, readonly path: string, private size: number) {}

  /** Opens (creating) the part file and cuts it to `length` bytes. */
  static async open(path: string, length: number): Promise<PartFile> {
    const handle = await open(path, 'a+', 0o644);
    try {
      // 'a+' never truncates an existing file, so a crash here leaves it as it was.
      await handle.truncate(length);
    } catch (err) {
      await handle.close();
      throw err;
    }
    const file = new PartFile(handle, path, length);
    return file;
  }

  get bytes(): number {
    return this.size;
  }

  async write(data: Buffer[] | Buffer | string): Promise<void> {
    const buffers = typeof data === 'string' ? [Buffer.from(data, 'utf8')] : Buffer.isBuffer(data) ? [data] : data;
    let length = 0;
    for (const buffer of buffers) length += buffer.length;
    if (length === 0) return;
    // 'a+' appends whatever the position; the size is tracked here for the checkpoint.
    // writev writes every slice (libuv loops over short writes and IOV_MAX batches).
    const { bytesWritten } = await this.handle.writev(buffers);
    if (bytesWritten !== length) throw new Error(`short write to ${this.path}: ${bytesWritten} of ${length} bytes`);
    this.size += length;
  }

  async truncate(length: number): Promise<void> {
    await this.handle.truncate(length);
    this.size = length;
  }

  async close(): Promise<void> {
    await this.handle.close().catch(() => undefined);
  }

  /**
   * Flushes what is written so far to disk while `work` runs (commit then has little left to
   * flush); the result is work's. A failed work waits for the flush and ignores its outcome.
   */
  async flushDuring<T>(work: Promise<T>): Promise<T> {
    const flushed = this.handle.sync();
    let result: T;
    try {
      result = await work;
    } catch (err) {
      await flushed.catch(() => undefined);
      throw err;
    }
    await flushed;
    return result;
  }

  /**
   * Flushes the file to disk and puts it under its final name: with `overwrite`, replacing
   * whatever is there; without, only if the name is still free (link, then unlink).
   */
  async commit(finalPath: string, overwrite: boolean): Promise<void> {
    await this.handle.sync();
    await this.handle.close();
    if (overwrite) renameSync(this.path, finalPath);
    else {
      linkSync(this.path, finalPath);
      rmSync(this.path, { force: true });
    }
  }
}

/** stdout (or any stream): waits for 'drain' so a slow reader never makes ferry buffer pages. */
export class StreamSink implements Sink {
  private written = 0;
  private failure: Error | undefined;

  constructor(private readonly stream: Writable) {
    stream.on('error', (err: Error) => {
      this.failure = err;
    });
  }

  get bytes(): number {
    return this.written;
  }

  async write(data: Buffer[] | Buffer | string): Promise<void> {
    if (this.failure) throw this.failure;
    // A copy: the stream keeps the buffer until it is flushed, and the encoder reuses its own for the next page.
    const buffer = typeof data === 'string' ? Buffer.from(data, 'utf8') : Buffer.concat(Buffer.isBuffer(data) ? [data] : data);
    if (buffer.length === 0) return;
    this.written += buffer.length;
    if (!this.stream.write(buffer)) await this.drained();
    if (this.failure) throw this.failure;
  }

  private drained(): Promise<void> {
    const { stream } = this;
    return new Promise((resolve) => {
      const settle = (err?: Error) => {
        stream.off('drain', onDrain);
        stream.off('error', settle);
        stream.off('close', onClose);
        if (err) this.failure ??= err;
        resolve();
      };
      const onDrain = () => settle();
      const onClose = () => settle(Object.assign(new Error('the output stream was closed'), { code: 'EPIPE' }));
      stream.on('drain', onDrain);
      stream.on('error', settle);
      stream.on('close', onClose);
    });
  }
}
