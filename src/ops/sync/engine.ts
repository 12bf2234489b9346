// `ferry sync` as an engine: start syncs (pulls) for many companies, as many at once as the
// adaptive limit allows (client/adaptive-limit.ts), and
// with `wait` follow them until every data type is Complete or errored. It returns every
// company's summary and why it stopped early, if it did; the caller decides what that means.
// A waiting run keeps a journal (journal.ts): the same command after a stop resumes it,
// asking the service what became of each company since the run began (runs.ts).
import { AdaptiveLimit, limitOptions, type LimitStats } from '../../client/adaptive-limit.js';
import type { ApiClient } from '../../client/client.js';
import { isFailed as isFailedStatus } from '../../client/wire.js';
import type { ChangeFeed } from '../../client/change-feed.js';
import { integrationLookup } from '../platform-knowledge.js';
import { limitText, type Progress } from '../progress.js';
import { readSyncJournal, SyncJournalWriter, type SyncJournalState } from './journal.js';
import { label, startCompany, summarize, type CompanyRun, type CompanySummary } from './runs.js';
import { readServiceClock } from './service-clock.js';
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
  /** What the run may take as done already, and where it keeps its journal. */
  resume?: SyncResume;
  /** A sync of one company someone waits on (`sync ID`): queued in the service's interactive lane. */
  interactive?: boolean;
}

export interface SyncResume {
  /** The run's journal (with `wait`): kept while the run goes, read by the same command after a stop, removed at the end. */
  journal?: string;
  /** The service the run talks to (its URL, or the embedded service's data dir); the account is added from GET /profile. A journal written against another is another run's. */
  target: string;
  /** Companies whose data sets were all read after this time (epoch ms, this machine's clock: a results file's) are done. */
  doneSince?: number;
  /** Queue anew for every company: the journal starts over and nothing counts as done. */
  force?: boolean;
}

/** What a run found of an earlier one in its journal. */
export type JournalFound =
  | { kind: 'resumed'; journal: string; startedAt: string; complete: number }
  | { kind: 'replaced'; journal: string; why: string };

/** How the companies stood once each was started: done already (by the journal, or asked), already under way, queued now, failed to start. */
export interface StartCounts {
  total: number;
  resumed: boolean;
  complete: number;
  waiting: number;
  queued: number;
  failed: number;
}

export interface SyncHooks {
  signal: AbortSignal;
  log(line: string): void;
  progress: Progress;
  /** Log each company's outcome as it comes (the progress line does not show them). */
  logEach: boolean;
  /** With `wait`: the run's event feed (SYNC_EVENTS), opened before this is called; without it the wait polls. */
  changes?: ChangeFeed;
  /** The journal of an earlier run was picked up, or set aside. */
  onJournal?(found: JournalFound): void;
  /** Every company has been started (a run that asks before queuing: `resume`). */
  onStarted?(counts: StartCounts): void;
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
  let journal: SyncJournalWriter | undefined;
  let ended = false;
  try {
    const resumed = request.resume ? await resumeFrom(client, request, runs, started, hooks) : undefined;
    journal = resumed?.journal;
    const noted = new Set<CompanyRun>();
    const noteComplete = (run: CompanyRun) => {
      if (run.found === 'journal' || noted.has(run) || summarize(run, true).state !== 'complete') return;
      noted.add(run);
      journal?.append({ type: 'complete', companyId: run.companyId, ...(run.name !== undefined ? { name: run.name } : {}), dataTypes: [...run.dataTypes.keys()] });
    };
    let startedCount = runs.filter((r) => r.started).length;
    await Promise.all(runs.filter((r) => !r.started).map((run) => limit(async () => {
      if (signal.aborted) return;
      await startCompany(client, run, request.dataType, integration, signal, resumed?.completeSince, request.interactive);
      if (run.found === 'complete') noteComplete(run);
      startedCount += 1;
      progress.update(`Starting syncs: ${startedCount}/${companyIds.length} companies · ${limitText(limiter)}`);
      if (run.error && hooks.logEach) log(`${label(run)}: not synced: ${run.error}`);
    }).catch((err: unknown) => {
      // Still waiting for a slot when interrupted: not started.
      if (!signal.aborted) throw err;
    }).finally(() => {
      if (signal.aborted && !run.started && !run.error) run.error = 'not started (interrupted)';
    })));
    const done = runs.filter((r) => r.found === 'journal' || r.found === 'complete').length;
    const queued = runs.filter((r) => r.started).length - done;
    stopped = signal.aborted ? 'interrupted' : undefined;
    if (request.resume && !stopped) hooks.onStarted?.(startCounts(runs, resumed?.found?.kind === 'resumed'));
    if (request.wait && !stopped) {
      stopped = await waitForRuns(client, runs, {
        signal, log, deadline: request.deadline, started, logEach: hooks.logEach, progress, limit: waitLimit, status: () => limitText(limiter), firstDelayMs: request.firstDelayMs,
        onFinished: noteComplete,
        ...(hooks.changes ? { changes: hooks.changes, since } : {}),
      });
    } else if (stopped) {
      progress.fail(`Stopped: queued syncs for ${queued} of ${runs.length} compan${runs.length === 1 ? 'y' : 'ies'}.`);
    } else {
      progress.done(`Queued syncs for ${queued} of ${runs.length} compan${runs.length === 1 ? 'y' : 'ies'}${done > 0 ? ` (${done} already complete)` : ''}.`);
    }
    ended = stopped === undefined && !signal.aborted;
  } catch (err) {
    progress.fail();
    throw err;
  } finally {
    detach();
    // A run that reached its end has nothing to resume; a stopped one (or one that failed) leaves its journal for the rerun.
    if (ended) journal?.remove();
    else journal?.close();
  }
  const good = runs.reduce((n, r) => n + [...r.dataTypes.values()].filter((t) => (request.wait ? t.status === 'Complete' : !isFailedStatus(t.status))).length, 0);
  return { runs, summary: runs.map((run) => summarize(run, request.wait)), good, limit: limiter.stats(), ...(stopped ? { stopped } : {}) };
}

interface Resumed {
  /** Data sets read after this (epoch ms, the service's clock) are done. */
  completeSince?: number;
  journal?: SyncJournalWriter;
  found?: JournalFound;
}

/**
 * Before anything is queued: reads the journal of an earlier run of this command (unless
 * `force`), marks the companies it saw complete, and opens the journal for this run. The
 * time against which a data set counts as done is the earlier run's start, or the results
 * file's time, moved onto the service's clock.
 */
async function resumeFrom(client: ApiClient, request: SyncRequest, runs: CompanyRun[], started: number, hooks: SyncHooks): Promise<Resumed> {
  const resume = request.resume!;
  const path = request.wait ? resume.journal : undefined;
  const dataType = request.dataType ?? null;
  const clock = await readServiceClock(client, hooks.signal);
  const target = clock.account ? `${resume.target} account ${clock.account}` : resume.target;
  let earlier: SyncJournalState | undefined;
  let found: JournalFound | undefined;
  if (path && !resume.force) {
    const read = await readSyncJournal(path);
    if (read.start && read.start.target === target && read.start.dataType === dataType) {
      earlier = read;
      found = { kind: 'resumed', journal: path, startedAt: read.start.at, complete: read.complete.size };
    } else if (read.start) {
      const why = read.start.target !== target ? 'another service or account' : `${read.start.dataType ? `--data-type ${read.start.dataType}` : 'every data type'}, not ${dataType ? `--data-type ${dataType}` : 'every data type'}`;
      found = { kind: 'replaced', journal: path, why };
    }
  }
  const ahead = clock.aheadMs;
  const fileSince = resume.doneSince !== undefined && !resume.force ? resume.doneSince + ahead : undefined;
  const runSince = earlier?.start ? Date.parse(earlier.start.since) : undefined;
  const known = [fileSince, runSince].filter((t): t is number => t !== undefined && !Number.isNaN(t));
  // The service keeps whole seconds: a data set read in the second the run began, after it
  // began, shows that second's start, so the second is the bound, not the millisecond.
  const completeSince = known.length > 0 ? Math.floor(Math.min(...known) / 1000) * 1000 : undefined;
  if (found) hooks.onJournal?.(found);

  let journal: SyncJournalWriter | undefined;
  if (path) {
    journal = new SyncJournalWriter(path, !earlier);
    if (!earlier) {
      const at = started + ahead;
      journal.append({ type: 'start', at: new Date(at).toISOString(), since: new Date(Math.min(fileSince ?? at, at)).toISOString(), target, dataType });
    }
  }
  for (const run of runs) {
    const done = earlier?.complete.get(run.companyId);
    if (!done) continue;
    if (done.name !== undefined) run.name = done.name;
    for (const t of done.dataTypes) run.dataTypes.set(t, { status: 'Complete' });
    run.started = true;
    run.found = 'journal';
  }
  return { ...(completeSince !== undefined ? { completeSince } : {}), ...(journal ? { journal } : {}), ...(found ? { found } : {}) };
}

function startCounts(runs: CompanyRun[], resumed: boolean): StartCounts {
  const counts: StartCounts = { total: runs.length, resumed, complete: 0, waiting: 0, queued: 0, failed: 0 };
  for (const run of runs) {
    if (!run.started || run.error) counts.failed += 1;
    else if (run.found === 'journal' || run.found === 'complete') counts.complete += 1;
    else if (run.found === 'waiting') counts.waiting += 1;
    else counts.queued += 1;
  }
  return counts;
}
