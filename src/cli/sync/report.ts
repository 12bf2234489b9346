// How a sync run shows on the command line (`ferry sync`, and the demo's sync): what was
// read of a results file, the progress and per-company lines while it runs, the summary
// table, and the exit its end makes.
import { durationText } from '../../lib/duration.js';
import type { SyncHooks, SyncOutcome } from '../../ops/sync/engine.js';
import { detailOf, stillRunning, type CompanySummary } from '../../ops/sync/runs.js';
import { CliError, EXIT, InterruptedError } from '../errors.js';
import { printResult, type IO } from '../io.js';
import { printTable } from '../output.js';
import { startProgress } from '../progress.js';
import { batchExitCode, endsOnce, logTo } from '../waiting.js';

/** The line saying how many companies a results file gave, and which rows it left out. */
export function readFromResults(path: string, read: { ids: string[]; skipped: Record<string, number> }): string {
  const skippedText = Object.entries(read.skipped).map(([status, n]) => `${n} ${status}`).join(', ');
  return `Read ${read.ids.length} compan${read.ids.length === 1 ? 'y' : 'ies'} from ${path}${skippedText ? ` (rows left out: ${skippedText})` : ''}.`;
}

/** The engine's display hooks: a progress line, and each company's outcome logged where no spinner shows them. */
export async function syncShown(io: IO, companies: number): Promise<Omit<SyncHooks, 'signal' | 'changes'>> {
  const spinning = io.stderrIsTTY && io.color && !io.quiet && io.mode !== 'json';
  const progress = endsOnce(await startProgress(io, `Starting syncs of ${companies} compan${companies === 1 ? 'y' : 'ies'}…`));
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

/** What a run's end makes of the exit: the error to end with (the wait stopped, or companies failed), or none. */
export function syncFailure(outcome: SyncOutcome, how: { wait: boolean; timeoutMs: number; embedded: boolean }): Error | undefined {
  const { runs, summary, stopped, good } = outcome;
  const keepsGoing = how.embedded
    ? 'The syncs were not cancelled: they resume the next time ferry opens this data dir.'
    : 'The syncs were not cancelled: they carry on in the service.';
  const follow = `Follow them with: ferry status ${runs.find((r) => r.started)?.companyId ?? 'COMPANY_ID'}`;
  if (stopped === 'interrupted') return new InterruptedError(`Stopped waiting (interrupted). ${keepsGoing} ${follow}`);
  if (stopped === 'timeout') {
    return new CliError(
      `Timed out after ${durationText(how.timeoutMs)} waiting for syncs; still running: ${stillRunning(runs)}.`,
      EXIT.error,
      `${keepsGoing} Wait longer with --timeout, or: ${follow}`,
    );
  }
  const failed = summary.filter((s) => !s.ok);
  const code = batchExitCode(good, failed.length);
  if (code === EXIT.ok) return undefined;
  const names = failed.slice(0, 5).map((s) => s.name ? `${s.name} (${s.companyId})` : s.companyId).join(', ');
  const more = failed.length > 5 ? ` and ${failed.length - 5} more` : '';
  const what = how.wait ? 'did not sync completely' : 'could not be queued';
  return new CliError(
    `${failed.length} of ${summary.length} compan${summary.length === 1 ? 'y' : 'ies'} ${what}: ${names}${more}.`,
    code,
    code === EXIT.error ? `Nothing was ${how.wait ? 'synced' : 'queued'}; see the summary above (ferry status COMPANY_ID shows one company's connections and data sets).` : 'See the summary above; ferry status COMPANY_ID shows one company\'s connections and data sets.',
  );
}
