// How an export shows on the command line (`ferry export`, and the demo's export): its
// progress line, the line it ends with, its notes, and the exit its end makes.
import { formatCount, limitText, rateLine } from '../../ops/progress.js';
import type { ExportSummary, ProgressInfo } from '../../ops/export/types.js';
import { CliError, EXIT } from '../errors.js';
import type { IO } from '../io.js';
import { writeFileSync } from 'node:fs';
import { neutraliseFormula } from '../../lib/csv-cell.js';
import { ferryCommand } from '../command-line.js';

/** The progress line: records, their rate and the limit; which company of how many when there are several. */
export function exportProgress(info: ProgressInfo, started: number, allCompanies: boolean): string {
  const done = info.records - info.resumedRecords;
  const line = info.companies > 1 || allCompanies
    ? `company ${formatCount(info.companyIndex + 1)}/${formatCount(info.companies)} · ${rateLine(done, undefined, started, 'records')}`
    : rateLine(done, info.companyTotal !== undefined ? Math.max(done, info.companyTotal - info.resumedRecords) : undefined, started, 'records');
  const shown = `${line} · ${limitText(info)}`;
  return info.resumedRecords > 0 ? `${shown} (after ${formatCount(info.resumedRecords)} from the interrupted run)` : shown;
}

/** The line an export ends with: what was written where, how fast, with what concurrency. */
export function exportDone(summary: ExportSummary, dataType: string, format: string, allCompanies: boolean): string {
  const where = summary.out ?? 'stdout';
  const companies = allCompanies ? ` of ${formatCount(summary.companies.exported)} compan${summary.companies.exported === 1 ? 'y' : 'ies'}` : '';
  const rate = summary.seconds > 0 ? ` · ${formatCount(Math.round((summary.records - summary.resumedRecords) / summary.seconds))}/s` : '';
  const limit = ` · concurrency ${summary.concurrency.final} (peak ${summary.concurrency.peak}) · ${formatCount(Math.round(summary.rate))} req/s`;
  return `Exported ${formatCount(summary.records)} ${dataType}${companies} to ${where} (${format}) in ${summary.seconds}s${rate}${limit}.`;
}

/** What else a person should know: rows with fields the CSV header lacks, saved bookmarks, companies skipped. */
export function exportNotes(io: IO, summary: ExportSummary): void {
  if (io.mode === 'json') return;
  if (summary.extraRows > 0) {
    io.err(`${formatCount(summary.extraRows)} row${summary.extraRows === 1 ? '' : 's'} had fields the CSV header (the data type's columns and the first page's) does not name; they are in the _extra column as JSON.`);
  }
  if (summary.state) io.err(`Bookmarks saved to ${summary.state}; the next run with --state ${summary.state} exports only what changed.`);
}

/**
 * Companies skipped for want of the data set, summed up in a line each way they were skipped.
 * Those not synced yet make a partial failure: their ids go to a CSV beside the output that
 * `ferry sync --from-results` reads, so the hint runs as printed however many there are.
 */
export function exportSkipped(io: IO, summary: ExportSummary, dataType: string, sync: { listPath: string; target: string[] }): Error | undefined {
  const notSynced = summary.skipped.filter((s) => s.reason === 'notSynced');
  const others = summary.skipped.filter((s) => s.reason !== 'notSynced');
  if (io.mode !== 'json' && others.length > 0) io.err(`Skipped ${formatCount(others.length)} compan${others.length === 1 ? 'y' : 'ies'} without this data set (unsupported by the platform, or deleted).`);
  if (notSynced.length === 0) return undefined;
  writeFileSync(sync.listPath, notSyncedCsv(notSynced));
  const command = ferryCommand(['sync', '--from-results', sync.listPath, '--data-type', dataType, '--wait'], sync.target);
  return new CliError(
    `${formatCount(notSynced.length)} compan${notSynced.length === 1 ? 'y was' : 'ies were'} skipped because the ${dataType} data set is not synced yet` +
      ` (their ids: ${sync.listPath}); the output holds the others.`,
    EXIT.partial,
    `Sync ${notSynced.length === 1 ? 'it' : 'them'}, then export again: ${command}`,
  );
}

/** companyId, name, reason: the columns `ferry sync --from-results` and a spreadsheet read. */
function notSyncedCsv(companies: ExportSummary['skipped']): string {
  const cell = (text: string) => (/[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text);
  const lines = companies.map((c) => [c.companyId, neutraliseFormula(c.name ?? ''), c.reason].map(cell).join(','));
  return `companyId,name,reason\n${lines.join('\n')}\n`;
}

/** Where the ids of companies not synced go: beside --out, or in the working directory for stdout. */
export function notSyncedPath(out: string | undefined, dataType: string): string {
  return out ? `${out}.not-synced.csv` : `${dataType}.not-synced.csv`;
}
