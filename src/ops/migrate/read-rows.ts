// Streams a migration CSV (never loaded whole): UTF-8 BOM, CRLF, quoted fields with
// commas and newlines, any delimiter, headers in any case and order.
import { CsvError, parse } from 'csv-parse';
import type { Readable } from 'node:stream';
import { mapHeader, type HeaderMap } from './columns.js';
import { decoderFor, type InputEncoding } from './decode.js';
import { CsvFormatError } from './errors.js';
import type { IntegrationInfo, RawRow } from './types.js';

export interface CsvRows {
  header: HeaderMap;
  /** The header row as written. */
  columns: string[];
  rows: AsyncGenerator<RawRow & { fieldCount: number; expected: number }>;
  /** Stops reading (when the caller leaves early) and releases the input. */
  close(): void;
}

/** Reads the header, then yields each record keyed by canonical column name. */
export async function readRows(input: Readable, integrations: IntegrationInfo[], delimiter = ',', encoding: InputEncoding = 'utf8'): Promise<CsvRows> {
  const decoder = decoderFor(encoding);
  const parser = input.pipe(decoder).pipe(parse({ bom: true, delimiter, skip_empty_lines: true, relax_column_count: true, trim: false }));
  input.on('error', (err) => parser.destroy(err));
  decoder.on('error', (err) => parser.destroy(err));
  const iterator = parser[Symbol.asyncIterator]() as AsyncIterator<string[]>;
  let first = await next(iterator, 1);
  // Lines of only blanks (a stray \r among \n line ends) are no header.
  while (!first.done && first.value.every((cell) => cell.trim() === '')) first = await next(iterator, 1);
  if (first.done) throw new CsvFormatError('The file is empty: it needs a header row and at least one row.', undefined, 'ferry templates show KEY prints the header and an example row for integration KEY.');
  const header = mapHeader(first.value, integrations);
  async function* rows() {
    let row = 1;
    for (;;) {
      const record = await next(iterator, row + 1);
      if (record.done) return;
      row += 1;
      const values: Record<string, string> = {};
      record.value.forEach((cell, i) => {
        const name = header.names[i];
        if (name) values[name] = cell;
        else if (cell.trim() !== '' && i < header.names.length) values[first.value![i]!.trim()] = cell;
      });
      yield { row, values, fieldCount: record.value.length, expected: header.names.length };
    }
  }
  return {
    header,
    columns: first.value,
    rows: rows(),
    close: () => {
      parser.destroy();
      decoder.destroy();
      input.destroy();
    },
  };
}

async function next(iterator: AsyncIterator<string[]>, row: number): Promise<IteratorResult<string[]>> {
  try {
    return await iterator.next();
  } catch (err) {
    // Every csv-parse error (CSV_QUOTE_NOT_CLOSED, INVALID_OPENING_QUOTE, …) names its line.
    // The parser may be rows ahead of the reader (it parses whole chunks): `records` says where it stopped.
    const { lines, records } = err as { lines?: number; records?: number };
    if (err instanceof CsvError) throw new CsvFormatError(`The CSV is malformed near row ${records === undefined ? row : records + 1}${lines ? ` (line ${lines})` : ''}: ${(err as Error).message}`, lines);
    throw err;
  }
}
