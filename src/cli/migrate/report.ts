// The migration summary for people (stderr, with the next command to run) and for
// scripts (--json, documented in docs/cli.md).
import type { IO } from '../io.js';
import type { MigrationSummary } from '../../ops/migrate/engine.js';

function count(n: number): string {
  return n.toLocaleString('en-US');
}

export function nextCommand(summary: MigrationSummary): string {
  if (summary.dryRun) return summary.failed > 0 ? `fix the rows listed in ${summary.results}, then run again` : `ferry migrate tokens ${summary.input} --yes`;
  if (summary.stoppedBy) return 'run the same command again to resume';
  // Nothing linked, nothing to sync: the way on is fixing the rows.
  if (summary.migrated + summary.skipped + summary.resumed === 0) return `fix the rows listed in ${summary.results} (its error column says why), then run the same command again`;
  return `ferry sync --from-results ${summary.results} --wait`;
}

export function summaryJson(summary: MigrationSummary): Record<string, unknown> {
  const { authError, validation, ...rest } = summary;
  return {
    ...rest,
    validation: { rows: validation.rows, valid: validation.valid, invalid: validation.invalid, inShard: validation.inShard, problems: validation.problems },
    ...(authError ? { authError: { status: authError.status, message: authError.message, correlationId: authError.correlationId } } : {}),
    next: nextCommand(summary),
  };
}

export function printSummary(io: IO, summary: MigrationSummary): void {
  const say = (line: string) => io.err(line, { force: true });
  const { validation } = summary;
  if (validation.invalid > 0) {
    say(`${count(validation.invalid)} of ${count(validation.rows)} rows are not valid${validation.problems.length < validation.invalid ? ` (the first ${validation.problems.length} below; all in the results file)` : ''}:`);
    for (const { row, problems } of validation.problems) {
      for (const problem of problems) say(`  row ${row}, ${problem.field}: ${problem.message}`);
    }
  }
  if (summary.dryRun) {
    const report = summary.dryRunReport!;
    say(`Dry run: ${count(validation.valid)} valid rows of ${count(validation.rows)}${summary.validation.inShard !== validation.rows ? ` (${count(summary.total)} in this shard)` : ''}; nothing was written.`);
    say(`  ${count(report.toCreate)} companies would be created, ${count(report.existing)} already exist (their rows would be resumed or skipped).`);
    if (report.headroom !== undefined) {
      say(report.toCreate > report.headroom
        ? `  The ${report.plan} plan allows ${count(report.headroom)} more companies: ${count(report.toCreate - report.headroom)} rows would fail at the company step.`
        : `  The ${report.plan} plan allows ${count(report.headroom)} more companies: enough.`);
    }
  } else {
    const steps = Object.entries(summary.failedBySteps).map(([step, n]) => `${step} ${count(n)}`).join(', ');
    say(`Migrated ${count(summary.migrated)} · skipped ${count(summary.skipped)} · failed ${count(summary.failed)}${steps ? ` (${steps})` : ''}` +
      `${summary.resumed ? ` · ${count(summary.resumed)} done by earlier runs` : ''}${summary.retried ? ` · ${count(summary.retried)} retried` : ''} in ${summary.seconds.toFixed(1)}s (${count(Math.round(summary.rowsPerSecond))} rows/s` +
      `${summary.concurrency ? `; concurrency ${summary.concurrency.final}, peak ${summary.concurrency.peak}, ${count(Math.round(summary.rate ?? 0))} req/s` : ''}).`);
  }
  say(`Results: ${summary.results}`);
  say(`Next: ${nextCommand(summary)}`);
  io.out(summary.results);
}
