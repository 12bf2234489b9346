// `ferry sync` as an engine: start syncs (pulls) for many companies, as many at once as the
// adaptive limit allows (client/adaptive-limit.ts), and
// with `wait` follow them until every data type is Complete or errored. It returns every
// company's summary and why it stopped early, if it did; the caller decides what that means.
import { AdaptiveLimit, limitOptions, type LimitStats } from '../../client/adaptive-limit.js';
import type { ApiClient } from '../../client/client.js';
import { isFailed as isFailedStatus } from '../../client/wire.js';
import type { ChangeFeed } from '../../client/change-feed.js';
import { integrationLookup } from '../platform-knowledge.js';
import { limitText, type Progress } from '../progress.js';
import { label, startCompany, summarize, type CompanyRun, type CompanySummary } from './runs.js';
import { waitForRuns } from './wait.js';

export interface SyncRequest {
  companyIds: string[];
  /** One data type (its key) instead of every one the platforms support. */
  dataType?: string;
  wait: boolean;
  /** With `wait`: when to stop waiting (epoch ms). */
  deadline: number;
  firstDelayMs: number;
  /** Companies started (and read while waiting) at once: fixed (--concurrency); learned when absent. */
  concurrency?: number;
  /** At most this many requests a second (--max-rate). */
  maxRate?: number;
}

export interface SyncHooks {
  signal: AbortSignal;
  log(line: string): void;
  progress: Progress;
  /** Log each company's outcome as it comes (the progress line does not show them). */
  logEach: boolean;
  /** With `wait`: the run's event feed (SYNC_EVENTS), opened before this is called; without it the wait polls. */
  changes?: ChangeFeed;
}

export interface SyncOutcome {
  runs: CompanyRun[];
  summary: CompanySummary[];
  stopped?: 'interrupted' | 'timeout';
  /** Data types that did what was asked (Complete when waiting; queued and not failed otherwise). */
  good: number;
  /** The adaptive limit's concurrency and rate. */
  limit: LimitStats;
}

export async function runSyncs(client: ApiClient, request: SyncRequest, hooks: SyncHooks): Promise<SyncOutcome> {
  const { signal, progress, log } = hooks;
  const { companyIds } = request;
  const started = Date.now();
  const limiter = new AdaptiveLimit(limitOptions(request));
  const detach = limiter.attach(client);
  const limit = <T>(task: () => Promise<T>): Promise<T> => limiter.run(task, signal);
  // While waiting, an interrupted read is simply not made (the wait stops on the signal).
  const waitLimit = <T>(task: () => Promise<T>): Promise<T> => limit(task).catch((err: unknown) => {
    if (signal.aborted) return undefined as T;
    throw err;
  });
  const integration = integrationLookup(client, signal);

  const runs: CompanyRun[] = companyIds.map((companyId) => ({ companyId, started: false, dataTypes: new Map() }));
  // Events from here on may concern the syncs about to be queued.
  const since = hooks.changes?.mark();
  let stopped: 'interrupted' | 'timeout' | undefined;
  try {
    let startedCount = 0;
    await Promise.all(runs.map((run) => limit(async () => {
      if (signal.aborted) return;
      await startCompany(client, run, request.dataType, integration, signal);
      startedCount += 1;
      progress.update(`Starting syncs: ${startedCount}/${companyIds.length} companies · ${limitText(limiter)}`);
      if (run.error && hooks.logEach) log(`${label(run)}: not synced: ${run.error}`);
    }).catch((err: unknown) => {
      // Still waiting for a slot when interrupted: not started.
      if (!signal.aborted) throw err;
    }).finally(() => {
      if (signal.aborted && !run.started && !run.error) run.error = 'not started (interrupted)';
    })));
    const queued = runs.filter((r) => r.started).length;
    stopped = signal.aborted ? 'interrupted' : undefined;
    if (request.wait && !stopped) {
      stopped = await waitForRuns(client, runs, {
        signal, log, deadline: request.deadline, started, logEach: hooks.logEach, progress, limit: waitLimit, status: () => limitText(limiter), firstDelayMs: request.firstDelayMs,
        ...(hooks.changes ? { changes: hooks.changes, since } : {}),
      });
    } else if (stopped) {
      progress.fail(`Interrupted: queued syncs for ${queued} of ${runs.length} compan${runs.length === 1 ? 'y' : 'ies'}.`);
    } else {
      progress.done(`Queued syncs for ${queued} of ${runs.length} compan${runs.length === 1 ? 'y' : 'ies'}.`);
    }
  } catch (err) {
    progress.fail();
    throw err;
  } finally {
    detach();
  }
  const good = runs.reduce((n, r) => n + [...r.dataTypes.values()].filter((t) => (request.wait ? t.status === 'Complete' : !isFailedStatus(t.status))).length, 0);
  return { runs, summary: runs.map((run) => summarize(run, request.wait)), good, limit: limiter.stats(), ...(stopped ? { stopped } : {}) };
}
