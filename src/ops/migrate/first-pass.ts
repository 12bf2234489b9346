// Pass one of a migration: every row of the file read and validated before anything is
// written, the file's fingerprint (its bytes' SHA-256, for the journal), and the report a
// dry run shows. Pass two (engine.ts) reads the file again with the same rules.
import { createHash } from 'node:crypto';
import { RowsError } from './errors.js';
import { headerProblem } from './header-check.js';
import { readRows, type CsvRows } from './read-rows.js';
import type { MigrationOptions, RawRow, RowProblem } from './types.js';
import { RowValidator, type Validated } from './validate.js';

export interface ValidationReport {
  rows: number;
  valid: number;
  invalid: number;
  inShard: number;
  /** The first problems, for display (all of them are in the results file). */
  problems: Array<{ row: number; problems: RowProblem[] }>;
  fingerprint: string;
}

const SHOWN_PROBLEMS = 50;

/** Whether a row is this run's: its shard, and the rows a managed pilot asked for. */
export function inShard(position: number, shard: MigrationOptions['shard'], row?: number, onlyRows?: ReadonlySet<number>): boolean {
  if (onlyRows && (row === undefined || !onlyRows.has(row))) return false;
  return !shard || position % shard.count === shard.index - 1;
}

/** A row with more or fewer fields than the header names a problem of its own. */
export function checkFieldCount(raw: RawRow & { fieldCount: number; expected: number }, validated: Validated): Validated {
  if (raw.fieldCount === raw.expected) return validated;
  const problem = { field: 'row', message: `has ${raw.fieldCount} fields but the header has ${raw.expected} (a quote or delimiter out of place?)` };
  return validated.ok ? { ok: false, row: raw.row, problems: [problem], partial: validated.row } : { ...validated, problems: [problem, ...validated.problems] };
}

/** Pass 1: every row of the file, validated; the input's fingerprint; dry-run results. */
export async function validateInput(options: MigrationOptions, onRow?: (validated: Validated, inShard: boolean) => Promise<void>): Promise<ValidationReport> {
  const hash = createHash('sha256');
  const input = options.openInput();
  input.on('data', (chunk: Buffer | string) => hash.update(chunk));
  const csv: CsvRows = await readRows(input, options.integrations, options.delimiter, options.encoding);
  const validator = new RowValidator({ integrations: options.integrations, defaultPlatform: options.defaultPlatform, allowManaged: options.allowManaged });
  const report: ValidationReport = { rows: 0, valid: 0, invalid: 0, inShard: 0, problems: [], fingerprint: '' };
  const badHeader = headerProblem(csv.columns, csv.header, options.integrations, options.delimiter ?? ',');
  if (badHeader) {
    csv.close();
    throw badHeader;
  }
  let position = 0;
  for await (const raw of csv.rows) {
    const validated = checkFieldCount(raw, validator.validate(raw));
    const mine = inShard(position++, options.shard, raw.row, options.onlyRows);
    report.rows += 1;
    if (mine) report.inShard += 1;
    if (validated.ok) report.valid += 1;
    else {
      report.invalid += 1;
      if (report.problems.length < SHOWN_PROBLEMS) report.problems.push({ row: validated.row, problems: validated.problems });
    }
    await onRow?.(validated, mine);
  }
  if (report.rows === 0) throw new RowsError('The file has a header but no rows.');
  report.fingerprint = hash.digest('hex');
  return report;
}
