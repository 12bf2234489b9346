// How a sync run shows on the command line (`ferry sync`, and the demo's sync): what was
// read of a results file, the progress and per-company lines while it runs, the summary
// table, and the exit its end makes.
import { ferryCommand } from '../command-line.js';
import { durationText } from '../../lib/duration.js';
import type { JournalFound, StartCounts, SyncHooks, SyncOutcome } from '../../ops/sync/engine.js';
import { detailOf, stateCounts, stillRunning, type CompanySummary, type StateCounts } from '../../ops/sync/runs.js';
import { CliError, EXIT, InterruptedError } from '../errors.js';
import { printResult, type IO } from '../io.js';
import { printTable } from '../output.js';
import { startProgress } from '../progress.js';
import { batchExitCode, endsOnce, logTo } from '../waiting.js';
import { formatCount } from '../../ops/progress.js';

/** The line saying how many companies a results file gave, and which rows it left out. */
export function readFromResults(path: string, read: { ids: string[]; skipped: Record<string, number> }): string {
  const skippedText = Object.entries(read.skipped).map(([status, n]) => `${n} ${status}`).join(', ');
  return `Read ${formatCount(read.ids.length)} compan${read.ids.length === 1 ? 'y' : 'ies'} from ${path}${skippedText ? ` (rows left out: ${skippedText})` : ''}.`;
}

/** The engine's display hooks: a progress line, and each company's outcome logged where no spinner shows them. */
export async function syncShown(io: IO, companies: number): Promise<Omit<SyncHooks, 'signal' | 'changes'>> {
  const spinning = io.stderrIsTTY && io.color && !io.quiet && io.mode !== 'json';
  const progress = endsOnce(await startProgress(io, `Starting syncs of ${formatCount(companies)} compan${companies === 1 ? 'y' : 'ies'}…`));
  return { log: logTo(io), progress, logEach: !spinning };
}

export function printSyncSummary(io: IO, summary: CompanySummary[]): void {
  printResult(io, summary, () => {
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
  });
}

const companies = (count: number) => `${formatCount(count)} compan${count === 1 ? 'y' : 'ies'}`;

/** What the run made of an earlier run's journal. */
export function journalLine(found: JournalFound): string {
  return found.kind === 'resumed'
    ? `Resuming the sync run started at ${found.startedAt} (${found.journal}): ${companies(found.complete)} complete in it, the others are asked about; --force starts over.`
    : `${found.journal} was the journal of another run (${found.why}); starting a new one.`;
}

/**
 * Once every company has been started, in a run that asked before queuing (a resumed run, or
 * one from a results file): "resuming: 2,567 of 3,000 still to finish; 433 already complete
 * (2,402 already queued or running, 165 queued now)". Nothing when everything was queued now.
 */
export function startedLine(counts: StartCounts, since: string | undefined): string | undefined {
  const { total, complete, waiting, queued, failed } = counts;
  if (!counts.resumed && complete === 0 && waiting === 0) return undefined;
  const toFinish = waiting + queued;
  const sinceText = complete > 0 && !counts.resumed && since ? ` (read since ${since})` : '';
  const detail = `${formatCount(waiting)} already queued or running, ${formatCount(queued)} queued now${failed > 0 ? `; ${formatCount(failed)} could not be started` : ''}`;
  const again = complete > 0 ? ' --force queues them again.' : '';
  return `${counts.resumed ? 'resuming: ' : ''}${formatCount(toFinish)} of ${companies(total)} still to finish; ${formatCount(complete)} already complete${sinceText} (${detail}).${again}`;
}

/** "433 complete, 2,402 running, 165 queued, 0 failed" */
export function countsText(counts: StateCounts): string {
  return `${formatCount(counts.complete)} complete, ${formatCount(counts.running)} running, ${formatCount(counts.queued)} queued, ${formatCount(counts.failed)} failed`;
}

export interface SyncEnd {
  wait: boolean;
  timeoutMs: number;
  embedded: boolean;
  /** The command that resumes the wait (ferry sync --wait); without it, how to follow the syncs instead. */
  resume?: string;
  /** The flags that chose this run's service (command-line.ts targetArgs), for the commands printed. */
  target: string[];
}

/** What a run's end makes of the exit: the error to end with (the wait stopped, or companies failed), or none. */
export function syncFailure(outcome: SyncOutcome, how: SyncEnd): Error | undefined {
  const { runs, summary, stopped, good } = outcome;
  const keepsGoing = how.embedded
    ? 'The syncs were not cancelled: they resume the next time ferry opens this data dir.'
    : 'The syncs were not cancelled: they carry on in the service.';
  const started = runs.find((r) => r.started)?.companyId;
  const follow = started ? `Follow them with: ${ferryCommand(['status', started], how.target)}` : `Follow them with: ${ferryCommand(['companies', 'list'], how.target)}`;
  if (stopped) {
    // Counts, a few unfinished companies and the command that resumes: a short line at any count.
    const counts = stateCounts(runs);
    const details = { counts, ...(how.resume ? { resume: how.resume } : {}) };
    const next = how.resume ? `Resume the wait with: ${how.resume}` : follow;
    if (stopped === 'interrupted') return new InterruptedError(`Stopped waiting; rerun the same command to resume. ${keepsGoing} Companies: ${countsText(counts)}.`, next, details);
    const running = stillRunning(runs);
    return new CliError(
      `Timed out after ${durationText(how.timeoutMs)} waiting for syncs: ${countsText(counts)}${running ? `; still running: ${running}` : ''}.`,
      EXIT.error,
      `${keepsGoing} ${how.resume ? next : `Wait longer with --timeout, or: ${follow}`}`,
      details,
    );
  }
  const failed = summary.filter((s) => !s.ok);
  const code = batchExitCode(good, failed.length);
  if (code === EXIT.ok) return undefined;
  const names = failed.slice(0, 5).map((s) => s.name ? `${s.name} (${s.companyId})` : s.companyId).join(', ');
  const more = failed.length > 5 ? ` and ${failed.length - 5} more` : '';
  const what = how.wait ? 'did not sync completely' : 'could not be queued';
  return new CliError(
    `${formatCount(failed.length)} of ${formatCount(summary.length)} compan${summary.length === 1 ? 'y' : 'ies'} ${what}: ${names}${more}.`,
    code,
    `${code === EXIT.error ? `Nothing was ${how.wait ? 'synced' : 'queued'}; see` : 'See'} the summary above. The first one's connections and data sets: ${ferryCommand(['status', failed[0]!.companyId], how.target)}`,
  );
}
