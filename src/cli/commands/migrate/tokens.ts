// `ferry migrate tokens FILE|-`: bulk self-service token migration from CSV.
import { printResult } from '../../io.js';
import { limitFlags, positiveNumber, wholeNumber } from '../../flags.js';
import { InvalidArgumentError, Option, type Command } from 'commander';
import type { CommandContext, Connection } from '../../context.js';
import type { MigrationOptions } from '../../../ops/migrate/types.js';
import { UsageError } from '../../errors.js';
import { examples, group, type Registrar } from '../../command.js';

export interface MigrateTokensOptions {
  platform?: string;
  /** Fixed rows in flight; absent: the adaptive limit learns it. */
  concurrency?: number;
  maxRate?: number;
  dryRun?: boolean;
  results?: string;
  resume?: boolean;
  retryFailed?: boolean;
  sync: boolean;
  shard?: { index: number; count: number };
  failFast?: boolean;
  delimiter: string;
  /** commander's negatable --no-csv-escape. */
  csvEscape?: boolean;
  encoding?: 'utf8' | 'latin1';
  /** Token columns of an integration this ferry does not know. */
  tokenFields?: string[];
  yes?: boolean;
}

function shard(value: string) {
  const match = /^(\d+)\/(\d+)$/.exec(value);
  const index = Number(match?.[1]);
  const count = Number(match?.[2]);
  if (!match || count < 1 || index < 1 || index > count) throw new InvalidArgumentError('--shard takes I/N with 1 <= I <= N, e.g. --shard 2/4.');
  return { index, count };
}

function tokenFieldList(value: string): string[] {
  const names = value.split(',').map((n) => n.trim()).filter(Boolean);
  if (names.length === 0 || names.some((n) => !/^[A-Za-z_][A-Za-z0-9_]*$/.test(n))) {
    throw new InvalidArgumentError('--token-fields takes the token column names, e.g. --token-fields accessToken,refreshToken,tenantId.');
  }
  return names;
}

function delimiter(value: string) {
  const text = value === '\\t' || value.toLowerCase() === 'tab' ? '\t' : value;
  if (text.length !== 1) throw new InvalidArgumentError('--delimiter takes one character (or "tab").');
  return text;
}

export function register(program: Command, registrar: Registrar): void {
  group(program, 'migrate', 'Bulk migration of tokens your application already holds')
    .command('tokens')
    .description('Migrate companies and their OAuth tokens from a CSV file (or - for stdin)')
    .argument('<file>', 'CSV with companyName (or companyId), platformKey, externalId and the token fields')
    .option('--platform <key>', 'platform of every row, when the file has no platformKey column')
    .option('--concurrency <n>', 'rows in flight at once, fixed (default: adaptive, learned from the service\'s answers)', wholeNumber('--concurrency', 1))
    .option('--max-rate <r>', 'at most R requests a second', positiveNumber('--max-rate'))
    .option('--dry-run', 'validate every row (and check the plan) without writing anything')
    .option('--results <file>', 'results CSV (default: <file>.results.csv; <file>.dry-run.results.csv with --dry-run)')
    .option('--resume', 'continue an interrupted run (the default when its journal exists)')
    .option('--retry-failed', 'after fixing rows of the file: run only the rows not migrated yet, with their values from the file as it is now; their outcomes join the same results file')
    .option('--no-sync', 'do not queue a sync after authorizing')
    .option('--shard <i/n>', 'take only shard i of n, so n jobs can split one file', shard)
    .option('--fail-fast', 'stop at the first failed row')
    .option('--delimiter <c>', 'field delimiter (one character, or "tab")', delimiter, ',')
    .addOption(new Option('--encoding <encoding>', 'encoding of the file (utf8 is checked; latin1 for files saved as Latin-1)').choices(['utf8', 'latin1']).default('utf8'))
    .option('--token-fields <a,b,c>', 'token columns of an integration this ferry does not know (the target lists it, the bundled registry not)', tokenFieldList)
    .option('--yes', 'do not ask for confirmation before writing')
    .option('--no-csv-escape', "results: keep text starting with = + - @ as it is (by default it gets a leading ' so spreadsheets do not run it)")
    .addHelpText('after', `${examples(
      'ferry templates show gbol > xero.csv          # the columns for Xero, with an example row',
      'ferry migrate tokens xero.csv --dry-run        # check every row first',
      'ferry migrate tokens xero.csv --yes            # migrate; rerun the same command to resume',
      'ferry migrate tokens xero.csv --retry-failed --yes # after fixing the failed rows in xero.csv',
      'ferry migrate tokens big.csv --shard 1/4 --yes # one of four CI jobs',
      'cat tokens.csv | ferry migrate tokens - --platform gbol --results out.csv --yes',
    )}
Each row: find or create the company (by its ferryKey tag), find or create the connection,
authorize it with the tokens, queue a sync. Results: one line per row, never a token.
Rerunning the same command resumes: finished rows are skipped, failed rows are tried again.
Fixed failed rows in the file? --retry-failed runs just the rows not migrated yet.
Exit codes: 0 all rows done · 2 the file as a whole (empty, binary, its header) or a flag ·
3 some rows failed · 4 key refused (run stopped) · 5 plan's company limit · 130 Ctrl-C (rerun to resume).
`)
    .action(registrar.action(runMigrateTokens));
}

export async function runMigrateTokens(options: MigrateTokensOptions, ctx: CommandContext, [file]: string[]): Promise<void> {
  const { io } = ctx;
  const { createReadStream, rmSync } = await import('node:fs');
  const { spoolStdin } = await import('../../../ops/migrate/spool.js');
  const { runMigration } = await import('../../../ops/migrate/engine.js');
  const { accountOf } = await import('../../../ops/migrate/account.js');
  const { targetArgs } = await import('../../command-line.js');
  const { migrationFailure, printSummary, rowsProgress, stoppedLine, summaryJson, wordMigrationError } = await import('../../migrate/report.js');

  const fromStdin = file === '-';
  const { resultsPath, journalPath } = await runFiles(options, file!);
  const connection = await ctx.connect();
  const { client } = connection;
  const { targetIntegrations } = await import('../../../ops/platform-knowledge.js');
  const integrations = await targetIntegrations(client, ctx.signal, options.tokenFields);
  const spooled = fromStdin ? await spoolStdin(io.stdin) : undefined;
  const inputPath = spooled ?? file!;
  try {
    if (!options.dryRun) await confirmStart(ctx, options, connection, fromStdin ? 'stdin' : file!, journalPath);
    const { startProgress } = await import('../../progress.js');
    const progress = await startProgress(io, options.dryRun ? 'Validating…' : 'Validating every row before writing…');
    const started = Date.now();
    let summary;
    try {
      summary = await runMigration({
        ...migrationFlags(options), openInput: () => createReadStream(inputPath), inputName: fromStdin ? '-' : file!, integrations, resultsPath, journalPath, signal: ctx.signal,
      }, {
        client,
        onProgress: (p, limit) => progress.update(rowsProgress(p, limit, started)),
        account: () => accountOf(client),
      });
    } catch (err) {
      const worded = wordMigrationError(err, journalPath, ctx.signal);
      progress.fail(stoppedLine(worded));
      throw worded;
    }
    progress.done(summary.dryRun ? 'Validated.' : summary.stoppedBy ? 'Stopped.' : 'Done.');
    const rerun = { args: rerunArgs(options, file!), target: targetArgs(ctx.flags) };
    printResult(io, summaryJson(summary, rerun), () => printSummary(io, summary, rerun));

    const failure = migrationFailure(summary, rerun.target);
    if (failure) throw failure;
  } finally {
    // The spool's private directory too, not just the file in it.
    if (spooled) rmSync((await import('node:path')).dirname(spooled), { recursive: true, force: true });
  }
}

/** The results file and its journal, named for the input (and shard); refuses a file that is missing or a resume with no journal. */
async function runFiles(options: MigrateTokensOptions, file: string): Promise<{ resultsPath: string; journalPath: string }> {
  const { existsSync } = await import('node:fs');
  const fromStdin = file === '-';
  if (!fromStdin && !existsSync(file)) throw new UsageError(`${file} does not exist.`, 'Give the path of a CSV file, or - to read stdin.');
  const base = fromStdin ? 'ferry-migration' : file;
  const shardPart = options.shard ? `.shard-${options.shard.index}-of-${options.shard.count}` : '';
  // A dry run never overwrites the results of a real run.
  const resultsPath = options.results ?? `${base}${shardPart}${options.dryRun ? '.dry-run' : ''}.results.csv`;
  const journalPath = `${resultsPath}.journal`;
  if (options.resume && !existsSync(journalPath)) {
    throw new UsageError(`Nothing to resume: ${journalPath} does not exist.`, 'Run without --resume to start, or give the --results of the run to resume.');
  }
  if (options.retryFailed && options.dryRun) throw new UsageError('--retry-failed and --dry-run do not go together.', 'Check the edited file with --dry-run first, then run with --retry-failed.');
  if (options.retryFailed && !existsSync(journalPath)) {
    throw new UsageError(`Nothing to retry: ${journalPath} does not exist.`, 'Run without --retry-failed to start, or give the --results of the run whose failed rows to retry.');
  }
  return { resultsPath, journalPath };
}

/** Before writing: the person confirms (or --yes), and a run that resumes says so. */
async function confirmStart(ctx: CommandContext, options: MigrateTokensOptions, connection: Connection, source: string, journalPath: string): Promise<void> {
  const { io } = ctx;
  const { existsSync } = await import('node:fs');
  const resuming = existsSync(journalPath);
  const verb = options.retryFailed ? 'Retry the rows not migrated yet of' : resuming ? 'Resume migrating the companies of' : 'Migrate the companies of';
  await (await import('../../prompt.js')).confirmOrYes(io, options.yes,
    `${verb} ${source} to ${connection.baseUrl}${connection.embedded ? ' (embedded)' : ''}?`, ctx.signal);
  if (options.retryFailed) io.err(`Retrying from ${journalPath}: rows migrated by earlier runs are left alone; the others run with their values from ${source} as it is now.`);
  else if (resuming) io.err(`Resuming from ${journalPath}: finished rows are skipped, half-done ones continue.`);
}

/** What the flags say of the run, for the engine. */
function migrationFlags(options: MigrateTokensOptions): Omit<MigrationOptions, 'openInput' | 'inputName' | 'integrations' | 'resultsPath' | 'journalPath' | 'signal'> {
  return {
    ...(options.platform ? { defaultPlatform: options.platform.toLowerCase() } : {}),
    delimiter: options.delimiter,
    encoding: options.encoding ?? 'utf8',
    csvEscape: options.csvEscape ?? true,
    ...limitFlags(options),
    dryRun: options.dryRun ?? false,
    noSync: !options.sync,
    ...(options.shard ? { shard: options.shard } : {}),
    failFast: options.failFast ?? false,
    retryFailed: options.retryFailed ?? false,
  };
}

/** This command's own words, for the next command it prints (a dry run's --results is its own, not the run's). */
function rerunArgs(options: MigrateTokensOptions, file: string): string[] {
  const args = ['migrate', 'tokens', file];
  if (options.platform) args.push('--platform', options.platform);
  if (options.results && !options.dryRun) args.push('--results', options.results);
  if (!options.sync) args.push('--no-sync');
  if (options.shard) args.push('--shard', `${options.shard.index}/${options.shard.count}`);
  if (options.delimiter !== ',') args.push('--delimiter', options.delimiter === '\t' ? 'tab' : options.delimiter);
  if (options.encoding && options.encoding !== 'utf8') args.push('--encoding', options.encoding);
  if (options.tokenFields) args.push('--token-fields', options.tokenFields.join(','));
  if (options.csvEscape === false) args.push('--no-csv-escape');
  if (options.concurrency) args.push('--concurrency', String(options.concurrency));
  if (options.maxRate) args.push('--max-rate', String(options.maxRate));
  return args;
}
