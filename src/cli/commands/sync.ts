// `ferry sync`: start syncs (pulls) for one or many companies and, with --wait, follow
// them until every data type is Complete or errored, then print a per-company summary.
// Stopping the wait (Ctrl-C, --timeout) never cancels a sync: they carry on in the service.
import { Option, type Command } from 'commander';
import type { CommandContext } from '../context.js';
import type { CompanySummary } from '../../ops/sync/runs.js';
import { CliError, EXIT, InterruptedError, UsageError } from '../errors.js';
import { printResult, type IO } from '../io.js';
import { DEFAULT_WAIT_TIMEOUT_MS, batchExitCode, endsOnce, logTo } from '../waiting.js';
import { durationArg, limitFlags, positiveNumber, wholeNumber } from '../flags.js';
import { durationText } from '../../lib/duration.js';
import { examples, type Registrar } from '../command.js';
import { noEventsOption, openFeed, type EventsFlag } from '../event-waits.js';

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
}

export function register(program: Command, registrar: Registrar): void {
  program.command('sync')
    .description('Start syncs of companies\' data (every data type, or one) and optionally wait for them')
    .argument('[companyId...]', 'companies to sync')
    .option('--from-results <file>', 'also sync the migrated and skipped companies of a `ferry migrate tokens` results CSV')
    .option('--data-type <type>', 'sync only this data type (e.g. invoices) instead of every supported one')
    .option('--wait', 'wait until every data type is Complete or errored, then print a per-company summary')
    .option('--timeout <duration>', 'with --wait: stop waiting after this long, e.g. 90s, 10m, 1h (default 10m)', durationArg('--timeout'))
    .option('--concurrency <n>', 'companies started (and read while waiting) at once, fixed (default: adaptive, learned from the service\'s answers)', wholeNumber('--concurrency', 1))
    .option('--max-rate <r>', 'at most R requests a second', positiveNumber('--max-rate'))
    .addOption(noEventsOption())
    .addOption(hiddenPollOption())
    .addHelpText('after', examples(
      'ferry sync 3f0c8a3e-… --wait',
      'ferry sync --from-results tokens.results.csv --wait --timeout 30m',
      'ferry sync 3f0c8a3e-… --data-type invoices --wait --json',
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
  const dataType = options.dataType === undefined ? undefined : await dataTypeKey(options.dataType);
  const ids = [...companyIds];
  if (options.fromResults !== undefined) {
    const { companyIdsFromResults } = await import('../../ops/migrate/read-results.js');
    const { ids: fromFile, skipped } = await companyIdsFromResults(options.fromResults);
    const skippedText = Object.entries(skipped).map(([status, n]) => `${n} ${status}`).join(', ');
    log(`Read ${fromFile.length} compan${fromFile.length === 1 ? 'y' : 'ies'} from ${options.fromResults}${skippedText ? ` (rows left out: ${skippedText})` : ''}.`);
    if (fromFile.length === 0 && companyIds.length === 0) {
      throw new CliError(`${options.fromResults} has no migrated or skipped rows with a companyId: nothing to sync.`, EXIT.error);
    }
    ids.push(...fromFile);
  }
  const unique = [...new Set(ids.map((id) => id.trim()).filter((id) => id !== ''))];
  if (unique.length === 0) throw new UsageError('No companies to sync.', 'Give COMPANY_ID arguments, or --from-results FILE.');

  const deadline = options.wait ? Date.now() + (options.timeout ?? DEFAULT_WAIT_TIMEOUT_MS) : Infinity;
  const connection = await ctx.connect();
  const { runSyncs } = await import('../../ops/sync/engine.js');
  const { stillRunning } = await import('../../ops/sync/runs.js');
  const { startProgress } = await import('../progress.js');
  const spinning = io.stderrIsTTY && io.color && !io.quiet && io.mode !== 'json';
  const progress = endsOnce(await startProgress(io, `Starting syncs of ${unique.length} compan${unique.length === 1 ? 'y' : 'ies'}…`));
  // Opened before anything is queued, so that no pull can end unseen.
  const { SYNC_EVENTS } = await import('../../client/wait-for-change.js');
  const changes = options.wait ? await openFeed(ctx, connection.client, options, { types: SYNC_EVENTS, ...(unique.length === 1 ? { companyId: unique[0] } : {}) }) : undefined;
  const { runs, summary, stopped, good } = await runSyncs(connection.client, {
    companyIds: unique, ...(dataType ? { dataType } : {}), wait: options.wait ?? false, deadline, firstDelayMs: options.pollMs ?? 500,
    ...limitFlags(options),
  }, { signal, log, progress, logEach: !spinning, ...(changes ? { changes } : {}) }).finally(() => changes?.close());
  await printSummary(io, summary);

  const keepsGoing = connection.embedded
    ? 'The syncs were not cancelled: they resume the next time ferry opens this data dir.'
    : 'The syncs were not cancelled: they carry on in the service.';
  const follow = `Follow them with: ferry status ${runs.find((r) => r.started)?.companyId ?? 'COMPANY_ID'}`;
  if (stopped === 'interrupted') throw new InterruptedError(`Stopped waiting (interrupted). ${keepsGoing} ${follow}`);
  if (stopped === 'timeout') {
    throw new CliError(
      `Timed out after ${durationText(options.timeout ?? DEFAULT_WAIT_TIMEOUT_MS)} waiting for syncs; still running: ${stillRunning(runs)}.`,
      EXIT.error,
      `${keepsGoing} Wait longer with --timeout, or: ${follow}`,
    );
  }
  const failed = summary.filter((s) => !s.ok);
  const code = batchExitCode(good, failed.length);
  if (code !== EXIT.ok) {
    const names = failed.slice(0, 5).map((s) => s.name ? `${s.name} (${s.companyId})` : s.companyId).join(', ');
    const more = failed.length > 5 ? ` and ${failed.length - 5} more` : '';
    const what = options.wait ? 'did not sync completely' : 'could not be queued';
    throw new CliError(
      `${failed.length} of ${summary.length} compan${summary.length === 1 ? 'y' : 'ies'} ${what}: ${names}${more}.`,
      code,
      code === EXIT.error ? `Nothing was ${options.wait ? 'synced' : 'queued'}; see the summary above (ferry status COMPANY_ID shows one company's connections and data sets).` : 'See the summary above; ferry status COMPANY_ID shows one company\'s connections and data sets.',
    );
  }
}

async function dataTypeKey(text: string): Promise<string> {
  const { DATA_TYPES, dataTypeByKey, dataTypeByPath } = await import('../../platforms/data-types.js');
  const type = dataTypeByKey(text) ?? dataTypeByPath(text);
  if (!type) throw new UsageError(`Unknown data type ${text}.`, `One of: ${DATA_TYPES.map((t) => t.key).join(', ')}.`);
  return type.key;
}

async function printSummary(io: IO, summary: CompanySummary[]): Promise<void> {
  const { detailOf } = await import('../../ops/sync/runs.js');
  const { printTable } = await import('../output.js');
  printResult(io, summary, () => {
    const counts = (s: CompanySummary) => {
      const statuses = Object.values(s.dataTypes);
      return { complete: statuses.filter((x) => x === 'Complete').length, total: statuses.length };
    };
    printTable(io, summary, [
      { header: 'company', value: (s) => s.companyId },
      { header: 'name', value: (s) => s.name ?? '' },
      { header: 'state', value: (s) => s.state },
      { header: 'complete', value: (s) => counts(s).complete },
      { header: 'total', value: (s) => counts(s).total },
      { header: 'detail', value: (s) => detailOf(s) },
    ]);
  });
}
