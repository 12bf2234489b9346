// Three of the check's criteria, each a look at the service with its evidence: a fresh
// sync of every data type (queued, then waited for, with transient failures queued
// again), the data sets as they are (--no-sync: what has been read), and a read of every data type.
import * as api from '../../client/api.js';
import type { ApiClient } from '../../client/client.js';
import { ApiRequestError, describeError } from '../../client/errors.js';
import { pollUntil } from '../../client/poll.js';
import { eventCompanyId } from '../../client/wait-for-change.js';
import type { ChangeEvent, ChangeFeed } from '../../client/change-feed.js';
import { isFailed, isRunning } from '../../client/wire.js';
import { durationText } from '../../lib/duration.js';
import { dataTypeByKey } from '../../platforms/data-types.js';
import type { CheckOptions, Criterion } from './types.js';
import { formatCount } from '../progress.js';

const TRANSIENT = new Set(['InternalError', 'FetchError', 'RateLimitError']);

export interface Tracked {
  id?: string;
  status: string;
  attempts: number;
  error?: string;
  finishedMs?: number;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

export async function freshSync(client: ApiClient, companyId: string, types: string[], tracked: Map<string, Tracked>, options: CheckOptions, changes?: ChangeFeed): Promise<Criterion> {
  const { signal } = options;
  const started = Date.now();
  // Events from here on may end the pulls about to be queued.
  const since = changes?.mark();
  const deadline = started + options.timeoutMs;
  const retries = options.retries ?? 2;
  // Queuing is safe to repeat: an open pull is answered instead of a second one.
  // Someone waits on this one company: the service's interactive lane.
  await api.syncAll(client, companyId, signal, true);
  const first = await api.dataStatus(client, companyId, signal);
  for (const type of types) {
    const entry = first[type];
    tracked.set(type, entry?.latestSyncId
      ? { id: entry.latestSyncId, status: entry.currentStatus, attempts: 1 }
      : { status: 'NotQueued', attempts: 0, error: 'the service queued no pull for this data type' });
  }
  const open = () => [...tracked.values()].filter((t) => isRunning(t.status));
  const settle = async (type: string, t: Tracked) => {
    if (isRunning(t.status)) return;
    t.finishedMs ??= Date.now();
    if (t.status === 'Complete' || !t.id) return;
    const pull = await api.pull(client, companyId, t.id, signal).catch(() => undefined);
    if (pull) {
      t.status = pull.status;
      t.error = pull.errorMessage ?? pull.statusDescription ?? t.status;
    }
    if (TRANSIENT.has(t.status) && t.attempts <= retries) {
      const again = await api.syncDataType(client, companyId, type, signal, true);
      t.id = again.id;
      t.status = again.status;
      t.attempts += 1;
      delete t.finishedMs;
    }
  };
  for (const [type, t] of tracked) await settle(type, t);
  const wake = changes && { feed: changes, since, relevant: (event: ChangeEvent) => eventCompanyId(event) === companyId };
  await pollUntil({ signal, deadline, firstDelayMs: options.pollMs ?? 500, done: () => open().length === 0, ...(wake ? { wake } : {}), round: async () => {
    const status = await api.dataStatus(client, companyId, signal);
    for (const [type, t] of tracked) {
      if (!isRunning(t.status)) continue;
      const entry = status[type];
      if (entry && entry.latestSyncId === t.id) t.status = entry.currentStatus;
      else if (t.id) {
        // A newer pull replaced ours as the latest: read ours from the history.
        const pull = await api.pull(client, companyId, t.id, signal).catch(() => undefined);
        if (pull) t.status = pull.status;
      }
      await settle(type, t);
    }
  } });
  const seconds = Math.round((Math.max(started, ...[...tracked.values()].map((t) => t.finishedMs ?? Date.now())) - started) / 100) / 10;
  const evidence = {
    queuedAt: iso(started), seconds,
    dataTypes: Object.fromEntries([...tracked].map(([type, t]) => [type, {
      status: t.status, ...(t.id ? { pullId: t.id } : {}), attempts: t.attempts,
      ...(t.finishedMs ? { seconds: Math.round((t.finishedMs - started) / 100) / 10 } : {}), ...(t.error && t.status !== 'Complete' ? { error: t.error } : {}),
    }])),
  };
  const complete = [...tracked.values()].filter((t) => t.status === 'Complete').length;
  const running = [...tracked].filter(([, t]) => isRunning(t.status)).map(([type, t]) => `${type} ${t.status}`);
  if (signal.aborted) return { name: 'sync', status: 'fail', summary: 'interrupted while waiting for the sync', evidence };
  if (running.length > 0) {
    return { name: 'sync', status: 'fail', summary: `timed out after ${durationText(options.timeoutMs)}; still running: ${running.join(', ')}`, evidence: { ...evidence, complete, total: tracked.size } };
  }
  const failed = [...tracked].filter(([, t]) => isFailed(t.status)).map(([type, t]) => `${type} ${t.status}${t.error && t.error !== t.status ? ` (${t.error})` : ''}`);
  const retried = [...tracked.values()].filter((t) => t.attempts > 1).length;
  const retriedText = retried ? ` (${retried} data type${retried === 1 ? '' : 's'} queued again after a transient error)` : '';
  return failed.length === 0
    ? { name: 'sync', status: 'pass', summary: `${complete}/${tracked.size} data types Complete after a fresh sync in ${seconds}s${retriedText}`, evidence: { ...evidence, complete, total: tracked.size } }
    : { name: 'sync', status: 'fail', summary: `${complete}/${tracked.size} data types Complete; failed: ${failed.join('; ')}`, evidence: { ...evidence, complete, total: tracked.size } };
}

/**
 * --no-sync: the data sets as they are. A data type counts as Complete when its data set has
 * been read in full (a Complete pull published it: `lastSuccessfulSync`), even while a newer
 * pull is queued or running: readers keep the published data set until the next one is
 * published. It does not when it was never read, or when its latest pull ended in an error
 * (the platform refused the last read: what is there is stale).
 */
export async function currentState(client: ApiClient, companyId: string, types: string[], tracked: Map<string, Tracked>, signal: AbortSignal): Promise<Criterion> {
  const status = await api.dataStatus(client, companyId, signal);
  const dataTypes: Record<string, unknown> = {};
  const complete: string[] = [];
  const newer: string[] = [];
  const other: string[] = [];
  for (const type of types) {
    const entry = status[type];
    // The latest pull's status: what the authorization criterion looks at (an AuthError).
    const t: Tracked = { status: entry?.currentStatus ?? 'NotRequested', attempts: 0 };
    if (entry?.latestSyncId) t.id = entry.latestSyncId;
    tracked.set(type, t);
    const read = entry?.lastSuccessfulSync !== undefined;
    dataTypes[type] = { status: t.status, read, ...(entry?.lastSuccessfulSync ? { lastSuccessfulSync: entry.lastSuccessfulSync } : {}) };
    if (read && !isFailed(t.status)) {
      complete.push(type);
      if (t.status !== 'Complete') newer.push(`${type} ${t.status}`);
    } else other.push(`${type} ${t.status}${read ? ' (read before)' : ''}`);
  }
  const evidence = { fresh: false, dataTypes, complete: complete.length, total: types.length };
  const newerText = newer.length ? `; a newer pull under way for ${newer.length <= 3 ? newer.join(', ') : `${newer.length} data types`}` : '';
  return other.length === 0
    ? { name: 'sync', status: 'pass', summary: `${complete.length}/${types.length} data types Complete (read by the latest successful sync${newerText}; --no-sync: none queued)`, evidence }
    : { name: 'sync', status: 'fail', summary: `${complete.length}/${types.length} data types Complete; not Complete: ${other.join(', ')}`, evidence };
}

export async function readEvery(client: ApiClient, companyId: string, types: string[], signal: AbortSignal): Promise<{ criterion: Criterion; records: number }> {
  const dataTypes: Record<string, { path: string; httpStatus: number; records?: number; ms: number; error?: string }> = {};
  let records = 0;
  const failures: string[] = [];
  const queue = [...types];
  const worker = async () => {
    for (let type = queue.shift(); type !== undefined; type = queue.shift()) {
      const path = dataTypeByKey(type)?.path ?? type;
      const started = Date.now();
      try {
        const page = await api.dataPage(client, companyId, path, { pageSize: 1 }, signal);
        dataTypes[type] = { path: `/data/${path}`, httpStatus: 200, records: page.totalResults, ms: Date.now() - started };
        records += page.totalResults;
      } catch (err) {
        if (!(err instanceof ApiRequestError)) throw err;
        dataTypes[type] = { path: `/data/${path}`, httpStatus: err.status, ms: Date.now() - started, error: describeError(err) };
        failures.push(`${type} HTTP ${err.status}`);
      }
    }
  };
  await Promise.all([worker(), worker(), worker()]);
  const ok = types.length - failures.length;
  const evidence = { dataTypes: Object.fromEntries(types.map((t) => [t, dataTypes[t]])), records };
  return {
    records,
    criterion: failures.length === 0
      ? { name: 'reads', status: 'pass', summary: `${ok}/${types.length} data types read with HTTP 200 (${formatCount(records)} records)`, evidence }
      : { name: 'reads', status: 'fail', summary: `${ok}/${types.length} data types read with HTTP 200; failed: ${failures.join(', ')}`, evidence },
  };
}
