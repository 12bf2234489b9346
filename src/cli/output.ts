// Lists and records in the three output modes: aligned tables on a terminal, stable
// tab-separated lines when piped, and the record itself with --json.
import chalk from 'chalk';
import type { IO } from './io.js';

export interface Column<T> {
  header: string;
  value: (row: T) => string | number | boolean | undefined | null;
}

export function printTable<T>(io: IO, rows: T[], columns: Column<T>[]): void {
  const cells = rows.map((row) => columns.map((c) => {
    const v = c.value(row);
    return v === undefined || v === null ? '' : String(v).replace(/[\t\n]/g, ' ');
  }));
  if (io.mode !== 'tty') {
    for (const line of cells) io.out(line.join('\t'));
    return;
  }
  const widths = columns.map((c, i) => Math.max(c.header.length, ...cells.map((line) => line[i]!.length)));
  const pad = (text: string, i: number) => (i === columns.length - 1 ? text : text.padEnd(widths[i]!));
  const header = columns.map((c, i) => pad(c.header.toUpperCase(), i)).join('  ');
  io.out(io.color ? chalk.bold(header) : header);
  for (const line of cells) io.out(line.map(pad).join('  '));
}

/** Key/value lines for one record on a terminal or piped; the record as JSON with --json. */
export function printRecord(io: IO, record: object, fields: Array<[string, unknown]>): void {
  if (io.mode === 'json') {
    io.json(record);
    return;
  }
  const width = Math.max(...fields.map(([k]) => k.length));
  for (const [key, value] of fields) {
    const text = value === undefined || value === null ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value);
    io.out(io.mode === 'tty' ? `${(io.color ? chalk.dim(key.padEnd(width)) : key.padEnd(width))}  ${text}` : `${key}\t${text}`);
  }
}
