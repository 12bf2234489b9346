// One company's sync as `ferry sync` follows it: started (every data type, or one),
// tracked data type by data type, and summed up in one line of the summary.
import * as api from '../../client/api.js';
import type { ApiClient } from '../../client/client.js';
import { describeError, isFatal } from '../../client/errors.js';
import { isFailed as isFailedStatus, isRunning as isRunningStatus, type PullOperation, type WireCompany } from '../../client/wire.js';
import { formatCount } from '../progress.js';

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

export interface Tracked {
  id?: string;
  status: string;
  errorMessage?: string;
}

export interface CompanyRun {
  companyId: string;
  name?: string;
  started: boolean;
  error?: string;
  dataTypes: Map<string, Tracked>;
  /**
   * How the run found it: complete in the journal, or (asked against the run's start)
   * already complete, with its pulls already queued or running (nothing queued), or queued now.
   */
  found?: 'journal' | 'complete' | 'waiting' | 'queued';
  /** Logged as finished (plain progress). */
  reported?: boolean;
}

export function label(run: CompanyRun): string {
  return run.name ? `${run.name} (${run.companyId})` : run.companyId;
}

/**
 * Queues the company's sync (every data type, or one) and notes the pulls to follow. With
 * `completeSince` (epoch ms on the service's clock: a resumed run's start, a results file's
 * time), it asks first: a data type read since then is done, one whose pull is queued or
 * running is followed as it is, and only the others are queued.
 */
export async function startCompany(
  client: ApiClient,
  run: CompanyRun,
  dataType: string | undefined,
  integration: (key: string) => Promise<{ dataTypes: string[] }>,
  signal: AbortSignal,
  completeSince?: number,
  interactive?: boolean,
): Promise<void> {
  try {
    const company = await api.company<WireCompany>(client, run.companyId, signal);
    run.name = company.name;
    const linked = company.dataConnections.filter((c) => c.status === 'Linked');
    if (linked.length === 0) {
      const others = company.dataConnections.map((c) => `${c.platformName} ${c.status}${c.status === 'Deauthorized' ? ': reauthorization required' : ''}`);
      run.error = `no Linked connection${others.length ? ` (${others.join('; ')})` : ' (it has no connections)'}`;
      return;
    }
    const types = new Set<string>();
    if (dataType) types.add(dataType);
    else for (const c of linked) for (const t of (await integration(c.integrationKey)).dataTypes) types.add(t);
    let asked = completeSince === undefined ? undefined : await followUnfinished(client, run, types, completeSince, signal);
    // Nothing ferry or the service knows of to judge: queue as a fresh run does.
    if (types.size === 0) asked = undefined;
    if (asked && asked.length === 0) {
      run.found = [...run.dataTypes.values()].every((t) => t.status === 'Complete') ? 'complete' : 'waiting';
    } else if (asked && (dataType || asked.length < types.size)) {
      // Some data types are done or under way: queue only the others.
      for (const t of asked) run.dataTypes.set(t, trackedFrom(await api.syncDataType(client, run.companyId, t, signal, interactive)));
      run.found = 'queued';
    } else if (dataType) {
      // Queuing is safe to repeat: a data set with an open pull answers that pull instead of queuing another.
      const pull = await api.syncDataType(client, run.companyId, dataType, signal, interactive);
      run.dataTypes.set(pull.dataType, trackedFrom(pull));
      run.found = 'queued';
    } else {
      await api.syncAll(client, run.companyId, signal, interactive);
      const status = await api.dataStatus(client, run.companyId, signal);
      // An integration ferry does not know: follow whatever the service queued for it.
      if (types.size === 0) for (const [t, entry] of Object.entries(status)) if (entry?.latestSyncId) types.add(t);
      for (const t of types) {
        const entry = status[t];
        run.dataTypes.set(t, entry?.latestSyncId
          ? { id: entry.latestSyncId, status: entry.currentStatus }
          : { status: 'NotQueued', errorMessage: 'the service queued no pull for this data type' });
      }
      run.found = 'queued';
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

/**
 * Follows the data types read since `since` (as Complete) and those with a pull queued or
 * running; returns the ones left to queue. For a platform whose data types ferry does not
 * know (`types` empty), the service's data sets are the ones followed.
 */
async function followUnfinished(client: ApiClient, run: CompanyRun, types: Set<string>, since: number, signal: AbortSignal): Promise<string[]> {
  const status = await api.dataStatus(client, run.companyId, signal);
  if (types.size === 0) for (const [t, entry] of Object.entries(status)) if (entry?.latestSyncId) types.add(t);
  const left: string[] = [];
  for (const t of types) {
    const entry = status[t];
    const readAt = entry?.lastSuccessfulSync ? Date.parse(entry.lastSuccessfulSync) : Number.NaN;
    if (entry && readAt >= since) run.dataTypes.set(t, { ...(entry.latestSuccessfulSyncId ? { id: entry.latestSuccessfulSyncId } : {}), status: 'Complete' });
    else if (entry?.latestSyncId && isRunningStatus(entry.currentStatus)) run.dataTypes.set(t, { id: entry.latestSyncId, status: entry.currentStatus });
    else left.push(t);
  }
  return left;
}

function trackedFrom(pull: PullOperation): Tracked {
  const tracked: Tracked = { id: pull.id, status: pull.status };
  const message = pull.errorMessage ?? pull.statusDescription;
  if (isFailedStatus(pull.status) && message) tracked.errorMessage = message;
  return tracked;
}

/** One pull's status and message from its history record (dataStatus carries only the latest pull's status). */
export async function readPull(client: ApiClient, run: CompanyRun, tracked: Tracked, signal: AbortSignal): Promise<void> {
  if (!tracked.id) return;
  try {
    const pull = await api.pull(client, run.companyId, tracked.id, signal);
    tracked.status = pull.status;
    const message = pull.errorMessage ?? pull.statusDescription;
    if (message) tracked.errorMessage = message;
  } catch {
    // The status alone still says what happened; the next round asks again if it is still running.
  }
}

export function summarize(run: CompanyRun, waited: boolean): CompanySummary {
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
export function failureDetail(summary: CompanySummary): string {
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

export function detailOf(summary: CompanySummary): string {
  if (summary.state === 'failed') return failureDetail(summary);
  const running = Object.entries(summary.dataTypes).filter(([, s]) => isRunningStatus(s));
  if (running.length > 0 && summary.state === 'running') return running.map(([t, s]) => `${t} ${s}`).join(', ');
  return '';
}

/** Companies by state when a wait stops; `queued` are those whose unfinished pulls have none begun yet. */
export interface StateCounts {
  complete: number;
  running: number;
  queued: number;
  failed: number;
}

/** A pull in these states has not begun: it waits for a worker. */
const WAITING = new Set(['Initial', 'Queued']);

export function stateCounts(runs: CompanyRun[]): StateCounts {
  const counts: StateCounts = { complete: 0, running: 0, queued: 0, failed: 0 };
  for (const run of runs) {
    const { state } = summarize(run, true);
    if (state !== 'running') counts[state] += 1;
    else counts[[...run.dataTypes.values()].every((t) => !isRunningStatus(t.status) || WAITING.has(t.status)) ? 'queued' : 'running'] += 1;
  }
  return counts;
}

/** The first few unfinished companies and what they wait for, kept short whatever their number: "Acme (id): invoices Fetching, bills Queued; …". */
export function stillRunning(runs: CompanyRun[], companies = 3): string {
  const open = runs.filter((r) => r.started && !r.error && [...r.dataTypes.values()].some((t) => isRunningStatus(t.status)));
  const parts = open.slice(0, companies).map((r) => {
    const running = [...r.dataTypes].filter(([, t]) => isRunningStatus(t.status));
    if (running.length <= 3) return `${label(r)}: ${running.map(([type, t]) => `${type} ${t.status}`).join(', ')}`;
    const byStatus = new Map<string, number>();
    for (const [, t] of running) byStatus.set(t.status, (byStatus.get(t.status) ?? 0) + 1);
    return `${label(r)}: ${running.length} data types (${[...byStatus].map(([status, n]) => `${n} ${status}`).join(', ')})`;
  });
  const more = open.length - parts.length;
  return parts.join('; ') + (more > 0 ? `; and ${formatCount(more)} more compan${more === 1 ? 'y' : 'ies'}` : '');
}
