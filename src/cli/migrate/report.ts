// How a migration shows on the command line (`ferry migrate tokens`, and the demo's
// migration): its progress line, the summary for people (stderr, with the next command to
// run) and for scripts (--json, documented in docs/cli.md), and the exit its end makes.
import type { AdaptiveLimit } from '../../client/adaptive-limit.js';
import type { MigrationProgress, MigrationSummary } from '../../ops/migrate/engine.js';
import { CsvFormatError, JournalMismatchError, RowsError } from '../../ops/migrate/errors.js';
import { counted, formatCount, limitText, rateLine } from '../../ops/progress.js';
import { CliError, EXIT, InterruptedError, isInterruption, UsageError } from '../errors.js';
import type { IO } from '../io.js';
import { ferryCommand } from '../command-line.js';

/** How to run this migration again: its `ferry …` words (no --dry-run, --yes, --retry-failed) and target; the demo's has none. */
export interface Rerun {
  args: string[];
  target: string[];
}

export function nextCommand(summary: MigrationSummary, rerun?: Rerun): string {
  const again = (...extra: string[]) => (rerun ? ferryCommand([...rerun.args, ...extra], rerun.target) : 'the same command');
  if (summary.dryRun) return summary.failed > 0 ? `fix the rows listed in ${summary.results}, then run again` : again('--yes');
  if (summary.stoppedBy) return rerun ? `${again('--yes')}   # resumes` : 'run the same command again to resume';
  // Nothing linked, nothing to sync: the way on is fixing the rows.
  if (summary.migrated + summary.skipped + summary.resumed === 0) {
    return `fix the rows listed in ${summary.results} (its error column says why), then: ${again('--retry-failed', '--yes')}`;
  }
  return ferryCommand(['sync', '--from-results', summary.results, '--wait'], rerun?.target);
}

export function summaryJson(summary: MigrationSummary, rerun?: Rerun): Record<string, unknown> {
  const { authError, validation, ...rest } = summary;
  return {
    ...rest,
    validation: { rows: validation.rows, valid: validation.valid, invalid: validation.invalid, inShard: validation.inShard, problems: validation.problems },
    ...(authError ? { authError: { status: authError.status, message: authError.message, correlationId: authError.correlationId } } : {}),
    next: nextCommand(summary, rerun),
  };
}

export function printSummary(io: IO, summary: MigrationSummary, rerun?: Rerun): void {
  // -q leaves the rows' problems (errors) and the result (stdout); the summary is silenced.
  const say = (line: string) => io.err(line);
  const problem = (line: string) => io.err(line, { force: true });
  const { validation } = summary;
  if (validation.invalid > 0) {
    problem(`${formatCount(validation.invalid)} of ${formatCount(validation.rows)} rows are not valid${validation.problems.length < validation.invalid ? ` (the first ${validation.problems.length} below; all in the results file)` : ''}:`);
    for (const { row, problems } of validation.problems) {
      for (const { field, message } of problems) problem(`  row ${row}, ${field}: ${message}`);
    }
  }
  if (summary.dryRun) {
    const report = summary.dryRunReport!;
    say(`Dry run: ${counted(validation.valid, 'valid row', 'valid rows')} of ${formatCount(validation.rows)}${summary.validation.inShard !== validation.rows ? ` (${formatCount(summary.total)} in this shard)` : ''}; nothing was written.`);
    say(`  ${counted(report.toCreate, 'company', 'companies')} would be created, ${counted(report.existing, 'already exists', 'already exist')} (their rows would be resumed or skipped).`);
    if (report.headroom !== undefined) {
      say(report.toCreate > report.headroom
        ? `  The ${report.plan} plan allows ${counted(report.headroom, 'more company', 'more companies')}: ${counted(report.toCreate - report.headroom, 'row', 'rows')} would fail at the company step.`
        : `  The ${report.plan} plan allows ${counted(report.headroom, 'more company', 'more companies')}: enough.`);
    }
  } else {
    const steps = Object.entries(summary.failedBySteps).map(([step, n]) => `${step} ${formatCount(n)}`).join(', ');
    say(`Migrated ${formatCount(summary.migrated)} · skipped ${formatCount(summary.skipped)} · failed ${formatCount(summary.failed)}${steps ? ` (${steps})` : ''}` +
      `${summary.resumed ? ` · ${formatCount(summary.resumed)} done by earlier runs` : ''}${summary.retried ? ` · ${formatCount(summary.retried)} retried` : ''} in ${summary.seconds.toFixed(1)}s (${formatCount(Math.round(summary.rowsPerSecond))} rows/s` +
      `${summary.concurrency ? `; concurrency ${summary.concurrency.final}, peak ${summary.concurrency.peak}, ${formatCount(Math.round(summary.rate ?? 0))} req/s` : ''}).`);
  }
  say(`Results: ${summary.results}`);
  if (summary.failed > 0 && rerun && summary.migrated + summary.skipped + summary.resumed > 0) {
    say(`Fixed the failed rows in ${summary.input}? Then: ${ferryCommand([...rerun.args, '--retry-failed', '--yes'], rerun.target)}`);
  }
  say(`Next: ${nextCommand(summary, rerun)}`);
  io.out(summary.results);
}

/** The progress line while rows go through. */
export function rowsProgress(progress: MigrationProgress, limit: AdaptiveLimit, started: number): string {
  return `${rateLine(progress.done, progress.total, started, 'rows')} · ${progress.failed} failed · ${limitText(limit)}`;
}

/** The progress line's last word when a run ends in `worded` (wordMigrationError's): the input's own errors come before any write, and say so. */
export function stoppedLine(worded: unknown): string {
  return worded instanceof UsageError ? 'Nothing was written.' : 'Stopped.';
}

/** The migration's own errors (ops/migrate/errors.ts) as usage errors saying what to do; a Ctrl-C as the stop it is; others as they are. */
export function wordMigrationError(err: unknown, journalPath: string, signal?: AbortSignal): unknown {
  if (signal?.aborted && !isInterruption(err)) return new InterruptedError('Stopped; rerun the same command to resume.');
  if (err instanceof CsvFormatError) return new UsageError(err.message, err.hint);
  if (err instanceof RowsError) return new UsageError(err.message, 'Check the quoting and the delimiter (--delimiter).');
  if (err instanceof JournalMismatchError) {
    return new UsageError(err.message, 'Fixed the failed rows? Add --retry-failed to run only the rows not migrated yet, with their new values ' +
      `(their outcomes join the same results). To start afresh instead, give a new --results path or remove ${journalPath}.`);
  }
  return err;
}

/** What a finished run makes of the exit: the error to end with, or none when every row went through; `target` reaches the run's service. */
export function migrationFailure(summary: MigrationSummary, target: string[] = []): Error | undefined {
  if (summary.stoppedBy === 'auth') {
    return new CliError(`The service refused the key (${summary.authError?.message}); the run stopped, since every row would fail.`, EXIT.auth,
      `Check the key (${ferryCommand(['whoami'], target)}), then run the same command again to resume.`);
  }
  if (summary.stoppedBy === 'interrupt') return new InterruptedError('Stopped (the rows in flight finished); rerun the same command to resume.');
  if (summary.planLimitHit) {
    return new CliError(summary.dryRun ? 'The plan\'s company limit would stop some rows.' : 'The plan\'s company limit stopped some rows.', EXIT.planLimit,
      `Upgrade the plan, or migrate those rows into existing companies (companyId column)${summary.dryRun ? '' : '; then run the same command again to retry them'}.`);
  }
  if (summary.failed > 0) {
    const rows = `${formatCount(summary.failed)} row${summary.failed === 1 ? '' : 's'}`;
    return new CliError(summary.dryRun ? `${rows} not valid; see ${summary.results}.` : `${rows} failed; see ${summary.results}.`, EXIT.partial);
  }
  return undefined;
}
