// `ferry check COMPANY_ID...`: the end-to-end check of migrated companies (the managed
// migration's acceptance test, usable on its own): connection Linked; every supported data
// type Complete after a fresh sync; no reauthorization needed; every data type readable.
import type { ChalkInstance } from 'chalk';
import { integrationLookup } from '../../ops/platform-knowledge.js';
import { Option, type Command } from 'commander';
import type { CommandContext } from '../context.js';
import { CliError, EXIT, InterruptedError, UsageError } from '../errors.js';
import { printResult, type IO } from '../io.js';
import type { CheckResult } from '../../ops/check/types.js';
import { durationArg, limitFlags, positiveNumber, wholeNumber } from '../flags.js';
import type { LimitStats } from '../../client/adaptive-limit.js';
import { examples, type Registrar } from '../command.js';
import { noEventsOption, openFeed, type EventsFlag } from '../event-waits.js';
import { formatCount } from '../../ops/progress.js';

export interface CheckOptions extends EventsFlag {
  sync: boolean;
  timeout?: number;
  /** Companies at once, fixed; absent: the adaptive limit learns it. */
  concurrency?: number;
  maxRate?: number;
  platform?: string;
  fromResults?: string;
  pollMs?: number;
}

export function register(program: Command, registrar: Registrar): void {
  program.command('check')
    .description('End-to-end check of migrated companies: Linked, a fresh sync Complete, no reauthorization, every data type readable')
    .argument('[companyId...]', 'companies to check')
    .option('--no-sync', 'judge the data sets as they are instead of queuing a fresh sync (a data set read once counts, even with a newer pull still queued)')
    .option('--timeout <duration>', "how long one company's fresh sync may take, e.g. 90s, 10m (default 10m)", durationArg('--timeout'))
    .option('--concurrency <n>', 'companies checked at once, fixed (default: adaptive, learned from the service\'s answers)', wholeNumber('--concurrency', 1))
    .option('--max-rate <r>', 'at most R requests a second', positiveNumber('--max-rate'))
    .option('--platform <key>', "check only the company's connection to this platform")
    .option('--from-results <file>', 'also check the migrated and skipped companies of a migration results CSV')
    .addOption(noEventsOption())
    .addOption(new Option('--poll-ms <ms>', 'first poll delay in ms').hideHelp().argParser((v) => Math.max(10, Number(v) || 500)))
    .addHelpText('after', `${examples(
      'ferry check COMPANY_ID',
      'ferry check --from-results tokens.csv.results.csv --concurrency 16 --json > checks.json',
      'ferry check COMPANY_ID --no-sync      # judge the data as it is, queue nothing',
    )}
Each criterion is reported with its evidence (statuses, counts, timings). Where the platform
can be asked (the sandbox), a refresh by the client's old application after the migration
fails the check: reauthorization required.
Exit codes: 0 every company passed · 3 some failed · 1 error (e.g. the service is unreachable).
`)
    .action(registrar.action<CheckOptions>((options, ctx, args) => runCheck(options, ctx, (args as unknown[]).flat() as string[])));
}

export async function runCheck(options: CheckOptions, ctx: CommandContext, companyIds: string[]): Promise<void> {
  const { io, signal } = ctx;
  const ids = [...companyIds];
  if (options.fromResults !== undefined) {
    const { companyIdsFromResults } = await import('../../ops/migrate/read-results.js');
    ids.push(...(await companyIdsFromResults(options.fromResults)).ids);
  }
  const unique = [...new Set(ids.map((id) => id.trim()).filter(Boolean))];
  if (unique.length === 0) throw new UsageError('No companies to check.', 'Give COMPANY_ID arguments, or --from-results FILE.');

  const connection = await ctx.connect();
  const { client } = connection;
  const { checkCompanies } = await import('../../ops/check/engine.js');
  const { optionalSandbox } = await import('../../ops/check/platform-lookups.js');
  const { DEFAULT_WAIT_TIMEOUT_MS } = await import('../waiting.js');
  const sandbox = await optionalSandbox(connection);
  const { startProgress } = await import('../progress.js');
  const { limitText, rateLine } = await import('../../ops/progress.js');
  const { AdaptiveLimit, limitOptions } = await import('../../client/adaptive-limit.js');
  const limit = new AdaptiveLimit(limitOptions(limitFlags(options)));
  const progress = await startProgress(io, `Checking ${formatCount(unique.length)} compan${unique.length === 1 ? 'y' : 'ies'} end to end${options.sync ? ' (fresh sync of every data type)' : ''}…`);
  const started = Date.now();
  let done = 0;
  let failed = 0;
  // One event stream for the run, opened before any fresh sync is queued.
  const { SYNC_EVENTS } = await import('../../client/wait-for-change.js');
  const changes = options.sync ? await openFeed(ctx, client, options, { types: SYNC_EVENTS, ...(unique.length === 1 ? { companyId: unique[0] } : {}) }) : undefined;
  const results = await checkCompanies(unique.map((companyId) => ({ companyId, ...(options.platform ? { platformKey: options.platform.toLowerCase() } : {}) })), {
    sync: options.sync, timeoutMs: options.timeout ?? DEFAULT_WAIT_TIMEOUT_MS, signal, limit,
    ...(options.pollMs ? { pollMs: options.pollMs } : {}),
  }, { client, ...(sandbox ? { sandbox } : {}), ...(changes ? { changes } : {}), integration: integrationLookup(client, signal) }, (result) => {
    done += 1;
    if (result.verdict === 'fail') failed += 1;
    progress.update(`Checking: ${rateLine(done, unique.length, started, 'companies')} · ${formatCount(failed)} failed · ${limitText(limit)}`);
  }).finally(() => changes?.close());
  if (signal.aborted) {
    progress.fail('Stopped checking.');
    throw new InterruptedError('Stopped; the syncs the check queued carry on in the service: rerun the same command to check again.');
  }
  results.sort((a, b) => unique.indexOf(a.companyId) - unique.indexOf(b.companyId));
  progress.done(`Checked ${formatCount(results.length)}: ${formatCount(results.length - failed)} passed, ${formatCount(failed)} failed.`);
  await printChecks(io, results, limit.stats());
  if (failed > 0) {
    const names = results.filter((r) => r.verdict === 'fail').slice(0, 3).map((r) => `${r.companyName ?? r.companyId}: ${r.reasons[0] ?? 'failed'}`);
    throw new CliError(`${formatCount(failed)} of ${formatCount(results.length)} compan${results.length === 1 ? 'y' : 'ies'} failed the end-to-end check (${names.join('; ')}${failed > 3 ? '; …' : ''}).`,
      EXIT.partial, io.mode === 'json'
        ? 'Each criterion\'s evidence is in the JSON on stdout: results[].criteria[].evidence.'
        : 'Each criterion\'s summary is above; --json gives its evidence too.');
  }
}

export async function printChecks(io: IO, results: CheckResult[], limit: LimitStats): Promise<void> {
  const passed = results.filter((r) => r.verdict === 'pass').length;
  const { default: chalk } = await import('chalk');
  printResult(io, { passed, failed: results.length - passed, results, concurrency: limit.concurrency, rate: limit.rate }, () => printCheckLines(io, results, chalk));
}

function printCheckLines(io: IO, results: CheckResult[], chalk: ChalkInstance): void {
  if (io.mode === 'plain') {
    for (const r of results) {
      io.out(['company', r.companyId, r.companyName ?? '', r.verdict, r.seconds, r.reasons.join('; ')].join('\t'));
      for (const c of r.criteria) io.out(['criterion', r.companyId, c.name, c.status, c.summary.replace(/[\t\n]/g, ' ')].join('\t'));
    }
    return;
  }
  const paint = (status: string, text: string) => {
    if (!io.color) return text;
    return status === 'pass' ? chalk.green(text) : status === 'fail' ? chalk.red(text) : chalk.dim(text);
  };
  const mark = (status: string) => (io.color ? paint(status, status === 'pass' ? '✓' : status === 'fail' ? '✗' : '·') : status.padEnd(7));
  for (const r of results) {
    const verdict = r.verdict === 'pass' ? 'PASS' : 'FAIL';
    io.out(`${mark(r.verdict)} ${paint(r.verdict, verdict)}  ${r.companyName ?? ''} (${r.companyId})  ${r.seconds}s`);
    for (const c of r.criteria) io.out(`    ${mark(c.status)} ${c.name.padEnd(13)} ${c.summary}`);
    for (const reason of r.reasons) io.out(`    ${paint('fail', '→')} ${reason}`);
  }
}
