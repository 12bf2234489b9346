// `ferry push DATA_TYPE`: create records on a company's platform through push operations,
// one POST per record of a .json (an object or an array) or .ndjson file (streamed). The
// engine is ops/push; this file reads the flags, shows each outcome and sets the exit code.
import { Option, type Command } from 'commander';
import type { CommandContext } from '../context.js';
import { CliError, EXIT, InterruptedError, UsageError } from '../errors.js';
import { printResult, type IO } from '../io.js';
import { DEFAULT_WAIT_TIMEOUT_MS, batchExitCode, endsOnce, logTo } from '../waiting.js';
import { durationArg } from '../flags.js';
import * as api from '../../client/api.js';
import { durationText } from '../../lib/duration.js';
import { FAILED, type PushResult } from '../../ops/push/push-one.js';
import type { FileRecord } from '../../ops/push/records.js';
import type { ApiClient } from '../../client/client.js';
import { examples, type Registrar } from '../command.js';
import { noEventsOption, openFeed, type EventsFlag } from '../event-waits.js';
import { formatCount } from '../../ops/progress.js';

export interface PushOptions extends EventsFlag {
  company: string;
  connection: string;
  file: string;
  wait?: boolean;
  /** Milliseconds (parsed from 90s, 10m, 1h). */
  timeout?: number;
  /** First poll delay in ms (hidden; tests). */
  pollMs?: number;
}

export function register(program: Command, registrar: Registrar): void {
  program.command('push')
    .description('Create records on a company\'s platform (push operations) from a .json or .ndjson file')
    .argument('<dataType>', 'what to create, e.g. invoices, customers, bills')
    .requiredOption('--company <id>', 'the company')
    .requiredOption('--connection <id>', 'the Linked connection to push to')
    .requiredOption('--file <file>', 'one record (.json object), or many (.json array, or .ndjson: one object a line)')
    .option('--wait', 'wait until every Pending push operation is Success, Failed or TimedOut')
    .option('--timeout <duration>', 'with --wait: stop waiting after this long, e.g. 90s, 10m, 1h (default 10m)', durationArg('--timeout'))
    .addOption(noEventsOption())
    .addOption(new Option('--poll-ms <ms>', 'first poll delay in ms').hideHelp().argParser((v) => Math.max(10, Number(v) || 500)))
    .addHelpText('after', examples(
      'ferry push customers --company COMPANY_ID --connection CONNECTION_ID --file customer.json',
      'ferry push invoices --company COMPANY_ID --connection CONNECTION_ID --file invoices.ndjson --wait',
      'ferry push invoices --company COMPANY_ID --connection CONNECTION_ID --file invoices.json --json > results.json',
    ))
    .action(registrar.action(runPush));
}

export async function runPush(options: PushOptions, ctx: CommandContext, [dataTypeArg]: string[]): Promise<void> {
  const { io, signal } = ctx;
  if (options.timeout !== undefined && !options.wait) throw new UsageError('--timeout only applies with --wait.', 'Add --wait, or drop --timeout.');
  const input = await readInput(options.file, dataTypeArg!);
  const { client } = await ctx.connect();
  const { linkedConnection } = await import('../../ops/push/engine.js');
  const connection = await linkedConnection(client, options.company, options.connection, signal);
  const run = await pushAll(ctx, client, options, { ...input, connectionId: connection.id });
  printResult(io, pushDocument(options, input.dataType, run.results), () => io.err(tally(run.results)));
  throwUnlessAllPushed(options, run);
}

/** What to push: a pushable data type, and the file's records. */
interface PushInput {
  dataType: string;
  format: 'json' | 'ndjson';
  records: AsyncIterable<FileRecord> | Iterable<FileRecord>;
}

async function readInput(file: string, dataTypeArg: string): Promise<PushInput> {
  const { DATA_TYPES, dataTypeByKey, dataTypeByPath } = await import('../../platforms/data-types.js');
  const dataType = dataTypeByKey(dataTypeArg) ?? dataTypeByPath(dataTypeArg);
  const pushable = DATA_TYPES.filter((t) => t.pushable).map((t) => t.key).join(', ');
  if (!dataType) throw new UsageError(`Unknown data type ${dataTypeArg}.`, `Pushable data types: ${pushable}.`);
  if (!dataType.pushable) throw new UsageError(`${dataType.key} records cannot be pushed.`, `Pushable data types: ${pushable}.`);
  const { fileFormat, jsonFileRecords, ndjsonRecords } = await import('../../ops/push/records.js');
  const format = fileFormat(file);
  const { statSync } = await import('node:fs');
  try {
    if (!statSync(file).isFile()) throw new Error('not a file');
  } catch (err) {
    throw new UsageError(`Cannot read --file ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}.`);
  }
  // A whole .json file is parsed before anything is sent, so a syntax error sends nothing.
  const records = format === 'json' ? await jsonFileRecords(file) : ndjsonRecords(file);
  return { dataType: dataType.key, format, records };
}

interface PushRun {
  results: PushResult[];
  interrupted: boolean;
  timedOut: boolean;
}

const QUIET_PROGRESS = { update() {}, done() {}, fail() {} };

/** Pushes every record, printing each outcome as it is known, then (--wait) waits for the Pending ones. */
async function pushAll(ctx: CommandContext, client: ApiClient, options: PushOptions, push: PushInput & { connectionId: string }): Promise<PushRun> {
  const { io, signal } = ctx;
  const { dataType } = push;
  const results: PushResult[] = [];
  const printer = await resultPrinter(io);
  const { startProgress } = await import('../progress.js');
  const { rateLine } = await import('../../ops/progress.js');
  const progress = endsOnce(io.stdoutIsTTY ? QUIET_PROGRESS : await startProgress(io, `Pushing ${dataType}…`));
  const startedMs = Date.now();
  const deadline = options.wait ? startedMs + (options.timeout ?? DEFAULT_WAIT_TIMEOUT_MS) : Infinity;
  // Opened before the first record is sent, so that no operation can settle unseen.
  const { writeEvents } = await import('../../client/wait-for-change.js');
  const changes = options.wait ? await openFeed(ctx, client, options, { types: writeEvents(dataType), companyId: options.company }) : undefined;
  const since = changes?.mark();
  try {
    const { pushRecords } = await import('../../ops/push/engine.js');
    let interrupted: boolean;
    try {
      ({ interrupted } = await pushRecords(client, { companyId: options.company, connectionId: push.connectionId, dataType }, push.records, {
        signal,
        onResult: (result) => {
          results.push(result);
          if (!(options.wait && result.status === 'Pending')) printer(result);
          progress.update(`Pushing ${dataType}: ${rateLine(results.length, undefined, startedMs, 'records')}`);
        },
      }));
    } catch (err) {
      progress.fail();
      printResult(io, pushDocument(options, dataType, results, err), () => {});
      throw err;
    }
    if (results.length === 0 && !interrupted) {
      progress.fail();
      throw new UsageError(`${options.file} holds no records.`, push.format === 'json' ? 'Give a JSON object, or an array of objects.' : 'Give one JSON object a line.');
    }
    progress.done(`Pushed ${results.length} ${dataType} record${results.length === 1 ? '' : 's'}.`);
    if (!options.wait || interrupted) return { results, interrupted, timedOut: false };
    const { waitForPending } = await import('../../ops/push/wait.js');
    const outcome = await waitForPending(client, options.company, results, {
      signal, deadline, firstDelayMs: options.pollMs ?? 500, onSettled: printer, log: logTo(io), ...(changes ? { changes, since } : {}),
      progress: async (text) => endsOnce(io.stdoutIsTTY ? QUIET_PROGRESS : await startProgress(io, text)),
    });
    // Still Pending when the wait stopped: show them as they are.
    for (const result of results) if (result.status === 'Pending') printer(result);
    return { results, interrupted: outcome === 'interrupted', timedOut: outcome === 'timeout' };
  } finally {
    changes?.close();
  }
}

/** The exit: interrupted, timed out with operations Pending, or some records not pushed successfully. */
function throwUnlessAllPushed(options: PushOptions, { results, interrupted, timedOut }: PushRun): void {
  const pending = results.filter((r) => r.status === 'Pending');
  const pushes = api.pushOperationsPath(options.company);
  if (interrupted) {
    throw new InterruptedError(options.wait && pending.length > 0
      ? `Stopped waiting (interrupted): ${formatCount(pending.length)} push operation${pending.length === 1 ? '' : 's'} still Pending. They were not cancelled; check them with GET ${pushes}.`
      : `Stopped (interrupted) after ${formatCount(results.length)} record${results.length === 1 ? '' : 's'}; the rest of ${options.file} was not pushed. Records already pushed stay pushed.`);
  }
  if (timedOut) {
    const keys = pending.slice(0, 5).map((r) => `${r.pushOperationKey} (line ${r.line})`).join(', ');
    throw new CliError(
      `Timed out after ${durationText(options.timeout ?? DEFAULT_WAIT_TIMEOUT_MS)} with ${formatCount(pending.length)} push operation${pending.length === 1 ? '' : 's'} still Pending: ${keys}${pending.length > 5 ? ` and ${pending.length - 5} more` : ''}.`,
      EXIT.error,
      `They were not cancelled; the platform settles them later (GET ${pushes}/KEY).`,
    );
  }
  const failed = results.filter((r) => FAILED.has(r.status)).length;
  const code = batchExitCode(results.length - failed, failed);
  if (code !== EXIT.ok) {
    throw new CliError(
      code === EXIT.error ? `None of the ${formatCount(results.length)} record${results.length === 1 ? '' : 's'} was pushed successfully.` : `${formatCount(failed)} of ${formatCount(results.length)} records were not pushed successfully.`,
      code,
      results.some((r) => r.status === 'Error') ? 'A record with status Error may or may not have been created: check the company\'s push operations before pushing it again.' : 'See each record\'s line above for the reason.',
    );
  }
}

function errorText(result: PushResult): string {
  const items = (result.validation ?? []).map((v) => `${v.itemId ? `${v.itemId}: ` : ''}${v.message}`);
  const message = result.error ?? '';
  const extra = items.filter((item) => !message.includes(item));
  return [message, ...extra].filter(Boolean).join('; ');
}

/** Prints one result line as soon as it is known: aligned on a terminal, tab-separated when piped, nothing with --json. */
async function resultPrinter(io: IO): Promise<(result: PushResult) => void> {
  if (io.mode === 'json') return () => {};
  if (io.mode === 'plain') {
    return (r) => io.out([r.line, r.pushOperationKey ?? '', r.status, errorText(r).replace(/[\t\n]/g, ' ')].join('\t'));
  }
  const { default: chalk } = await import('chalk');
  const paint = (status: PushResult['status'], text: string) => {
    if (!io.color) return text;
    if (status === 'Success') return chalk.green(text);
    if (status === 'Pending') return chalk.yellow(text);
    return chalk.red(text);
  };
  return (r) => {
    io.out(`line ${String(r.line).padEnd(6)} ${(r.pushOperationKey ?? '-').padEnd(36)}  ${paint(r.status, r.status.padEnd(8))}  ${r.error ?? ''}`.trimEnd());
    for (const item of r.validation ?? []) {
      if (r.error?.includes(item.message)) continue;
      io.out(`${' '.repeat(12)}- ${item.itemId ? `${item.itemId}: ` : ''}${item.message}`);
    }
  };
}

function tally(results: PushResult[]): string {
  const counts = new Map<string, number>();
  for (const r of results) counts.set(r.status, (counts.get(r.status) ?? 0) + 1);
  return `${formatCount(results.length)} record${results.length === 1 ? '' : 's'}: ${[...counts].map(([status, n]) => `${n} ${status}`).join(', ')}.`;
}

/** The --json document of a push run: every record's outcome in file order, and the counts. */
function pushDocument(options: PushOptions, dataType: string, results: PushResult[], error?: unknown): Record<string, unknown> {
  const sorted = [...results].sort((a, b) => a.line - b.line);
  const summary: Record<string, number> = { total: sorted.length };
  for (const r of sorted) summary[r.status] = (summary[r.status] ?? 0) + 1;
  const doc: Record<string, unknown> = { dataType, companyId: options.company, connectionId: options.connection, file: options.file, results: sorted, summary };
  if (error) doc.stoppedBy = (error as Error).message;
  return doc;
}
