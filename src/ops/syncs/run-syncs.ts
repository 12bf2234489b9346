// `ferry sync` as an engine: start syncs (pulls) for many companies, a few at a time, and
// with `wait` follow them until every data type is Complete or errored. It returns every
// company's summary and why it stopped early, if it did; the caller decides what that means.
import type { ApiClient } from '../../client/client.js';
import { isFailed as isFailedStatus } from '../../client/wire.js';
import type { ChangeFeed } from '../../client/wait-for-change.js';
import { integrationLookup } from '../platform-knowledge.js';
import type { Progress } from '../progress.js';
import { label, startCompany, summarize, type CompanyRun, type CompanySummary } from './runs.js';
import { waitForRuns } from './wait.js';

export const SYNC_CONCURRENCY = 8;

export interface SyncRequest {
  companyIds: string[];
  /** One data type (its key) instead of every one the platforms support. */
  dataType?: string;
  wait: boolean;
  /** With `wait`: when to stop waiting (epoch ms). */
  deadline: number;
  firstDelayMs: number;
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
}

export async function runSyncs(client: ApiClient, request: SyncRequest, hooks: SyncHooks): Promise<SyncOutcome> {
  const { signal, progress, log } = hooks;
  const { companyIds } = request;
  const started = Date.now();
  const { default: pLimit } = await import('p-limit');
  const limit = pLimit(SYNC_CONCURRENCY);
  const integration = integrationLookup(client, signal);

  const runs: CompanyRun[] = companyIds.map((companyId) => ({ companyId, started: false, dataTypes: new Map() }));
  // Events from here on may concern the syncs about to be queued.
  const since = hooks.changes?.mark();
  let stopped: 'interrupted' | 'timeout' | undefined;
  try {
    let startedCount = 0;
    await Promise.all(runs.map((run) => limit(async () => {
      if (signal.aborted) {
        run.error = 'not started (interrupted)';
        return;
      }
      await startCompany(client, run, request.dataType, integration, signal);
      startedCount += 1;
      progress.update(`Starting syncs: ${startedCount}/${companyIds.length} companies`);
      if (run.error && hooks.logEach) log(`${label(run)}: not synced: ${run.error}`);
    })));
    const queued = runs.filter((r) => r.started).length;
    stopped = signal.aborted ? 'interrupted' : undefined;
    if (request.wait && !stopped) {
      stopped = await waitForRuns(client, runs, {
        signal, log, deadline: request.deadline, started, logEach: hooks.logEach, progress, limit, firstDelayMs: request.firstDelayMs,
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
  }
  const good = runs.reduce((n, r) => n + [...r.dataTypes.values()].filter((t) => (request.wait ? t.status === 'Complete' : !isFailedStatus(t.status))).length, 0);
  return { runs, summary: runs.map((run) => summarize(run, request.wait)), good, ...(stopped ? { stopped } : {}) };
}
