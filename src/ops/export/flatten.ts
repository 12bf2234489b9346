// CSV for nested records: objects become dotted columns (`customerRef.id`), arrays stay
// whole as JSON text (`lineItems`), and the header is fixed before the first row is
// written, so the file streams in constant memory.
//
// Where the header comes from: the data type's columns (platforms/record-columns.ts), then
// the first page that has any records (up to --page-size, 5,000 by default), read before
// anything is written, whose columns beyond those are merged in the
// order the records list their fields: a field first seen in a later record is placed right
// after the field that precedes it there (so `paidOnDate` lands after `dueDate` whichever
// record has it first). The result is the same for the same first page, whatever the order
// of the records on it. A field that first appears after the header was written (a later
// page, another company) is not dropped: it goes into the last column, `_extra`, as a JSON
// object of dotted path → value. `_extra` is always the last column, empty on most rows.
import { neutraliseFormula } from '../../lib/csv-cell.js';

export type Json = Record<string, unknown>;

/** The always-present last column holding the fields the header does not name. */
export const EXTRA_COLUMN = '_extra';

/** Calls `visit(path, value)` for every leaf: scalars, null and arrays; objects are walked into. */
export function forEachLeaf(record: Json, visit: (path: string, value: unknown) => void, prefix = ''): void {
  for (const key in record) {
    const value = record[key];
    if (value === undefined) continue;
    const path = prefix === '' ? key : `${prefix}.${key}`;
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) forEachLeaf(value as Json, visit, path);
    else visit(path, value);
  }
}

/** The dotted leaf paths of a record, in the record's own field order. */
export function leafPaths(record: Json): string[] {
  const paths: string[] = [];
  forEachLeaf(record, (path) => paths.push(path));
  return paths;
}

/** Merges the leaf paths of many records into one column order (see the file comment). */
export class ColumnOrder {
  private readonly columns: string[] = [];
  private readonly known = new Set<string>();

  add(record: Json): void {
    let previous: string | undefined;
    forEachLeaf(record, (path) => {
      if (!this.known.has(path)) {
        const at = previous === undefined ? 0 : this.columns.indexOf(previous) + 1;
        this.columns.splice(at, 0, path);
        this.known.add(path);
      }
      previous = path;
    });
  }

  /** Known columns in their order (a data type's schema), before any record. */
  addPaths(paths: readonly string[]): void {
    for (const path of paths) {
      if (this.known.has(path)) continue;
      this.columns.push(path);
      this.known.add(path);
    }
  }

  list(): string[] {
    return [...this.columns];
  }
}

/** A cell's text: strings as they are, numbers and booleans as JSON, null as empty, arrays as JSON text. */
export function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

const NEEDS_QUOTES = /[",\r\n]/;

/** RFC 4180 quoting: a cell with a comma, quote, CR or LF is quoted, quotes doubled. */
export function csvCell(text: string): string {
  return NEEDS_QUOTES.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function csvLine(cells: readonly string[]): string {
  let line = '';
  for (let i = 0; i < cells.length; i++) line += (i === 0 ? '' : ',') + csvCell(cells[i] as string);
  return `${line}\n`;
}

/**
 * Turns records into CSV rows for a fixed header. `leading` are columns ferry adds before
 * the record's own (`companyId` with --all-companies); `_extra` is appended after them.
 */
export class CsvRows {
  readonly header: string[];
  private readonly index: Map<string, number>;
  private readonly width: number;

  /** `escapeFormulas`: neutralise text cells a spreadsheet would run (lib/csv-cell.ts). */
  constructor(readonly leading: readonly string[], readonly columns: readonly string[], private readonly escapeFormulas = true) {
    this.header = [...leading, ...columns, EXTRA_COLUMN];
    this.index = new Map(columns.map((c, i) => [c, leading.length + i]));
    this.width = this.header.length;
  }

  headerLine(): string {
    return csvLine(this.header);
  }

  /** One row; `lead` are the values of the leading columns. Counts rows that needed `_extra`. */
  row(record: Json, lead: readonly string[]): { line: string; extra: boolean } {
    const cells: string[] = new Array<string>(this.width).fill('');
    for (let i = 0; i < lead.length; i++) cells[i] = lead[i] as string;
    let extra: Json | undefined;
    forEachLeaf(record, (path, value) => {
      const at = this.index.get(path);
      if (at !== undefined) cells[at] = this.escapeFormulas && typeof value === 'string' ? neutraliseFormula(value) : cellText(value);
      else (extra ??= {})[path] = value;
    });
    if (extra) cells[this.width - 1] = JSON.stringify(extra);
    return { line: csvLine(cells), extra: extra !== undefined };
  }
}
