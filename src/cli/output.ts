// The one output path of list and get commands: the record or the rows as JSON with
// --json; aligned tables and key/value lines on a terminal; stable tab-separated lines
// when piped (a get's parts each led by their kind, e.g. "connection\t…").
import chalk from 'chalk';
import type { IO } from './io.js';

type Cell = string | number | boolean | undefined | null;

export interface Column<T> {
  header: string;
  value: (row: T) => Cell;
}

/** A part of a record shown below its key/value lines: its connections, its token fields. */
export interface Section<T> {
  /** Piped: every line starts with this word. */
  kind: string;
  rows: T[];
  /** On a terminal: a table with these columns (unless `line`). */
  columns: Column<T>[];
  /** On a terminal: a line above the table. */
  title?: string;
  /** On a terminal: the whole section as one line instead of a table. */
  line?: (rows: T[]) => string;
  /** Piped: the cells after the kind (default: the columns' values). */
  piped?: (row: T) => Cell[];
  /** On a terminal, when there are no rows: a hint on stderr instead of the section. */
  empty?: string;
  /** Piped: no blank line or title; on a terminal: no blank line above (a list of notes under the record). */
  compact?: boolean;
}

const text = (v: Cell) => (v === undefined || v === null ? '' : String(v).replace(/[\t\n]/g, ' '));

/** Rows: JSON with --json (`json`, default the rows), a table otherwise. */
export function printList<T>(io: IO, rows: T[], columns: Column<T>[], json: unknown = rows): void {
  if (io.mode === 'json') {
    io.json(json);
    return;
  }
  printTable(io, rows, columns);
}

export function printTable<T>(io: IO, rows: T[], columns: Column<T>[]): void {
  const cells = rows.map((row) => columns.map((c) => text(c.value(row))));
  if (io.mode !== 'tty') {
    for (const line of cells) io.out(line.join('\t'));
    return;
  }
  const widths = columns.map((c, i) => Math.max(c.header.length, ...cells.map((line) => line[i]!.length)));
  const pad = (cell: string, i: number) => (i === columns.length - 1 ? cell : cell.padEnd(widths[i]!));
  const header = columns.map((c, i) => pad(c.header.toUpperCase(), i)).join('  ');
  io.out(io.color ? chalk.bold(header) : header);
  for (const line of cells) io.out(line.map(pad).join('  '));
}

/**
 * One record: JSON with --json (`record` itself), else key/value lines and then its
 * sections; `hint` is a next step for a person at a terminal (stderr).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- sections of different row types
export function printRecord(io: IO, record: object, fields: Array<[string, unknown]>, sections: Section<any>[] = [], hint?: string): void {
  if (io.mode === 'json') {
    io.json(record);
    return;
  }
  const width = Math.max(...fields.map(([k]) => k.length));
  for (const [key, value] of fields) {
    const shown = value === undefined || value === null ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value);
    io.out(io.mode === 'tty' ? `${(io.color ? chalk.dim(key.padEnd(width)) : key.padEnd(width))}  ${shown}` : `${key}\t${shown}`);
  }
  for (const section of sections) {
    if (io.mode !== 'tty') {
      for (const row of section.rows) io.out([section.kind, ...(section.piped ? section.piped(row) : section.columns.map((c) => c.value(row)))].map(text).join('\t'));
      continue;
    }
    if (section.rows.length === 0 && section.empty) {
      io.err(`\n${section.empty}`);
      return;
    }
    if (!section.compact) io.out('');
    if (section.line) {
      io.out(section.line(section.rows));
      continue;
    }
    if (section.title) io.out(section.title);
    if (section.compact) for (const row of section.rows) io.out(`  - ${section.columns.map((c) => c.value(row)).filter((v) => v !== undefined && v !== null && v !== '').join(' ')}`);
    else printTable(io, section.rows, section.columns);
  }
  if (hint && io.mode === 'tty') io.err(`\n${hint}`);
}
