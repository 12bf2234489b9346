// Following started syncs until every data type has finished, the deadline passes or the
// person stops waiting. Stopping never cancels a sync: it carries on in the service.
import * as api from '../../client/api.js';
import type { ApiClient } from '../../client/client.js';
import { ApiRequestError, describeError, isFatal } from '../../client/errors.js';
import { pollUntil } from '../../client/poll.js';
import { eventCompanyId } from '../../client/wait-for-change.js';
import type { ChangeEvent, ChangeFeed } from '../../client/change-feed.js';
import { isFailed as isFailedStatus, isRunning as isRunningStatus } from '../../client/wire.js';
import { formatDuration, type Progress } from '../progress.js';
import { failureDetail, label, readPull, summarize, type CompanyRun } from './runs.js';
import { WaitBoard } from './wait-board.js';

export interface WaitDeps {
  signal: AbortSignal;
  /** A line for the person (a company finished, a status could not be read). */
  log(line: string): void;
  deadline: number;
  started: number;
  /** Log each company as it finishes (the progress line does not show them). */
  logEach: boolean;
  progress: Progress;
  limit: <T>(fn: () => Promise<T>) => Promise<T>;
  /** The limit's live concurrency and rate, for the progress line. */
  status?: () => string;
  firstDelayMs: number;
  /** The run's event feed: a company is read again as soon as one of its pulls ends. */
  changes?: ChangeFeed;
  /** The feed's mark from before the syncs were queued. */
  since?: number;
  /** Called once for each started company once all its pulls have ended (whatever their state), those finished before the wait included. */
  onFinished?(run: CompanyRun): void;
}

/**
 * Full rounds read every unfinished company; with thousands, they are spaced so as to read
 * at most this many a second on average: the service's time goes to syncing, not to
 * answering for companies that have not changed. While the event stream is live, events
 * name the companies to read, and a full round is only the safety net against an event
 * missed (the stream resumes after its last event, so none should be): rare enough that
 * it is not most of the reads a company costs.
 */
const FULL_ROUND_READS_PER_SECOND = 200;
const FULL_ROUND_READS_PER_SECOND_WITH_EVENTS = 10;

/** Polls until every queued data type has finished; returns why it stopped early, if it did. */
export async function waitForRuns(client: ApiClient, runs: CompanyRun[], deps: WaitDeps): Promise<'interrupted' | 'timeout' | undefined> {
  const { signal, deadline, progress } = deps;
  const board = new WaitBoard(runs);
  const line = () => progressLine(runs.length, board, deps);
  const reportFinished = finishedReporter(board, deps);
  const read = statusRefresher(client, deps);
  const refresh = async (run: CompanyRun) => {
    await read(run);
    board.update(run);
  };
  reportFinished();
  progress.update(line());
  await pollUntil({
    signal,
    deadline,
    firstDelayMs: deps.firstDelayMs,
    done: () => board.pending === 0,
    spacing: () => (board.pending * 1000) / (deps.changes?.state === 'live' ? FULL_ROUND_READS_PER_SECOND_WITH_EVENTS : FULL_ROUND_READS_PER_SECOND),
    round: async (changed?: ChangeEvent[]) => {
      // Woken by events: only the companies they name; on schedule: every unfinished one.
      const named = changed ? new Set(changed.map(eventCompanyId).filter((id): id is string => id !== undefined)) : undefined;
      await Promise.all(board.unfinished(named).map((run) => deps.limit(() => refresh(run))));
      reportFinished();
      progress.update(line());
    },
    ...(deps.changes ? {
      wake: {
        feed: deps.changes,
        relevant: (event: ChangeEvent) => {
          const id = eventCompanyId(event);
          return id !== undefined && board.waitsFor(id);
        },
        ...(deps.since !== undefined ? { since: deps.since } : {}),
      },
    } : {}),
  });
  return endOfWait(runs, board.pending, signal, progress, line());
}

/** The progress line: companies done, data types complete, errors, time, and the limit's status. */
function progressLine(companies: number, board: WaitBoard, deps: WaitDeps): string {
  const { done, complete, errors } = board.counts();
  return `Syncing: companies ${done}/${companies} done · data types ${complete}/${board.types} complete · ${errors} error${errors === 1 ? '' : 's'} · ${formatDuration((Date.now() - deps.started) / 1000)}${deps.status ? ` · ${deps.status()}` : ''}`;
}

/** Tells onFinished, and (logEach) the log, of each company whose pulls have all ended since it was last called; each company once. */
function finishedReporter(board: WaitBoard, deps: WaitDeps): () => void {
  return () => {
    for (const run of board.finished()) {
      deps.onFinished?.(run);
      if (!deps.logEach || run.reported) continue;
      run.reported = true;
      const summary = summarize(run, true);
      deps.log(`${label(run)}: ${summary.state}${summary.state === 'failed' ? ` (${failureDetail(summary)})` : ''}`);
    }
  };
}

/** Reads a company's data status into its run; a status that cannot be read is said once per company, and tried again next round. */
function statusRefresher(client: ApiClient, deps: Pick<WaitDeps, 'signal' | 'log'>): (run: CompanyRun) => Promise<void> {
  const { signal, log } = deps;
  const warned = new Set<string>();
  return async (run) => {
    try {
      const status = await api.dataStatus(client, run.companyId, signal);
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
}

/** How the wait ended, on the progress line too: interrupted, timed out, failed, or done. */
function endOfWait(runs: CompanyRun[], pending: number, signal: AbortSignal, progress: Progress, line: string): 'interrupted' | 'timeout' | undefined {
  if (signal.aborted) {
    progress.fail(`${line} · stopped waiting`);
    return 'interrupted';
  }
  if (pending > 0) {
    progress.fail(`${line} · timed out`);
    return 'timeout';
  }
  const failed = runs.some((r) => r.error || [...r.dataTypes.values()].some((t) => isFailedStatus(t.status)));
  if (failed) progress.fail(line);
  else progress.done(line);
  return undefined;
}
