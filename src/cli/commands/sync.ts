// `ferry sync`: start syncs (pulls) for one or many companies and, with --wait, follow
// them until every data type is Complete or errored, then print a per-company summary.
// Stopping the wait (Ctrl-C, --timeout) never cancels a sync: they carry on in the service,
// and the same command resumes the wait from the run's journal (cli/sync/run-files.ts).
import { targetArgs } from '../command-line.js';
import { Option, type Command } from 'commander';
import type { CommandContext } from '../context.js';
import { CliError, EXIT, UsageError } from '../errors.js';
import { logTo } from '../waiting.js';
import { durationArg, limitFlags, positiveNumber, wholeNumber } from '../flags.js';
import { examples, type Registrar } from '../command.js';
import { noEventsOption, openFeed, type EventsFlag } from '../event-waits.js';
import { resolveDataDir } from '../globals.js';
import { resumeCommand } from '../sync/resume-command.js';
import { defaultSyncTimeoutMs, waitLine } from '../sync/timeout.js';
import { statSync } from 'node:fs';
import { journalBegan } from '../../ops/migrate/journal.js';
import { dirname } from 'node:path';

export interface SyncOptions extends EventsFlag {
  fromResults?: string;
  dataType?: string;
  wait?: boolean;
  /** Milliseconds (parsed from 90s, 10m, 1h). */
  timeout?: number;
  /** First poll delay in ms (hidden; tests). */
  pollMs?: number;
  /** Companies at once, fixed; absent: the adaptive limit learns it. */
  concurrency?: number;
  maxRate?: number;
  /** Queue anew for every company: no resuming, nothing taken as done. */
  force?: boolean;
}

export function register(program: Command, registrar: Registrar): void {
  program.command('sync')
    .description('Start syncs of companies\' data (every data type, or one) and optionally wait for them')
    .argument('[companyId...]', 'companies to sync')
    .option('--from-results <file>', 'also sync the migrated and skipped companies of a `ferry migrate tokens` results CSV')
    .option('--data-type <type>', 'sync only this data type (e.g. invoices) instead of every supported one')
    .option('--wait', 'wait until every data type is Complete or errored, then print a per-company summary')
    .option('--timeout <duration>', 'with --wait: stop waiting after this long, e.g. 90s, 10m, 1h (default 10m + 0.5s a company)', durationArg('--timeout'))
    .option('--force', 'queue a sync for every company anew: do not resume a stopped run, nor take as done companies synced since the results file was begun')
    .option('--concurrency <n>', 'companies started (and read while waiting) at once, fixed (default: adaptive, learned from the service\'s answers)', wholeNumber('--concurrency', 1))
    .option('--max-rate <r>', 'at most R requests a second', positiveNumber('--max-rate'))
    .addOption(noEventsOption())
    .addOption(hiddenPollOption())
    .addHelpText('after', examples(
      'ferry sync COMPANY_ID --wait',
      'ferry sync --from-results tokens.results.csv --wait --timeout 30m',
      'ferry sync --from-results tokens.results.csv --wait      # again after a timeout or Ctrl-C: resumes',
      'ferry sync COMPANY_ID --data-type invoices --wait --json',
    ))
    .action(registrar.action<SyncOptions>((options, ctx, args) => runSync(options, ctx, (args as unknown[]).flat() as string[])));
}

/** Hidden: the first poll delay, so tests need not wait 500 ms a round. */
function hiddenPollOption(): Option {
  return new Option('--poll-ms <ms>', 'first poll delay in ms').hideHelp().argParser((v) => Math.max(10, Number(v) || 500));
}

export async function runSync(options: SyncOptions, ctx: CommandContext, companyIds: string[]): Promise<void> {
  const { io, signal } = ctx;
  const log = logTo(io);
  if (options.timeout !== undefined && !options.wait) throw new UsageError('--timeout only applies with --wait.', 'Add --wait, or drop --timeout.');
  if (options.force && !options.wait && options.fromResults === undefined) throw new UsageError('--force only applies with --wait or --from-results.', 'Without them every company is queued anyway: drop --force.');
  const dataType = options.dataType === undefined ? undefined : await dataTypeKey(options.dataType);
  const ids = [...companyIds];
  if (options.fromResults !== undefined) {
    const { companyIdsFromResults } = await import('../../ops/migrate/read-results.js');
    const read = await companyIdsFromResults(options.fromResults);
    const { ids: fromFile } = read;
    log((await import('../sync/report.js')).readFromResults(options.fromResults, read));
    if (fromFile.length === 0 && companyIds.length === 0) {
      throw new CliError(`${options.fromResults} has no migrated or skipped rows with a companyId: nothing to sync.`, EXIT.error);
    }
    ids.push(...fromFile);
  }
  const unique = [...new Set(ids.map((id) => id.trim()).filter((id) => id !== ''))];
  if (unique.length === 0) throw new UsageError('No companies to sync.', 'Give COMPANY_ID arguments, or --from-results FILE.');

  const wait = options.wait ?? false;
  const timeoutMs = options.timeout ?? defaultSyncTimeoutMs(unique.length);
  const deadline = wait ? Date.now() + timeoutMs : Infinity;
  if (wait) log(waitLine(unique.length, timeoutMs, options.timeout !== undefined));
  const doneSince = options.fromResults !== undefined ? resultsBegun(options.fromResults) : undefined;
  const connection = await ctx.connect();
  const [{ runSyncs }, report, files] = await Promise.all([
    import('../../ops/sync/engine.js'), import('../sync/report.js'), import('../sync/run-files.js'),
  ]);
  const target = files.targetOf(connection.embedded ? { embedded: true, dataDir: resolveDataDir(ctx.flags, io.env) } : { embedded: false, baseUrl: connection.baseUrl });
  const run = files.runFiles({ ...(options.fromResults !== undefined ? { fromResults: options.fromResults } : {}), companyIds: unique, ...(dataType ? { dataType } : {}), target }, io.env);
  const journal = wait ? keepJournal(run, log, files.prepareJournalDir) : undefined;
  const resume = wait || doneSince !== undefined
    ? { target, ...(journal ? { journal } : {}), ...(doneSince !== undefined ? { doneSince } : {}), ...(options.force ? { force: true } : {}) }
    : undefined;
  const shown = await report.syncShown(io, unique.length);
  // Opened before anything is queued, so that no pull can end unseen.
  // One company is read again as each data type ends; many, once each has ended them all (one
  // read a company, not one for each of the job's commits).
  const { COMPANY_SYNC_EVENTS, SYNC_EVENTS } = await import('../../client/wait-for-change.js');
  const changes = wait
    ? await openFeed(ctx, connection.client, options, unique.length === 1 ? { types: SYNC_EVENTS, companyId: unique[0] } : { types: COMPANY_SYNC_EVENTS })
    : undefined;
  const outcome = await runSyncs(connection.client, {
    companyIds: unique, ...(dataType ? { dataType } : {}), wait, deadline, firstDelayMs: options.pollMs ?? 500,
    ...limitFlags(options), ...(resume ? { resume } : {}),
    // One company named on the command line: someone waits on it, ahead of any backlog.
    ...(options.fromResults === undefined && unique.length === 1 ? { interactive: true } : {}),
  }, {
    signal, ...shown, ...(changes ? { changes } : {}),
    onJournal: (found) => log(report.journalLine(found)),
    onStarted: (counts) => {
      const line = report.startedLine(counts, options.fromResults !== undefined ? `${options.fromResults} was begun` : undefined);
      if (line) log(line);
    },
  }).finally(() => changes?.close());
  report.printSyncSummary(io, outcome.summary);
  if (wait && !outcome.stopped) files.removeCompanyList(run, options.fromResults, io.env);
  // Stopped early: the same companies, flags and journal, as a line to copy (the ids in a list file when they are many).
  const resumeWith = wait && outcome.stopped && journal
    ? resumeCommand(ctx.flags, { ...options, ...(dataType ? { dataType } : {}) }, options.fromResults !== undefined ? companyIds : unique, () => {
      files.writeCompanyList(run.companyList!, unique);
      return run.companyList!;
    })
    : undefined;
  const failure = report.syncFailure(outcome, { wait, timeoutMs, embedded: connection.embedded, target: targetArgs(ctx.flags), ...(resumeWith ? { resume: resumeWith } : {}) });
  if (failure) throw failure;
}

/** The journal's path, once its folder exists; without one (a state dir that cannot be made) the run goes on and says a rerun starts over. */
function keepJournal(run: { journal: string; companyList?: string }, log: (line: string) => void, prepare: (run: { journal: string; companyList?: string }) => void): string | undefined {
  try {
    prepare(run);
    return run.journal;
  } catch (err) {
    log(`No journal for this run (${(err as NodeJS.ErrnoException).code ?? (err as Error).message} on ${dirname(run.journal)}): a rerun after a stop will queue every company again.`);
    return undefined;
  }
}

async function dataTypeKey(text: string): Promise<string> {
  const { DATA_TYPES, dataTypeByKey, dataTypeByPath } = await import('../../platforms/data-types.js');
  const type = dataTypeByKey(text) ?? dataTypeByPath(text);
  if (!type) throw new UsageError(`Unknown data type ${text}.`, `One of: ${DATA_TYPES.map((t) => t.key).join(', ')}.`);
  return type.key;
}

/**
 * When the migration that wrote a results file began: companies synced since are done
 * (unless --force). Its journal beside it (RESULTS.journal) says so in its first line; the
 * results file itself is rewritten at the end of every run, so its own times would count
 * the syncs of rows migrated early, finished before the run ended, as not done, and queue
 * them again. Without a journal, the file's creation time where the file system keeps
 * one, else its last change.
 */
function resultsBegun(path: string): number {
  const stat = statSync(path);
  const fileTime = stat.birthtimeMs > 0 ? Math.min(stat.birthtimeMs, stat.mtimeMs) : stat.mtimeMs;
  return Math.min(journalBegan(`${path}.journal`) ?? fileTime, fileTime);
}
