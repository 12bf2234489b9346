// `ferry export DATA_TYPE`: every record of a data set (one company's, or every company's)
// to ndjson, csv or one JSON document, on stdout or into a file written atomically, in
// constant memory; --resume continues an interrupted file export, --state exports only
// what changed since the last run. The engine lives in src/ops/export/.
import { printResult } from '../io.js';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { existsSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { CommandContext } from '../context.js';
import { UsageError } from '../errors.js';
import { assertWritable } from '../files.js';
import { positiveNumber, wholeNumber } from '../flags.js';
import { examples, type Registrar } from '../command.js';
import type { ExportPlan } from '../../ops/export/types.js';

export type ExportFormat = 'ndjson' | 'csv' | 'json';

export interface ExportOptions {
  company?: string;
  allCompanies?: boolean;
  query?: string;
  orderBy?: string;
  pageSize: number;
  format?: ExportFormat;
  out?: string;
  state?: string;
  resume?: boolean;
  force?: boolean;
  /** commander's negatable --no-csv-escape: false keeps formula-like text raw. */
  csvEscape?: boolean;
  /** Pages requested at once, fixed; absent: the adaptive limit learns it. */
  concurrency?: number;
  maxRate?: number;
}

function pageSize(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 5000) throw new InvalidArgumentError('--page-size must be a whole number from 1 to 5000.');
  return Number(value);
}

export function register(program: Command, registrar: Registrar): void {
  program
    .command('export')
    .description('Write every record of a data set to ndjson, csv or JSON (stdout or a file), in constant memory')
    .argument('<DATA_TYPE>', 'data type, e.g. invoices, bills, customers, chartOfAccounts')
    .option('--company <id>', 'the company whose data set to export')
    .option('--all-companies', 'every company of the account (each record gets a companyId)')
    .option('--query <q>', 'filter, e.g. "status=paid && amountDue>0"')
    .option('--order-by <field>', 'sort, e.g. issueDate or -modifiedDate (default: as created)')
    .option('--page-size <n>', 'records per request (1-5000)', pageSize, 5000)
    .addOption(new Option('--format <format>', 'output format (default: from the --out extension, else ndjson)').choices(['ndjson', 'csv', 'json']))
    .option('--no-csv-escape', "csv: keep text starting with = + - @ as it is (by default it gets a leading ' so spreadsheets do not run it)")
    .option('--out <file>', 'file to write (temp file + rename); - or none: stdout')
    .option('--force', 'replace --out if it exists')
    .option('--state <file>', 'incremental: export only records modified since the last run with this file')
    .option('--resume', 'continue an interrupted export to --out from its last complete page')
    .option('--concurrency <n>', 'pages requested at once, fixed (default: adaptive, learned from the service\'s answers)', wholeNumber('--concurrency', 1))
    .option('--max-rate <r>', 'at most R requests a second', positiveNumber('--max-rate'))
    .addHelpText('after', examples(
      'ferry export invoices --company COMPANY_ID --out invoices.ndjson',
      'ferry export invoices --all-companies --format csv --out invoices.csv --state invoices.state.json',
      'ferry export bills --company COMPANY_ID --query "status=Open" | jq .totalAmount',
    ))
    .action(registrar.action(runExport));
}

/** The file's folder must exist (ferry writes temp files beside it, then renames). */
function requireFolder(path: string, flag: string): void {
  const folder = dirname(resolve(path));
  if (!existsSync(folder) || !statSync(folder).isDirectory()) throw new UsageError(`The folder of ${flag} ${path} does not exist: ${folder}.`, 'Create it first, or choose another path.');
}

export function formatFor(options: Pick<ExportOptions, 'format' | 'out'>): ExportFormat {
  if (options.format) return options.format;
  const out = options.out?.toLowerCase() ?? '';
  if (out.endsWith('.csv')) return 'csv';
  if (out.endsWith('.json')) return 'json';
  return 'ndjson';
}

export async function runExport(options: ExportOptions, ctx: CommandContext, args: string[]): Promise<void> {
  const given = args[0] ?? '';
  const toFile = checkFlags(options);
  const format = formatFor(options);
  const { dataTypeByKey, dataTypeByPath } = await import('../../platforms/data-types.js');
  const known = dataTypeByKey(given) ?? dataTypeByPath(given);
  const dataType = known?.key ?? given;

  const { io } = ctx;
  const { client } = await ctx.connect();
  const { runExportPlan } = await import('../../ops/export/engine.js');
  const { startProgress } = await import('../progress.js');
  const { exportDone, exportNotes, exportProgress, exportSkipped, notSyncedPath } = await import('../export/report.js');
  const quietNotes = io.mode === 'json';
  const progress = await startProgress(io, `Exporting ${dataType}…`);
  const started = Date.now();
  let summary;
  try {
    summary = await runExportPlan(exportPlan(options, { dataType, dataPath: known?.path ?? given, knownDataType: known !== undefined, format, toFile }), {
      client,
      stream: io.stdout,
      signal: ctx.signal,
      note: (line) => {
        if (!quietNotes) io.err(line);
      },
      progress: (info) => progress.update(exportProgress(info, started, options.allCompanies ?? false)),
    });
  } catch (err) {
    progress.fail(`Export of ${dataType} stopped.`);
    throw err;
  }

  progress.done(exportDone(summary, dataType, format, options.allCompanies ?? false));
  exportNotes(io, summary);
  if (summary.out) printResult(io, summary, () => io.out(summary.out!));
  const { targetArgs } = await import('../command-line.js');
  const skipped = exportSkipped(io, summary, dataType, { listPath: notSyncedPath(summary.out ?? undefined, dataType), target: targetArgs(ctx.flags) });
  if (skipped) throw skipped;
}

/** Refuses flags that do not go together before anything is read; whether the export goes to a file. */
function checkFlags(options: ExportOptions): boolean {
  if (options.company !== undefined && options.allCompanies) throw new UsageError('Give --company ID or --all-companies, not both.');
  if (options.company === undefined && !options.allCompanies) {
    throw new UsageError('Say which company to export: --company ID, or --all-companies.', 'ferry companies list shows the ids.');
  }
  if (options.company !== undefined && options.company.trim() === '') throw new UsageError('--company needs a company id.');
  const toFile = options.out !== undefined && options.out !== '-';
  if (options.resume && !toFile) throw new UsageError('--resume needs --out FILE: an export to stdout cannot be resumed.');
  if (toFile) {
    assertWritable(options.out!, options.force ?? false);
    requireFolder(options.out!, '--out');
  }
  if (options.state !== undefined) requireFolder(options.state, '--state');
  return toFile;
}

/** The engine's plan from the flags and what they resolved to. */
function exportPlan(options: ExportOptions, resolved: Pick<ExportPlan, 'dataType' | 'dataPath' | 'knownDataType' | 'format'> & { toFile: boolean }): ExportPlan {
  return {
    dataType: resolved.dataType,
    dataPath: resolved.dataPath,
    knownDataType: resolved.knownDataType,
    companyId: options.company,
    allCompanies: options.allCompanies ?? false,
    query: options.query,
    orderBy: options.orderBy,
    pageSize: options.pageSize,
    format: resolved.format,
    csvEscape: options.csvEscape ?? true,
    out: resolved.toFile ? options.out : undefined,
    force: options.force ?? false,
    resume: options.resume ?? false,
    statePath: options.state,
    ...(options.concurrency !== undefined ? { concurrency: options.concurrency } : {}),
    ...(options.maxRate !== undefined ? { maxRate: options.maxRate } : {}),
  };
}
