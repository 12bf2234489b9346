// `ferry sync`: start syncs (pulls) for one or many companies and, with --wait, follow
// them until every data type is Complete or errored, then print a per-company summary.
// Stopping the wait (Ctrl-C, --timeout) never cancels a sync: they carry on in the service.
import { Option, type Command } from 'commander';
import type { CommandContext } from '../context.js';
import { CliError, EXIT, UsageError } from '../errors.js';
import { DEFAULT_WAIT_TIMEOUT_MS, logTo } from '../waiting.js';
import { durationArg, limitFlags, positiveNumber, wholeNumber } from '../flags.js';
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

  const deadline = options.wait ? Date.now() + (options.timeout ?? DEFAULT_WAIT_TIMEOUT_MS) : Infinity;
  const connection = await ctx.connect();
  const { runSyncs } = await import('../../ops/sync/engine.js');
  const { printSyncSummary, syncFailure, syncShown } = await import('../sync/report.js');
  const shown = await syncShown(io, unique.length);
  // Opened before anything is queued, so that no pull can end unseen.
  const { SYNC_EVENTS } = await import('../../client/wait-for-change.js');
  const changes = options.wait ? await openFeed(ctx, connection.client, options, { types: SYNC_EVENTS, ...(unique.length === 1 ? { companyId: unique[0] } : {}) }) : undefined;
  const outcome = await runSyncs(connection.client, {
    companyIds: unique, ...(dataType ? { dataType } : {}), wait: options.wait ?? false, deadline, firstDelayMs: options.pollMs ?? 500,
    ...limitFlags(options),
  }, { signal, ...shown, ...(changes ? { changes } : {}) }).finally(() => changes?.close());
  printSyncSummary(io, outcome.summary);
  const failure = syncFailure(outcome, { wait: options.wait ?? false, timeoutMs: options.timeout ?? DEFAULT_WAIT_TIMEOUT_MS, embedded: connection.embedded });
  if (failure) throw failure;
}

async function dataTypeKey(text: string): Promise<string> {
  const { DATA_TYPES, dataTypeByKey, dataTypeByPath } = await import('../../platforms/data-types.js');
  const type = dataTypeByKey(text) ?? dataTypeByPath(text);
  if (!type) throw new UsageError(`Unknown data type ${text}.`, `One of: ${DATA_TYPES.map((t) => t.key).join(', ')}.`);
  return type.key;
}
