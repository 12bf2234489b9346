// `ferry push DATA_TYPE`: create records on a company's platform through push operations,
// one POST per record of a .json (an object or an array) or .ndjson file (streamed). A push
// POST is not idempotent, so a record whose outcome is unclear is reported, never resent.
import { Option, type Command } from 'commander';
import type { ApiClient } from '../../client/client.js';
import type { CommandContext } from '../context.js';
import type { PushOperation, ValidationItem, WireConnection } from '../../client/wire.js';
import { CliError, EXIT, InterruptedError, UsageError } from '../errors.js';
import type { IO } from '../io.js';
import type { Registrar } from '../program.js';
import { pollUntil } from '../../client/poll.js';
import { DEFAULT_WAIT_TIMEOUT_MS, batchExitCode, durationArg, endsOnce, logTo } from '../waiting.js';
import { describeError, isFatal } from '../../client/errors.js';
import { durationText } from '../../lib/duration.js';
import { examples } from './group.js';

export interface PushOptions {
  company: string;
  connection: string;
  file: string;
  wait?: boolean;
  /** Milliseconds (parsed from 90s, 10m, 1h). */
  timeout?: number;
  /** First poll delay in ms (hidden; tests). */
  pollMs?: number;
}

/**
 * One record's outcome. Success, Failed, Pending and TimedOut are the push operation's
 * status; Rejected: the service refused the record (400) and created no push operation;
 * Invalid: the file's record is not a JSON object, nothing was sent; Error: the request
 * failed in a way that leaves the outcome unknown (check the push list before resending).
 */
export interface PushResult {
  /** Line of the file where the record starts (1-based). */
  line: number;
  status: 'Success' | 'Failed' | 'Pending' | 'TimedOut' | 'Rejected' | 'Invalid' | 'Error';
  pushOperationKey?: string;
  /** The push operation's statusCode, or the HTTP status of a rejection. */
  statusCode?: number;
  error?: string;
  validation?: ValidationItem[];
  correlationId?: string;
}

const FAILED = new Set<PushResult['status']>(['Failed', 'TimedOut', 'Rejected', 'Invalid', 'Error']);
const CONCURRENCY = 8;

export function register(program: Command, registrar: Registrar): void {
  program.command('push')
    .description('Create records on a company\'s platform (push operations) from a .json or .ndjson file')
    .argument('<dataType>', 'what to create, e.g. invoices, customers, bills')
    .requiredOption('--company <id>', 'the company')
    .requiredOption('--connection <id>', 'the Linked connection to push to')
    .requiredOption('--file <file>', 'one record (.json object), or many (.json array, or .ndjson: one object a line)')
    .option('--wait', 'wait until every Pending push operation is Success, Failed or TimedOut')
    .option('--timeout <duration>', 'with --wait: stop waiting after this long, e.g. 90s, 10m, 1h (default 10m)', durationArg('--timeout'))
    .addOption(new Option('--poll-ms <ms>', 'first poll delay in ms').hideHelp().argParser((v) => Math.max(10, Number(v) || 500)))
    .addHelpText('after', examples(
      'ferry push customers --company 3f0c… --connection 9a1d… --file customer.json',
      'ferry push invoices --company 3f0c… --connection 9a1d… --file invoices.ndjson --wait',
      'ferry push invoices --company 3f0c… --connection 9a1d… --file invoices.json --json > results.json',
    ))
    .action(registrar.action(runPush));
}

interface FileRecord {
  line: number;
  value?: unknown;
  problem?: string;
}

export async function runPush(options: PushOptions, ctx: CommandContext, [dataTypeArg]: string[]): Promise<void> {
  const { io, signal } = ctx;
  if (options.timeout !== undefined && !options.wait) throw new UsageError('--timeout only applies with --wait.', 'Add --wait, or drop --timeout.');
  const { DATA_TYPES, dataTypeByKey, dataTypeByPath } = await import('../../platforms/data-types.js');
  const dataType = dataTypeByKey(dataTypeArg!) ?? dataTypeByPath(dataTypeArg!);
  const pushable = DATA_TYPES.filter((t) => t.pushable).map((t) => t.key).join(', ');
  if (!dataType) throw new UsageError(`Unknown data type ${dataTypeArg}.`, `Pushable data types: ${pushable}.`);
  if (!dataType.pushable) throw new UsageError(`${dataType.key} records cannot be pushed.`, `Pushable data types: ${pushable}.`);
  const format = fileFormat(options.file);
  const { statSync } = await import('node:fs');
  try {
    if (!statSync(options.file).isFile()) throw new Error('not a file');
  } catch (err) {
    throw new UsageError(`Cannot read --file ${options.file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}.`);
  }
  // A whole .json file is parsed before anything is sent, so a syntax error sends nothing.
  const records = format === 'json' ? await jsonFileRecords(options.file) : ndjsonRecords(options.file);

  const { client } = await ctx.connect();
  const companyPath = `/companies/${encodeURIComponent(options.company)}`;
  const connection = await client.get<WireConnection>(`${companyPath}/connections/${encodeURIComponent(options.connection)}`, { signal });
  if (connection.status !== 'Linked') {
    const { connectionStatusText } = await import('../../client/wire.js');
    throw new CliError(
      `Connection ${connection.id} (${connection.platformName}) is ${connectionStatusText(connection)}; only a Linked connection can push. Nothing was pushed.`,
      EXIT.error,
      connection.status === 'Deauthorized' || connection.status === 'PendingAuth'
        ? `Authorize it: ferry connections authorize --company ${options.company} --connection ${connection.id} --tokens-file FILE`
        : undefined,
    );
  }

  const results: PushResult[] = [];
  const printer = await resultPrinter(io);
  const { startProgress } = await import('../progress.js');
  const { rateLine } = await import('../../ops/progress.js');
  const progress = endsOnce(io.stdoutIsTTY ? { update() {}, done() {}, fail() {} } : await startProgress(io, `Pushing ${dataType.key}…`));
  const startedMs = Date.now();
  const deadline = options.wait ? startedMs + (options.timeout ?? DEFAULT_WAIT_TIMEOUT_MS) : Infinity;
  const finish = (result: PushResult) => {
    results.push(result);
    if (!(options.wait && result.status === 'Pending')) printer(result);
  };
  const pushPath = `${companyPath}/connections/${encodeURIComponent(connection.id)}/push/${encodeURIComponent(dataType.key)}`;
  let interrupted = false;
  try {
    for await (const record of records) {
      if (signal.aborted) {
        interrupted = true;
        break;
      }
      if (record.problem !== undefined) {
        finish({ line: record.line, status: 'Invalid', error: record.problem });
        continue;
      }
      // No signal: the record in flight finishes (a push cannot be taken back, and an aborted POST leaves its outcome unknown).
      const { result, stop } = await pushOne(client, pushPath, record);
      finish(result);
      if (stop) throw stop;
      progress.update(`Pushing ${dataType.key}: ${rateLine(results.length, undefined, startedMs, 'records')}`);
    }
  } catch (err) {
    progress.fail();
    if (io.mode === 'json') printJson(io, options, dataType.key, results, err);
    throw err;
  }
  if (results.length === 0 && !interrupted) {
    progress.fail();
    throw new UsageError(`${options.file} holds no records.`, format === 'json' ? 'Give a JSON object, or an array of objects.' : 'Give one JSON object a line.');
  }
  progress.done(`Pushed ${results.length} ${dataType.key} record${results.length === 1 ? '' : 's'}.`);

  let timedOut = false;
  if (options.wait && !interrupted) {
    const outcome = await waitForPending(client, companyPath, results, { io, signal, deadline, firstDelayMs: options.pollMs ?? 500, onSettled: printer });
    interrupted = outcome === 'interrupted';
    timedOut = outcome === 'timeout';
    // Still Pending when the wait stopped: show them as they are.
    for (const result of results) if (result.status === 'Pending') printer(result);
  }

  if (io.mode === 'json') printJson(io, options, dataType.key, results);
  else io.err(tally(results));

  const pending = results.filter((r) => r.status === 'Pending');
  if (interrupted) {
    throw new InterruptedError(options.wait && pending.length > 0
      ? `Stopped waiting (interrupted): ${pending.length} push operation${pending.length === 1 ? '' : 's'} still Pending. They were not cancelled; check them with GET ${companyPath}/push.`
      : `Stopped (interrupted) after ${results.length} record${results.length === 1 ? '' : 's'}; the rest of ${options.file} was not pushed. Records already pushed stay pushed.`);
  }
  if (timedOut) {
    const keys = pending.slice(0, 5).map((r) => `${r.pushOperationKey} (line ${r.line})`).join(', ');
    throw new CliError(
      `Timed out after ${durationText(options.timeout ?? DEFAULT_WAIT_TIMEOUT_MS)} with ${pending.length} push operation${pending.length === 1 ? '' : 's'} still Pending: ${keys}${pending.length > 5 ? ` and ${pending.length - 5} more` : ''}.`,
      EXIT.error,
      `They were not cancelled; the platform settles them later (GET ${companyPath}/push/KEY).`,
    );
  }
  const failed = results.filter((r) => FAILED.has(r.status)).length;
  const code = batchExitCode(results.length - failed, failed);
  if (code !== EXIT.ok) {
    throw new CliError(
      code === EXIT.error ? `None of the ${results.length} record${results.length === 1 ? '' : 's'} was pushed successfully.` : `${failed} of ${results.length} records were not pushed successfully.`,
      code,
      results.some((r) => r.status === 'Error') ? 'A record with status Error may or may not have been created: check the company\'s push operations before pushing it again.' : 'See each record\'s line above for the reason.',
    );
  }
}

/**
 * One POST. A 400 is this record's rejection; 401/402/403/404 are the run's (thrown); a
 * 5xx or a broken connection leaves the outcome unknown: an Error result, and a broken
 * connection also stops the run (`stop`) once its line is recorded.
 */
async function pushOne(client: ApiClient, path: string, record: FileRecord): Promise<{ result: PushResult; stop?: unknown }> {
  try {
    const push = await client.post<PushOperation>(path, record.value);
    const result: PushResult = { line: record.line, status: push.status, pushOperationKey: push.pushOperationKey, statusCode: push.statusCode };
    return { result: withOutcome(result, push) };
  } catch (err) {
    const { ApiRequestError, ConnectionError } = await import('../../client/errors.js');
    if (err instanceof ApiRequestError && err.status === 400) {
      const result: PushResult = { line: record.line, status: 'Rejected', statusCode: 400, error: err.message };
      if (err.validation.length) result.validation = err.validation;
      if (err.correlationId) result.correlationId = err.correlationId;
      return { result };
    }
    if (err instanceof ApiRequestError && (isFatal(err) || err.status === 404)) throw err;
    // After its own retries the client gives up on 429/503 only when the service never acted.
    const notCreated = err instanceof ApiRequestError && (err.status === 429 || err.status === 503);
    const result: PushResult = {
      line: record.line,
      status: 'Error',
      error: `${describeError(err)}; ${notCreated ? 'the service did not create it' : 'the push may or may not have been created, so it was not resent'}`,
    };
    if (err instanceof ApiRequestError) {
      result.statusCode = err.status;
      if (err.correlationId) result.correlationId = err.correlationId;
    }
    return err instanceof ConnectionError ? { result, stop: err } : { result };
  }
}

function withOutcome(result: PushResult, push: PushOperation): PushResult {
  result.status = push.status;
  result.statusCode = push.statusCode;
  if (push.errorMessage) result.error = push.errorMessage;
  else delete result.error;
  if (push.validation?.errors?.length) result.validation = push.validation.errors;
  return result;
}

interface WaitDeps {
  io: IO;
  signal: AbortSignal;
  deadline: number;
  firstDelayMs: number;
  onSettled(result: PushResult): void;
}

async function waitForPending(client: ApiClient, companyPath: string, results: PushResult[], deps: WaitDeps): Promise<'interrupted' | 'timeout' | undefined> {
  const { io, signal, deadline } = deps;
  const pending = () => results.filter((r) => r.status === 'Pending');
  if (pending().length === 0) return undefined;
  const { startProgress } = await import('../progress.js');
  const { default: pLimit } = await import('p-limit');
  const limit = pLimit(CONCURRENCY);
  const progress = endsOnce(io.stdoutIsTTY ? { update() {}, done() {}, fail() {} } : await startProgress(io, `Waiting for ${pending().length} pending push operations…`));
  const warned = new Set<string>();
  try {
    await pollUntil({ signal, deadline, firstDelayMs: deps.firstDelayMs, done: () => pending().length === 0, round: async () => {
      await Promise.all(pending().map((result) => limit(async () => {
        try {
          const push = await client.get<PushOperation>(`${companyPath}/push/${encodeURIComponent(result.pushOperationKey!)}`, { signal });
          if (push.status === 'Pending') return;
          withOutcome(result, push);
          deps.onSettled(result);
        } catch (err) {
          if (signal.aborted) return;
          if (isFatal(err)) throw err;
          if (!warned.has(result.pushOperationKey!)) {
            warned.add(result.pushOperationKey!);
            logTo(io)(`line ${result.line}: could not read push operation ${result.pushOperationKey} (${describeError(err)}); still trying.`);
          }
        }
      })));
      progress.update(`Waiting for ${pending().length} pending push operation${pending().length === 1 ? '' : 's'}…`);
    } });
  } catch (err) {
    progress.fail();
    throw err;
  }
  if (signal.aborted) {
    progress.fail('Stopped waiting.');
    return 'interrupted';
  }
  if (pending().length > 0) {
    progress.fail('Timed out.');
    return 'timeout';
  }
  progress.done('Every push operation has settled.');
  return undefined;
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
  return `${results.length} record${results.length === 1 ? '' : 's'}: ${[...counts].map(([status, n]) => `${n} ${status}`).join(', ')}.`;
}

function printJson(io: IO, options: PushOptions, dataType: string, results: PushResult[], error?: unknown): void {
  const sorted = [...results].sort((a, b) => a.line - b.line);
  const summary: Record<string, number> = { total: sorted.length };
  for (const r of sorted) summary[r.status] = (summary[r.status] ?? 0) + 1;
  const doc: Record<string, unknown> = { dataType, companyId: options.company, connectionId: options.connection, file: options.file, results: sorted, summary };
  if (error) doc.stoppedBy = (error as Error).message;
  io.json(doc);
}

function fileFormat(file: string): 'json' | 'ndjson' {
  const lower = file.toLowerCase();
  if (lower.endsWith('.json')) return 'json';
  if (lower.endsWith('.ndjson') || lower.endsWith('.jsonl')) return 'ndjson';
  throw new UsageError(`--file ${file} must end in .json or .ndjson.`, 'A .json file holds one object or an array of objects; a .ndjson file one object a line.');
}

function problemOf(value: unknown): string | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? undefined : `not a JSON object (${Array.isArray(value) ? 'an array' : value === null ? 'null' : typeof value})`;
}

/** One object a line, streamed; blank lines are skipped; a line that is not an object is an Invalid result. */
async function* ndjsonRecords(file: string): AsyncGenerator<FileRecord> {
  const { createReadStream } = await import('node:fs');
  const { createInterface } = await import('node:readline');
  const lines = createInterface({ input: createReadStream(file, { encoding: 'utf8' }), crlfDelay: Infinity });
  let line = 0;
  for await (const raw of lines) {
    line += 1;
    const text = (line === 1 ? raw.replace(/^\uFEFF/, '') : raw).trim();
    if (text === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      yield { line, problem: `not valid JSON: ${(err as Error).message}` };
      continue;
    }
    const problem = problemOf(value);
    yield problem ? { line, problem } : { line, value };
  }
}

async function jsonFileRecords(file: string): Promise<FileRecord[]> {
  const { readFileSync } = await import('node:fs');
  const text = readFileSync(file, 'utf8').replace(/^\uFEFF/, '');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${file} is not valid JSON: ${(err as Error).message}. Nothing was pushed.`, 'For one record a line, name the file .ndjson.');
  }
  if (Array.isArray(value)) {
    const lines = arrayElementLines(text);
    return value.map((item, i) => {
      const line = lines[i] ?? 1;
      const problem = problemOf(item);
      return problem ? { line, problem } : { line, value: item };
    });
  }
  const problem = problemOf(value);
  if (problem) throw new UsageError(`${file} must hold a JSON object or an array of objects; it holds ${problem.replace(/^not a JSON object \((.*)\)$/, '$1')}.`);
  return [{ line: text.slice(0, text.search(/\S/) + 1).split('\n').length, value }];
}

/** The 1-based line where each element of a top-level JSON array starts (the text is valid JSON). */
export function arrayElementLines(text: string): number[] {
  const lines: number[] = [];
  let line = 1;
  let depth = 0;
  let inString = false;
  let escaped = false;
  let expectValue = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i]!;
    if (c === '\n') line += 1;
    if (inString) {
      if (escaped) escaped = false;
      else if (c === '\\') escaped = true;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === ' ' || c === '\t' || c === '\r' || c === '\n') continue;
    if (depth === 1 && expectValue && c !== ']') {
      lines.push(line);
      expectValue = false;
    }
    if (c === '"') inString = true;
    else if (c === '[' || c === '{') {
      depth += 1;
      if (depth === 1) expectValue = true;
    } else if (c === ']' || c === '}') depth -= 1;
    else if (c === ',' && depth === 1) expectValue = true;
  }
  return lines;
}
