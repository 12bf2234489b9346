// Steps 5 and 6 share this: hold back the companies whose legacy application refreshed
// after step 4, migrate the rest with the bulk engine, and check each end to end, saving
// each company's outcome as it comes so that a killed step resumes where it stopped.
import { integrationLookup } from '../platform-knowledge.js';
import { createReadStream } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { AdaptiveLimit, limitOptions, type LimitStats } from '../../client/adaptive-limit.js';
import type { SandboxApi } from '../../client/sandbox-api.js';
import { openChangeFeed, SYNC_EVENTS } from '../../client/wait-for-change.js';
import { durationText } from '../../lib/duration.js';
import { interrupted, OpError } from '../errors.js';
import { counted, formatCount, limitText, rateLine } from '../progress.js';
import { resultsByRow } from '../migrate/read-results.js';
import type { IntegrationInfo } from '../migrate/types.js';
import { checkCompanies } from '../check/engine.js';
import type { CheckResult, CheckTarget } from '../check/types.js';
import type { RowInfo } from './company-rows.js';
import { stepOf, workDir, type CompanyOutcome, type Plan, type PlanStep, type StepProgress } from './plan.js';
import { legacyRefreshes, optionalSandbox } from '../check/platform-lookups.js';
import type { StepEnv, StepInputs } from './step-env.js';

export interface Batch {
  rows: RowInfo[];
  pilot: boolean;
  /** Results and journal file names in the work dir. */
  name: string;
  integrations: IntegrationInfo[];
}

function legacySince(plan: Plan): { at: string; what: string } {
  return { at: stepOf(plan, 4).at ?? new Date().toISOString(), what: 'syncing was confirmed disabled' };
}

function upsertOutcome(plan: Plan, outcome: CompanyOutcome): void {
  const at = plan.outcomes.findIndex((o) => o.row === outcome.row);
  if (at >= 0) plan.outcomes[at] = outcome;
  else plan.outcomes.push(outcome);
  plan.outcomes.sort((a, b) => a.row - b.row);
}

function baseOutcome(row: RowInfo, pilot: boolean): CompanyOutcome {
  return {
    row: row.row, key: row.key, ...(row.externalId ? { externalId: row.externalId } : {}), companyName: row.companyName ?? row.key,
    pilot, migration: 'failed', verdict: 'fail', reasons: [], durations: {},
  };
}

function tenantOf(row: RowInfo): string | undefined {
  return row.externalId;
}

/** How a phase went: the adaptive limit's concurrency and the requests a second. */
export interface PhaseThroughput {
  concurrency: LimitStats['concurrency'];
  rate: number;
}

export interface BatchResult {
  outcomes: CompanyOutcome[];
  checks: CheckResult[];
  /** The migration's and the checks' throughput, for the phases that ran. */
  throughput: { migration?: PhaseThroughput; checks?: PhaseThroughput };
}

/** Saves of the plan for the migration's progress alone: often enough to follow, rarely enough to cost nothing. */
export const PROGRESS_SAVE_MS = 500;

/** The running step's progress in the plan (StepProgress): counted here, saved with the plan. */
interface LiveProgress {
  readonly counts: StepProgress;
  /** Saves the plan unless it was saved less than PROGRESS_SAVE_MS ago (the next save carries the counts). */
  saveSoon(): void;
  /** A company's outcome: counted as checked, and as passed or failed. */
  outcome(verdict: 'pass' | 'fail'): void;
}

function liveProgress(env: StepEnv, step: PlanStep, by: string, total: number, now: () => number = Date.now): LiveProgress & { end(): void } {
  const startedAt = new Date(now()).toISOString();
  const counts: StepProgress = {
    phase: 'holding-back', total, earlier: 0, heldBack: 0, toMigrate: 0, migrated: 0, migrationFailed: 0, checked: 0, passed: 0, failed: 0,
    by, startedAt, updatedAt: startedAt, pid: process.pid, host: hostname(),
  };
  step.progress = counts;
  let savedAt = 0;
  // Every save of the plan (the step's own, after each check) carries the counts as they are.
  const save = () => {
    savedAt = now();
    counts.updatedAt = new Date(savedAt).toISOString();
    env.save();
  };
  save();
  return {
    counts,
    saveSoon: () => {
      if (now() - savedAt >= PROGRESS_SAVE_MS) save();
    },
    outcome: (verdict) => {
      counts.checked += 1;
      if (verdict === 'pass') counts.passed += 1;
      else counts.failed += 1;
      counts.updatedAt = new Date(now()).toISOString();
    },
    end: () => {
      delete step.progress;
      env.save();
    },
  };
}

/**
 * Holds back, migrates (bulk engine) and checks a batch of rows, saving each company's
 * outcome as it comes. Each phase has its own adaptive limit (a check and a migrated row
 * take very different times), pinned by --concurrency and capped by --max-rate alike.
 * The batch's progress is in the plan while it runs (step 5 for the pilot, 6 otherwise).
 */
export async function migrateAndCheck(env: StepEnv, inputs: StepInputs, file: string, batch: Batch): Promise<BatchResult> {
  const live = liveProgress(env, stepOf(env.plan, batch.pilot ? 5 : 6), inputs.by, batch.rows.length);
  try {
    return await runBatch(env, inputs, file, batch, live);
  } finally {
    live.end();
  }
}

/** What every phase of one batch reads: the step's surroundings, the service, and the time legacy refreshes count from. */
interface BatchRun {
  env: StepEnv;
  inputs: StepInputs;
  batch: Batch;
  live: LiveProgress;
  client: Awaited<ReturnType<StepEnv['connection']>>['client'];
  sandbox: SandboxApi | undefined;
  since: { at: string; what: string };
  throughput: BatchResult['throughput'];
}

/** A phase's own adaptive limit: a check and a migrated row take very different times. */
const phaseLimit = (inputs: StepInputs) => new AdaptiveLimit(limitOptions(inputs));

/** The migration's results file, by row. */
type MigrationResults = Awaited<ReturnType<typeof resultsByRow>>;

async function runBatch(env: StepEnv, inputs: StepInputs, file: string, batch: Batch, live: LiveProgress): Promise<BatchResult> {
  const { plan } = env;
  const connection = await env.connection();
  const run: BatchRun = {
    env, inputs, batch, live, client: connection.client,
    sandbox: await optionalSandbox(connection), since: legacySince(plan), throughput: {},
  };
  const todo = rowsToDo(run);

  // 1. Companies whose legacy application refreshed after syncing was confirmed disabled are
  //    held back: their tokens in the file are spent (or about to be), so importing them would only break.
  const heldBack = await holdBack(run, todo);

  // 2. The bulk engine migrates the rest (no sync: the check queues a fresh one).
  const toMigrate = todo.filter((r) => !heldBack.has(r.row));
  const resultsPath = join(workDir(env.planPath), `${batch.name}.results.csv`);
  live.counts.phase = 'migrating';
  live.counts.toMigrate = toMigrate.length;
  live.saveSoon();
  if (toMigrate.length > 0) await migrateRows(run, file, toMigrate, resultsPath);

  // 3. The end-to-end check of every migrated company.
  const results = await resultsByRow(resultsPath);
  const targets = checkTargets(run, toMigrate, results);
  live.counts.phase = 'checking';
  env.save();
  if (targets.length === 0) return { outcomes: plan.outcomes.filter((o) => batch.rows.some((r) => r.row === o.row)), checks: [], throughput: run.throughput };
  const checks = await checkMigrated(run, targets, results);
  const rowsOfBatch = new Set(batch.rows.map((r) => r.row));
  return { outcomes: plan.outcomes.filter((o) => rowsOfBatch.has(o.row)), checks, throughput: run.throughput };
}

/** The batch's rows less those that passed in an earlier run, which are counted as checked and passed. */
function rowsToDo({ env, batch, live }: BatchRun): RowInfo[] {
  const previous = new Map(env.plan.outcomes.map((o) => [o.row, o]));
  const passedBefore = (row: RowInfo) => {
    const o = previous.get(row.row);
    return o?.verdict === 'pass' && o.key === row.key && o.companyId !== undefined;
  };
  const todo = batch.rows.filter((r) => !passedBefore(r));
  const { counts } = live;
  counts.earlier = batch.rows.length - todo.length;
  counts.checked = counts.passed = counts.earlier;
  if (todo.length < batch.rows.length) env.log(`${batch.rows.length - todo.length} compan${batch.rows.length - todo.length === 1 ? 'y' : 'ies'} passed in an earlier run: not checked again.`);
  return todo;
}

/** The rows whose legacy application refreshed since `since` (asked of the sandbox, when there is one), each with its reason, recorded as not imported. */
async function holdBack(run: BatchRun, todo: RowInfo[]): Promise<Map<number, string>> {
  const { env, batch, live, sandbox, since } = run;
  const heldBack = new Map<number, string>();
  if (sandbox) {
    const lookups = phaseLimit(run.inputs);
    await Promise.all(todo.map((row) => lookups.run(async () => {
      const lookup = await legacyRefreshes(sandbox, tenantOf(row), since.at, env.signal);
      if (lookup.checked && lookup.refreshes.length > 0) {
        heldBack.set(row.row, `reauthorization required: the legacy application refreshed the token at ${lookup.refreshes[0]!.at}, after ${since.what}`);
      }
    }, env.signal)));
  }
  for (const [rowNumber, reason] of heldBack) {
    const row = todo.find((r) => r.row === rowNumber)!;
    const outcome = { ...baseOutcome(row, batch.pilot), migration: 'not-imported' as const, reasons: [reason], checkedAt: new Date().toISOString() };
    upsertOutcome(env.plan, outcome);
    live.outcome('fail');
    env.log(`${outcome.companyName}: not imported: ${reason}`);
  }
  live.counts.heldBack = heldBack.size;
  if (heldBack.size > 0) env.save();
  return heldBack;
}

/** Runs the bulk engine over `toMigrate`, its results in `resultsPath`; throws when the key was refused or the run interrupted. */
async function migrateRows(run: BatchRun, file: string, toMigrate: RowInfo[], resultsPath: string): Promise<void> {
  const { env, batch, live } = run;
  const { counts } = live;
  const [{ runMigration }, { JournalMismatchError }] = await Promise.all([import('../migrate/engine.js'), import('../migrate/errors.js')]);
  const started = Date.now();
  const progress = await env.progress(`Migrating ${counted(toMigrate.length, 'company', 'companies')}…`);
  let summary;
  try {
    summary = await runMigration({
      openInput: () => createReadStream(file), inputName: file, integrations: batch.integrations, defaultPlatform: env.plan.platform.key,
      noSync: true, allowManaged: true, onlyRows: new Set(toMigrate.map((r) => r.row)),
      resultsPath, journalPath: `${resultsPath}.journal`, signal: env.signal,
    }, {
      client: run.client, limit: phaseLimit(run.inputs),
      onProgress: (p, limit) => {
        progress.update(`Migrating: ${rateLine(p.done, p.total, started, 'companies')} · ${formatCount(p.failed)} failed · ${limitText(limit)}`);
        counts.migrated = p.done - p.failed;
        counts.migrationFailed = p.failed;
        live.saveSoon();
      },
    });
  } catch (err) {
    progress.fail('Migration stopped.');
    if (err instanceof JournalMismatchError) throw new OpError(err.message, 'failed', `The company file changed: validate it again (${env.command('managed step 1 --confirm --redo')}), or remove ${resultsPath}.journal.`);
    throw err;
  }
  if (summary.concurrency) run.throughput.migration = { concurrency: summary.concurrency, rate: summary.rate ?? 0 };
  progress.done(`Migrated ${formatCount(summary.migrated)} · already migrated ${formatCount(summary.skipped)} · failed ${formatCount(summary.failed)}${summary.resumed ? ` · ${formatCount(summary.resumed)} done by an earlier run` : ''}${summary.retried ? ` · ${formatCount(summary.retried)} tried again` : ''} (${summary.seconds.toFixed(1)}s).`);
  if (summary.stoppedBy === 'auth') {
    throw new OpError(`The service refused the key (${summary.authError?.message}); the migration stopped.`, 'auth', `Use the support team's admin key (${env.command('whoami')} says which this is), then run the step again to resume.`);
  }
  if (summary.stoppedBy === 'interrupt') throw interrupted('Interrupted: in-flight companies finished; run the same step again to resume.');
}

/** A check target for each migrated row; a row the migration failed (or never reached) is recorded as failed instead. */
function checkTargets({ env, batch, live, since }: BatchRun, toMigrate: RowInfo[], results: MigrationResults): Array<{ row: RowInfo; target: CheckTarget }> {
  const { plan } = env;
  const targets: Array<{ row: RowInfo; target: CheckTarget }> = [];
  for (const row of toMigrate) {
    const result = results.get(row.row);
    const outcome = baseOutcome(row, batch.pilot);
    if (!result || result.status === 'failed' || !result.companyId) {
      outcome.reasons = [result ? `migration failed at the ${result.step || 'company'} step: ${result.error}${result.httpStatus ? ` (HTTP ${result.httpStatus})` : ''}` : 'not migrated (the run stopped before this company)'];
      if (result?.companyId) outcome.companyId = result.companyId;
      outcome.checkedAt = new Date().toISOString();
      upsertOutcome(plan, outcome);
      live.outcome('fail');
      continue;
    }
    const target: CheckTarget = { companyId: result.companyId, platformKey: plan.platform.key, legacySince: since };
    const tenant = tenantOf(row);
    if (tenant) target.tenantId = tenant;
    targets.push({ row, target });
  }
  return targets;
}

/** Checks each target end to end, saving each company's outcome as its check ends; throws when interrupted. */
async function checkMigrated(run: BatchRun, targets: Array<{ row: RowInfo; target: CheckTarget }>, results: MigrationResults): Promise<CheckResult[]> {
  const { env, inputs, batch, live, client, sandbox } = run;
  const { signal } = env;
  const byCompany = new Map(targets.map((t) => [t.target.companyId, t.row]));
  const migration = new Map(targets.map((t) => [t.row.row, results.get(t.row.row)!]));
  let done = 0;
  let failedCount = 0;
  const started = Date.now();
  const progress = await env.progress(`Checking ${counted(targets.length, 'company', 'companies')} end to end (fresh sync of every data type)…`);
  // One event stream for every company's check; the checks poll as well, and alone without it.
  const changes = inputs.events === false ? undefined : await openChangeFeed(client, { types: SYNC_EVENTS, signal });
  const limit = phaseLimit(inputs);
  const checks = await checkCompanies(targets.map((t) => t.target), {
    sync: true, timeoutMs: inputs.timeoutMs, signal, limit, ...(inputs.pollMs ? { pollMs: inputs.pollMs } : {}),
  }, { client, ...(sandbox ? { sandbox } : {}), ...(changes ? { changes } : {}), integration: integrationLookup(client, signal) }, (check) => {
    const row = byCompany.get(check.companyId)!;
    const outcome = checkedOutcome(row, migration.get(row.row)!, check, batch.pilot);
    upsertOutcome(env.plan, outcome);
    live.outcome(check.verdict);
    env.save();
    done += 1;
    if (check.verdict === 'fail') {
      failedCount += 1;
      env.log(`${outcome.companyName} (${check.companyId}): FAIL: ${check.reasons.join('; ')}`);
    }
    progress.update(`Checking: ${rateLine(done, targets.length, started, 'companies')} · ${failedCount} failed · ${limitText(limit)}`);
  }).finally(() => changes?.close());
  const stats = limit.stats();
  run.throughput.checks = { concurrency: stats.concurrency, rate: stats.rate };
  if (signal.aborted) {
    progress.fail('Stopped checking.');
    throw interrupted('Interrupted: the outcomes so far are saved in the plan; run the same step again to go on.');
  }
  progress.done(`Checked ${counted(checks.length, 'company', 'companies')}: ${formatCount(checks.length - failedCount)} passed, ${formatCount(failedCount)} failed (${durationText(Date.now() - started)}).`);
  return checks;
}

/** A migrated company's outcome from its check. */
function checkedOutcome(row: RowInfo, result: NonNullable<ReturnType<MigrationResults['get']>>, check: CheckResult, pilot: boolean): CompanyOutcome {
  const connectionCreated = check.criteria.find((c) => c.name === 'connection')?.evidence.created;
  const outcome: CompanyOutcome = {
    ...baseOutcome(row, pilot),
    companyName: check.companyName ?? row.companyName ?? row.key,
    companyId: check.companyId,
    migration: result.status === 'skipped' ? 'skipped' : 'migrated',
    verdict: check.verdict,
    reasons: check.reasons,
    criteria: Object.fromEntries(check.criteria.map((c) => [c.name, c.status])),
    checkedAt: check.finishedAt,
    durations: { checkSeconds: check.seconds, ...(check.syncSeconds !== undefined ? { syncSeconds: check.syncSeconds } : {}) },
  };
  if (check.connectionId) outcome.connectionId = check.connectionId;
  if (typeof connectionCreated === 'string') outcome.migratedAt = connectionCreated;
  if (check.records !== undefined) outcome.records = check.records;
  return outcome;
}
