// The bulk token migration. Two streaming passes over the input: the first validates every
// row (nothing is written if the caller stops there: --dry-run), the second runs each row
// of this shard through company → connection → authorize → sync, as many rows at once as
// the adaptive limit allows (client/adaptive-limit.ts), journaling every finished step. Crash-only: a rerun reads the journal,
// skips finished rows and resumes half-done ones, and every step is safe to repeat.
import type { ApiClient } from '../../client/client.js';
import { AdaptiveLimit, limitOptions, type LimitStats } from '../../client/adaptive-limit.js';
import * as api from '../../client/api.js';
import { ApiRequestError } from '../../client/errors.js';
import { indexEntry, loadCompanyIndex, reusableConnection, type CompanyRecord, type IndexedCompany } from './company-index.js';
import { readJournal, JournalWriter, type JournalState } from './journal.js';
import { checkFieldCount, inShard, validateInput, type ValidationReport } from './first-pass.js';
import { readRows } from './read-rows.js';
import { JournalMismatchError } from './errors.js';
import { openResults, resultsFromJournal } from './results.js';
import type { MigrationOptions, RowResult, Step, ValidRow } from './types.js';
import { ambiguous, baseResult, errorText, problemText } from './row-result.js';
import { RowValidator, type Validated } from './validate.js';
import { FREE_PLAN_COMPANY_LIMIT } from '../../platforms/limits.js';

export interface MigrationProgress {
  total: number;
  done: number;
  migrated: number;
  skipped: number;
  failed: number;
}

export interface DryRunReport {
  /** Rows whose company already exists (found by ferryKey): they would be skipped or resumed. */
  existing: number;
  /** Companies the run would create. */
  toCreate: number;
  plan?: string;
  /** Companies the plan still allows (Free plan: 50 in all); undefined when unlimited. */
  headroom?: number;
}

export interface MigrationSummary {
  dryRun: boolean;
  input: string;
  results: string;
  journal?: string;
  validation: ValidationReport;
  dryRunReport?: DryRunReport;
  total: number;
  migrated: number;
  skipped: number;
  failed: number;
  failedBySteps: Partial<Record<Step, number>>;
  /** Rows finished by earlier runs of the same journal. */
  resumed: number;
  /** Rows that failed in an earlier run and were tried again. */
  retried: number;
  seconds: number;
  rowsPerSecond: number;
  stoppedBy?: 'interrupt' | 'auth' | 'fail-fast';
  planLimitHit: boolean;
  authError?: ApiRequestError;
  /** Rows in flight at the end and at most (the adaptive limit's window; a dry run has none). */
  concurrency?: LimitStats['concurrency'];
  /** Requests a second, on average. */
  rate?: number;
}

export interface MigrationDeps {
  client: ApiClient;
  /** Progress after each row; `limit` gives the live concurrency and rate. */
  onProgress?: (progress: MigrationProgress, limit: AdaptiveLimit) => void;
  /** The run's limit (default: one from `concurrency` and `maxRate`). */
  limit?: AdaptiveLimit;
  /** Whether the key acts for a Free plan account, and its company count (for dry-run headroom). */
  account?: () => Promise<{ plan: string; companies: number }>;
  now?: () => number;
}


/** A company create not sent, because an earlier one in this run got the plan's 402. */
class CompanyLimitReached extends Error {
  constructor(firstRow: number) {
    super(`The plan's company limit was reached at row ${firstRow}; no more companies can be created (rows with existing companies go on).`);
    this.name = 'CompanyLimitReached';
  }
}

export async function runMigration(options: MigrationOptions, deps: MigrationDeps): Promise<MigrationSummary> {
  const now = deps.now ?? Date.now;
  const started = now();
  if (options.dryRun) return dryRun(options, deps, started);

  const validation = await validateInput(options);
  const journal: JournalState = await readJournal(options.journalPath);
  // Retrying failed rows of an edited file is safe: rows that went through are left alone,
  // and every step of the others is safe to repeat.
  if (journal.fingerprint && journal.fingerprint !== validation.fingerprint && !options.retryFailed) throw new JournalMismatchError(options.journalPath);
  const writer = new JournalWriter(options.journalPath);
  writer.append({ type: 'start', input: options.inputName, fingerprint: validation.fingerprint, at: new Date(now()).toISOString(), ...(options.shard ? { shard: `${options.shard.index}/${options.shard.count}` } : {}) });

  const limit = deps.limit ?? new AdaptiveLimit(limitOptions(options));
  const detach = limit.attach(deps.client);
  try {
    return await migrate(options, deps, validation, journal, writer, limit, started);
  } finally {
    detach();
  }
}

/** Pass two and the results, once the input is validated and the journal read. */
async function migrate(
  options: MigrationOptions, deps: MigrationDeps, validation: ValidationReport, journal: JournalState, writer: JournalWriter, limit: AdaptiveLimit, started: number,
): Promise<MigrationSummary> {
  const now = deps.now ?? Date.now;
  const index = await loadCompanyIndex(deps.client, options.signal);
  const pass = new SecondPass(options, deps, validation, journal, writer, limit, index);
  await pass.run();
  if (!pass.stop && options.signal?.aborted) pass.stop = 'interrupt';
  writer.close();

  await resultsFromJournal(options.journalPath, options.resultsPath, options.csvEscape ?? true);
  const { summary, progress, stop } = pass;
  const seconds = Math.max(0.001, (now() - started) / 1000);
  Object.assign(summary, {
    migrated: progress.migrated, skipped: progress.skipped, failed: progress.failed, seconds,
    rowsPerSecond: (progress.migrated + progress.skipped + progress.failed) / seconds,
    concurrency: limit.stats().concurrency, rate: limit.stats().rate,
  });
  if (stop) summary.stoppedBy = stop;
  return summary;
}

/** What the journal knows of a row an earlier run left half done. */
type Resume = JournalState['partial'] extends Map<number, infer Entry> ? Entry : never;

/** Pass two: this shard's rows through the pipeline, counted as they finish, until the input ends or the run stops. */
class SecondPass {
  readonly progress: MigrationProgress;
  readonly summary: MigrationSummary;
  stop: MigrationSummary['stoppedBy'];
  private readonly failedBySteps: Partial<Record<Step, number>> = {};
  /** The row whose company create got the plan's 402: later creates are not even tried. */
  private companyLimitRow: number | undefined;

  constructor(
    private readonly options: MigrationOptions, private readonly deps: MigrationDeps, validation: ValidationReport,
    private readonly journal: JournalState, private readonly writer: JournalWriter, private readonly limit: AdaptiveLimit,
    private readonly index: Map<string, IndexedCompany>,
  ) {
    this.progress = { total: validation.inShard, done: 0, migrated: 0, skipped: 0, failed: 0 };
    this.summary = {
      dryRun: false, input: options.inputName, results: options.resultsPath, journal: options.journalPath, validation,
      total: validation.inShard, migrated: 0, skipped: 0, failed: 0, failedBySteps: this.failedBySteps, resumed: 0, retried: 0, seconds: 0, rowsPerSecond: 0, planLimitHit: false,
    };
  }

  /** Reads the input again: finished rows skipped, invalid ones recorded, the rest run as the limit allows. */
  async run(): Promise<void> {
    const { options, journal, summary, progress } = this;
    const inFlight = new Set<Promise<void>>();
    const csv = await readRows(options.openInput(), options.integrations, options.delimiter, options.encoding);
    const validator = new RowValidator({ integrations: options.integrations, defaultPlatform: options.defaultPlatform, allowManaged: options.allowManaged });
    let position = 0;
    try {
      for await (const raw of csv.rows) {
        const validated = checkFieldCount(raw, validator.validate(raw));
        if (!inShard(position++, options.shard, raw.row, options.onlyRows)) continue;
        if (this.finishedBefore(raw.row, validated)) {
          summary.resumed += 1;
          progress.done += 1;
          continue;
        }
        if (this.stop || options.signal?.aborted) break;
        if (journal.retry.has(raw.row) || journal.done.has(raw.row)) summary.retried += 1;
        if (!validated.ok) {
          const result = baseResult(validated.partial as ValidRow);
          result.step = 'validate';
          result.error = problemText(validated.problems);
          this.finish(result, (validated.partial as ValidRow).key ?? '');
          continue;
        }
        const task = this.runRow(validated.row).finally(() => inFlight.delete(task));
        inFlight.add(task);
        // Read no further than the limit's window (it may have shrunk since).
        while (inFlight.size >= this.limit.concurrency) await Promise.race(inFlight);
      }
    } finally {
      csv.close();
      await Promise.all(inFlight);
    }
  }

  /**
   * A row an earlier run finished. With --retry-failed only a row that went through, and is
   * still the same company (its key): a row fixed since, or moved, runs again.
   */
  private finishedBefore(row: number, validated: Validated): boolean {
    const { journal } = this;
    if (!this.options.retryFailed) return journal.done.has(row);
    const key = validated.ok ? validated.row.key : validated.partial?.key;
    return journal.succeeded.has(row) && journal.succeeded.get(row) === key;
  }

  // A row that failed or was skipped early says nothing of how long a row takes: not a
  // latency sample. A row still waiting for a slot when the run is interrupted is left for the next run.
  private runRow(row: ValidRow): Promise<void> {
    const { signal } = this.options;
    return this.limit.run(async () => !signal?.aborted && this.processRow(row), signal, { sample: (wentThrough) => wentThrough }).then(() => undefined, (err: unknown) => {
      if (!signal?.aborted) throw err;
    });
  }

  /** Journals a finished row and counts it; a failure stops a fail-fast run. */
  private finish(result: RowResult, key: string): void {
    const { progress, failedBySteps } = this;
    this.writer.append({ type: 'done', row: result.row, key, result });
    progress.done += 1;
    if (result.status === 'failed') {
      progress.failed += 1;
      if (result.step) failedBySteps[result.step] = (failedBySteps[result.step] ?? 0) + 1;
      if (this.options.failFast && !this.stop) this.stop = 'fail-fast';
    } else if (result.status === 'skipped') progress.skipped += 1;
    else progress.migrated += 1;
    this.deps.onProgress?.({ ...this.progress }, this.limit);
  }

  /** One row through the pipeline; true when it went all the way (its time is a fair latency sample). */
  private async processRow(row: ValidRow): Promise<boolean> {
    const { client } = this.deps;
    const result = baseResult(row);
    const partial = this.journal.partial.get(row.row);
    const resume = partial && partial.key === row.key ? partial : undefined;
    let step: Step = 'company';
    try {
      const { company, companyId } = await this.placeCompany(row, resume);
      result.companyId = companyId;
      if (!resume?.companyId) this.writer.append({ type: 'company', row: row.row, key: row.key, companyId });

      // Connection: the row's, the journal's, one the company already has for this platform, or a new one.
      step = 'connection';
      const existing = row.connectionId ? undefined : company ? reusableConnection(company, row.platformKey) : undefined;
      let connectionId = row.connectionId ?? resume?.connectionId ?? existing?.id;
      if (!connectionId) connectionId = await createConnection(client, companyId, row.platformKey);
      result.connectionId = connectionId;
      if (!resume?.connectionId) this.writer.append({ type: 'connection', row: row.row, key: row.key, connectionId });

      // Authorize, unless it is done: the service may have rotated the tokens since, and
      // replaying the old refresh token would revoke the grant. A Linked connection this
      // journal never touched was migrated by another run (another machine): skipped.
      step = 'authorize';
      const linkedNow = existing?.status === 'Linked' && existing.id === connectionId;
      const migratedElsewhere = linkedNow && !resume;
      if (!resume?.authorized && !linkedNow) {
        await api.authorizeConnection(client, companyId, connectionId, row.tokens);
        this.writer.append({ type: 'authorized', row: row.row, key: row.key });
      }

      step = 'sync';
      if (!this.options.noSync && !migratedElsewhere) await api.syncAll(client, companyId);
      result.status = migratedElsewhere ? 'skipped' : 'migrated';
      this.finish(result, row.key);
      return !migratedElsewhere;
    } catch (err) {
      return this.rowFailed(err, row, result, step);
    }
  }

  /** Company: the row's own id, the journal's, the index's (an earlier run, any machine), or a new one. */
  private async placeCompany(row: ValidRow, resume: Resume | undefined): Promise<{ company: IndexedCompany | undefined; companyId: string }> {
    const { client } = this.deps;
    let company: IndexedCompany | undefined = this.index.get(row.key);
    if (row.companyId) company = indexEntry(await api.company<CompanyRecord>(client, row.companyId));
    let companyId = row.companyId ?? resume?.companyId ?? company?.companyId;
    if (!companyId) {
      if (this.companyLimitRow !== undefined) throw new CompanyLimitReached(this.companyLimitRow);
      company = await createCompany(client, row);
      companyId = company.companyId;
      this.index.set(row.key, company);
    }
    return { company, companyId };
  }

  /**
   * A row that failed at `step`: recorded as failed, unless the key was refused, which stops
   * the run with the row left for the next one. Always false: not a latency sample.
   */
  private rowFailed(err: unknown, row: ValidRow, result: RowResult, step: Step): boolean {
    const { summary } = this;
    if (err instanceof ApiRequestError && err.status === 401) {
      this.stop = 'auth';
      summary.authError = err;
      return false; // not finished: the next run (with a working key) does this row
    }
    if (err instanceof ApiRequestError && err.status === 403 && !row.companyId) {
      this.stop = 'auth';
      summary.authError = err;
      return false;
    }
    const limitHit = step === 'company' && err instanceof ApiRequestError && err.status === 402;
    if (limitHit || err instanceof CompanyLimitReached) {
      this.companyLimitRow ??= row.row;
      summary.planLimitHit = true;
    }
    result.step = step;
    result.error = limitHit ? `${errorText(err)}: the plan's company limit is reached; rows with existing companies go on` : errorText(err);
    if (err instanceof CompanyLimitReached) result.httpStatus = '402';
    if (err instanceof ApiRequestError) {
      result.httpStatus = String(err.status);
      result.correlationId = err.correlationId ?? '';
    }
    this.finish(result, row.key);
    return false;
  }
}

async function createCompany(client: ApiClient, row: ValidRow): Promise<IndexedCompany> {
  const body: Record<string, unknown> = { name: row.companyName ?? row.key, tags: { ...row.tags, ferryKey: row.key } };
  if (row.description) body.description = row.description;
  for (let attempt = 1; ; attempt += 1) {
    try {
      return indexEntry(await api.createCompany(client, body));
    } catch (err) {
      if (!ambiguous(err) || attempt >= 3) throw err;
      // The service may have created it before the connection broke: look before trying again.
      const found = await api.companiesPage<CompanyRecord>(client, { tags: `ferryKey=${row.key}`, pageSize: 1 });
      if (found.results[0]) return indexEntry(found.results[0]);
    }
  }
}

async function createConnection(client: ApiClient, companyId: string, platformKey: string): Promise<string> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return (await api.createConnection(client, companyId, platformKey)).id;
    } catch (err) {
      if (!ambiguous(err) || attempt >= 3) throw err;
      const company = indexEntry(await api.company<CompanyRecord>(client, companyId));
      const found = reusableConnection(company, platformKey);
      if (found) return found.id;
    }
  }
}

async function dryRun(options: MigrationOptions, deps: MigrationDeps, started: number): Promise<MigrationSummary> {
  const index = await loadCompanyIndex(deps.client, options.signal);
  const sink = openResults(options.resultsPath, options.csvEscape ?? true);
  const report: DryRunReport = { existing: 0, toCreate: 0 };
  let invalidInShard = 0;
  let validation: ValidationReport;
  try {
    validation = await validateInput(options, async (validated, mine) => {
      if (!mine) return;
      const result = baseResult(validated.ok ? validated.row : (validated.partial as ValidRow));
      if (validated.ok) {
        result.status = 'valid';
        if (validated.row.companyId || index.has(validated.row.key)) {
          report.existing += 1;
          result.companyId = validated.row.companyId ?? index.get(validated.row.key)!.companyId;
        } else report.toCreate += 1;
      } else {
        invalidInShard += 1;
        result.step = 'validate';
        result.error = problemText(validated.problems);
      }
      await sink.write(result);
    });
    await sink.close();
  } catch (err) {
    sink.abort();
    throw err;
  }
  if (deps.account) {
    const account = await deps.account();
    report.plan = account.plan;
    if (account.plan === 'Free') report.headroom = Math.max(0, FREE_PLAN_COMPANY_LIMIT - account.companies);
  }
  const seconds = Math.max(0.001, ((deps.now ?? Date.now)() - started) / 1000);
  return {
    dryRun: true, input: options.inputName, results: options.resultsPath, validation, dryRunReport: report,
    total: validation.inShard, migrated: 0, skipped: 0, failed: invalidInShard, failedBySteps: invalidInShard ? { validate: invalidInShard } : {},
    resumed: 0, retried: 0, seconds, rowsPerSecond: validation.rows / seconds, planLimitHit: report.headroom !== undefined && report.toCreate > report.headroom,
  };
}
