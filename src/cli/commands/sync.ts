// `ferry sync`: start syncs (pulls) for one or many companies and, with --wait, follow
// them until every data type is Complete or errored, then print a per-company summary.
// Stopping the wait (Ctrl-C, --timeout) never cancels a sync: they carry on in the service.
import { Option, type Command } from 'commander';
import type { ApiClient } from '../../client/client.js';
import type { CommandContext } from '../context.js';
import {
  isFailed as isFailedStatus, isRunning as isRunningStatus, type DataStatus, type PullOperation, type WireCompany, type WireIntegration,
} from '../../client/wire.js';
import { CliError, EXIT, InterruptedError, UsageError } from '../errors.js';
import type { IO } from '../io.js';
import type { Registrar } from '../program.js';
import { pollUntil } from '../../client/poll.js';
import { DEFAULT_WAIT_TIMEOUT_MS, batchExitCode, durationArg, endsOnce, logTo } from '../waiting.js';
import { describeError, isFatal } from '../../client/errors.js';
import { durationText } from '../../lib/duration.js';
import { examples } from './group.js';

export interface SyncOptions {
  fromResults?: string;
  dataType?: string;
  wait?: boolean;
  /** Milliseconds (parsed from 90s, 10m, 1h). */
  timeout?: number;
  /** First poll delay in ms (hidden; tests). */
  pollMs?: number;
}

/** One company's line of the summary; the --json output is an array of these. */
export interface CompanySummary {
  companyId: string;
  name?: string;
  /** --wait: every data type Complete. Without --wait: the sync was queued and nothing failed yet. */
  ok: boolean;
  state: 'complete' | 'queued' | 'running' | 'failed';
  /** Data type → its pull's status (Complete, Fetching, AuthError, …). */
  dataTypes: Record<string, string>;
  /** Data type → the pull's error message, for the failed ones. */
  errors?: Record<string, string>;
  /** Why the company could not be synced at all (no Linked connection, not found, …). */
  error?: string;
}

interface Tracked {
  id?: string;
  status: string;
  errorMessage?: string;
}

interface CompanyRun {
  companyId: string;
  name?: string;
  started: boolean;
  error?: string;
  dataTypes: Map<string, Tracked>;
  /** Logged as finished (plain progress). */
  reported?: boolean;
}

const CONCURRENCY = 8;

export function register(program: Command, registrar: Registrar): void {
  program.command('sync')
    .description('Start syncs of companies\' data (every data type, or one) and optionally wait for them')
    .argument('[companyId...]', 'companies to sync')
    .option('--from-results <file>', 'also sync the migrated and skipped companies of a `ferry migrate tokens` results CSV')
    .option('--data-type <type>', 'sync only this data type (e.g. invoices) instead of every supported one')
    .option('--wait', 'wait until every data type is Complete or errored, then print a per-company summary')
    .option('--timeout <duration>', 'with --wait: stop waiting after this long, e.g. 90s, 10m, 1h (default 10m)', durationArg('--timeout'))
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

  const started = Date.now();
  const deadline = options.wait ? started + (options.timeout ?? DEFAULT_WAIT_TIMEOUT_MS) : Infinity;
  const connection = await ctx.connect();
  const { client } = connection;
  const { default: pLimit } = await import('p-limit');
  const limit = pLimit(CONCURRENCY);
  const integrations = new Map<string, Promise<WireIntegration>>();
  const integration = (key: string) => {
    let found = integrations.get(key);
    if (!found) {
      found = client.get<WireIntegration>(`/integrations/${encodeURIComponent(key)}`, { signal });
      found.catch(() => integrations.delete(key));
      integrations.set(key, found);
    }
    return found;
  };

  const { startProgress } = await import('../progress.js');
  const spinning = io.stderrIsTTY && io.color && !io.quiet && io.mode !== 'json';
  const progress = endsOnce(await startProgress(io, `Starting syncs of ${unique.length} compan${unique.length === 1 ? 'y' : 'ies'}…`));
  const runs: CompanyRun[] = unique.map((companyId) => ({ companyId, started: false, dataTypes: new Map() }));
  let stopped: 'interrupted' | 'timeout' | undefined;
  try {
    let startedCount = 0;
    await Promise.all(runs.map((run) => limit(async () => {
      if (signal.aborted) {
        run.error = 'not started (interrupted)';
        return;
      }
      await startCompany(client, run, dataType, integration, signal);
      startedCount += 1;
      progress.update(`Starting syncs: ${startedCount}/${unique.length} companies`);
      if (run.error && !spinning) log(`${label(run)}: not synced: ${run.error}`);
    })));
    const queued = runs.filter((r) => r.started).length;
    stopped = signal.aborted ? 'interrupted' : undefined;
    if (options.wait && !stopped) {
      stopped = await waitForRuns(client, runs, {
        io, signal, deadline, started, spinning, progress, limit, firstDelayMs: options.pollMs ?? 500,
      });
    } else if (stopped) {
      progress.fail(`Interrupted: queued syncs for ${queued} of ${runs.length} compan${runs.length === 1 ? 'y' : 'ies'}.`);
    } else {
      progress.done(`Queued syncs for ${queued} of ${runs.length} compan${runs.length === 1 ? 'y' : 'ies'}.`);
    }
  } catch (err) {
    progress.fail();
    throw err;
  }

  const summary = runs.map((run) => summarize(run, options.wait ?? false));
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
  const good = runs.reduce((n, r) => n + [...r.dataTypes.values()].filter((t) => (options.wait ? t.status === 'Complete' : !isFailedStatus(t.status))).length, 0);
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

function label(run: CompanyRun): string {
  return run.name ? `${run.name} (${run.companyId})` : run.companyId;
}

async function dataTypeKey(text: string): Promise<string> {
  const { DATA_TYPES, dataTypeByKey, dataTypeByPath } = await import('../../platforms/data-types.js');
  const type = dataTypeByKey(text) ?? dataTypeByPath(text);
  if (!type) throw new UsageError(`Unknown data type ${text}.`, `One of: ${DATA_TYPES.map((t) => t.key).join(', ')}.`);
  return type.key;
}


async function startCompany(
  client: ApiClient,
  run: CompanyRun,
  dataType: string | undefined,
  integration: (key: string) => Promise<WireIntegration>,
  signal: AbortSignal,
): Promise<void> {
  const base = `/companies/${encodeURIComponent(run.companyId)}`;
  try {
    const company = await client.get<WireCompany>(base, { signal });
    run.name = company.name;
    const linked = company.dataConnections.filter((c) => c.status === 'Linked');
    if (linked.length === 0) {
      const others = company.dataConnections.map((c) => `${c.platformName} ${c.status}${c.status === 'Deauthorized' ? ': reauthorization required' : ''}`);
      run.error = `no Linked connection${others.length ? ` (${others.join('; ')})` : ' (it has no connections)'}`;
      return;
    }
    // Queuing is safe to repeat: a data set with an open pull answers that pull instead of queuing another.
    if (dataType) {
      const pull = await client.post<PullOperation>(`${base}/data/queue/${encodeURIComponent(dataType)}`, undefined, { signal, idempotent: true });
      run.dataTypes.set(pull.dataType, trackedFrom(pull));
    } else {
      await client.post(`${base}/data/all`, undefined, { signal, idempotent: true });
      const types = new Set<string>();
      for (const c of linked) for (const t of (await integration(c.integrationKey)).dataTypes) types.add(t);
      const status = await client.get<DataStatus>(`${base}/dataStatus`, { signal });
      for (const t of types) {
        const entry = status[t];
        run.dataTypes.set(t, entry?.latestSyncId
          ? { id: entry.latestSyncId, status: entry.currentStatus }
          : { status: 'NotQueued', errorMessage: 'the service queued no pull for this data type' });
      }
    }
    run.started = true;
    for (const tracked of run.dataTypes.values()) if (isFailedStatus(tracked.status) && tracked.errorMessage === undefined) await readPull(client, run, tracked, signal);
  } catch (err) {
    if (signal.aborted) {
      run.error ??= 'not started (interrupted)';
      return;
    }
    if (isFatal(err)) throw err;
    run.error = describeError(err);
  }
}

function trackedFrom(pull: PullOperation): Tracked {
  const tracked: Tracked = { id: pull.id, status: pull.status };
  const message = pull.errorMessage ?? pull.statusDescription;
  if (isFailedStatus(pull.status) && message) tracked.errorMessage = message;
  return tracked;
}

/** One pull's status and message from its history record (dataStatus carries only the latest pull's status). */
async function readPull(client: ApiClient, run: CompanyRun, tracked: Tracked, signal: AbortSignal): Promise<void> {
  if (!tracked.id) return;
  try {
    const pull = await client.get<PullOperation>(`/companies/${encodeURIComponent(run.companyId)}/data/history/${encodeURIComponent(tracked.id)}`, { signal });
    tracked.status = pull.status;
    const message = pull.errorMessage ?? pull.statusDescription;
    if (message) tracked.errorMessage = message;
  } catch {
    // The status alone still says what happened; the next round asks again if it is still running.
  }
}

interface WaitDeps {
  io: IO;
  signal: AbortSignal;
  deadline: number;
  started: number;
  spinning: boolean;
  progress: { update(text: string): void; done(text?: string): void; fail(text?: string): void };
  limit: <T>(fn: () => Promise<T>) => Promise<T>;
  firstDelayMs: number;
}

/** Polls until every queued data type has finished; returns why it stopped early, if it did. */
async function waitForRuns(client: ApiClient, runs: CompanyRun[], deps: WaitDeps): Promise<'interrupted' | 'timeout' | undefined> {
  const { io, signal, deadline, progress } = deps;
  const log = logTo(io);
  const { formatDuration } = await import('../../ops/progress.js');
  const pending = () => runs.filter((r) => r.started && !r.error && [...r.dataTypes.values()].some((t) => isRunningStatus(t.status)));
  const warned = new Set<string>();
  const line = () => {
    const withTypes = runs.filter((r) => r.started);
    const types = withTypes.flatMap((r) => [...r.dataTypes.values()]);
    const done = runs.length - pending().length;
    const complete = types.filter((t) => t.status === 'Complete').length;
    const errors = types.filter((t) => isFailedStatus(t.status)).length + runs.filter((r) => r.error).length;
    return `Syncing: companies ${done}/${runs.length} done · data types ${complete}/${types.length} complete · ${errors} error${errors === 1 ? '' : 's'} · ${formatDuration((Date.now() - deps.started) / 1000)}`;
  };
  const reportFinished = () => {
    if (deps.spinning) return;
    for (const run of runs) {
      if (run.reported || !run.started || run.error || [...run.dataTypes.values()].some((t) => isRunningStatus(t.status))) continue;
      run.reported = true;
      const summary = summarize(run, true);
      log(`${label(run)}: ${summary.state}${summary.state === 'failed' ? ` (${failureDetail(summary)})` : ''}`);
    }
  };
  const refresh = async (run: CompanyRun) => {
    const base = `/companies/${encodeURIComponent(run.companyId)}`;
    try {
      const status = await client.get<DataStatus>(`${base}/dataStatus`, { signal });
      for (const [dataType, tracked] of run.dataTypes) {
        if (!isRunningStatus(tracked.status)) continue;
        const entry = status[dataType];
        if (entry && entry.latestSyncId === tracked.id) {
          tracked.status = entry.currentStatus;
          if (isFailedStatus(tracked.status)) await readPull(client, run, tracked, signal);
        } else if (tracked.id) {
          // A newer pull replaced ours as the latest (e.g. a scheduled sync): read ours from the history.
          await readPull(client, run, tracked, signal);
        }
      }
    } catch (err) {
      if (signal.aborted) return;
      if (isFatal(err)) throw err;
      const { ApiRequestError } = await import('../../client/errors.js');
      if (err instanceof ApiRequestError && err.status === 404) {
        run.error = `the company disappeared while waiting (${describeError(err)})`;
        return;
      }
      if (!warned.has(run.companyId)) {
        warned.add(run.companyId);
        log(`${label(run)}: could not read its sync status (${describeError(err)}); still trying.`);
      }
    }
  };

  reportFinished();
  progress.update(line());
  await pollUntil({
    signal,
    deadline,
    firstDelayMs: deps.firstDelayMs,
    done: () => pending().length === 0,
    round: async () => {
      await Promise.all(pending().map((run) => deps.limit(() => refresh(run))));
      reportFinished();
      progress.update(line());
    },
  });
  if (signal.aborted) {
    progress.fail(`${line()} · stopped waiting`);
    return 'interrupted';
  }
  if (pending().length > 0) {
    progress.fail(`${line()} · timed out`);
    return 'timeout';
  }
  const failed = runs.some((r) => r.error || [...r.dataTypes.values()].some((t) => isFailedStatus(t.status)));
  if (failed) progress.fail(line());
  else progress.done(line());
  return undefined;
}

function summarize(run: CompanyRun, waited: boolean): CompanySummary {
  const dataTypes: Record<string, string> = {};
  const errors: Record<string, string> = {};
  for (const [type, tracked] of run.dataTypes) {
    dataTypes[type] = tracked.status;
    if (isFailedStatus(tracked.status)) errors[type] = tracked.errorMessage ?? tracked.status;
  }
  const statuses = Object.values(dataTypes);
  const anyFailed = Boolean(run.error) || !run.started || statuses.some(isFailedStatus);
  const anyRunning = statuses.some(isRunningStatus);
  const state: CompanySummary['state'] = anyFailed ? 'failed' : anyRunning ? (waited ? 'running' : 'queued') : 'complete';
  const summary: CompanySummary = {
    companyId: run.companyId,
    ...(run.name !== undefined ? { name: run.name } : {}),
    ok: waited ? state === 'complete' : !anyFailed,
    state,
    dataTypes,
  };
  if (Object.keys(errors).length > 0) summary.errors = errors;
  if (run.error) summary.error = run.error;
  return summary;
}

/** Failed data types grouped by status: "AuthError (all 18 data types): Reauthorization required: …". */
function failureDetail(summary: CompanySummary): string {
  if (summary.error) return summary.error;
  const total = Object.keys(summary.dataTypes).length;
  const groups = new Map<string, string[]>();
  for (const type of Object.keys(summary.errors ?? {})) {
    const status = summary.dataTypes[type]!;
    groups.set(status, [...(groups.get(status) ?? []), type]);
  }
  return [...groups].map(([status, types]) => {
    const which = types.length === total && total > 1 ? `all ${total} data types` : types.length <= 3 ? types.join(', ') : `${types.length} data types`;
    const message = summary.errors![types[0]!]!;
    return `${status} (${which})${message !== status ? `: ${message}` : ''}`;
  }).join('; ');
}

function detailOf(summary: CompanySummary): string {
  if (summary.state === 'failed') return failureDetail(summary);
  const running = Object.entries(summary.dataTypes).filter(([, s]) => isRunningStatus(s));
  if (running.length > 0 && summary.state === 'running') return running.map(([t, s]) => `${t} ${s}`).join(', ');
  return '';
}

function stillRunning(runs: CompanyRun[]): string {
  const open = runs.filter((r) => r.started && !r.error && [...r.dataTypes.values()].some((t) => isRunningStatus(t.status)));
  const parts = open.slice(0, 5).map((r) => `${label(r)}: ${[...r.dataTypes].filter(([, t]) => isRunningStatus(t.status)).map(([type, t]) => `${type} ${t.status}`).join(', ')}`);
  return parts.join('; ') + (open.length > 5 ? `; and ${open.length - 5} more compan${open.length - 5 === 1 ? 'y' : 'ies'}` : '');
}

async function printSummary(io: IO, summary: CompanySummary[]): Promise<void> {
  if (io.mode === 'json') {
    io.json(summary);
    return;
  }
  const { printTable } = await import('../output.js');
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
}
