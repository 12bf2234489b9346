// The six steps of a managed migration. Each takes the plan and its inputs, does its work
// against the service (acting for the plan's client) and the platform where the platform
// can be asked (the sandbox), and returns done or failed with notes. The caller records
// the state and saves the plan; steps 5 and 6 also save each company's outcome as it
// comes, so a killed step 6 resumes where it stopped.
import { createReadStream, existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ApiClient } from '../../client/client.js';
import { ApiRequestError } from '../../client/errors.js';
import type { Connection } from '../../client/connection.js';
import { CliError, EXIT, InterruptedError, UsageError } from '../../cli/errors.js';
import type { IO } from '../../cli/io.js';
import type { SandboxApi } from '../../client/sandbox-api.js';
import { durationText } from '../../lib/duration.js';
import type { IntegrationInfo, RowResult } from '../migrate/types.js';
import { checkCompanies, integrationCache, type CheckResult, type CheckTarget } from './check.js';
import {
  companiesPath, contactText, fingerprint, parseContact, stepOf, storedCompaniesPath, workDir,
  type CompanyOutcome, type Contact, type PilotRef, type Plan, type StepNumber,
} from './plan.js';
import { appCallback, callbackUrlFor, legacyRefreshes, optionalSandbox } from './sandbox.js';

export interface StepInputs {
  platform?: string;
  appClientId?: string;
  companies?: string;
  pilot?: string;
  date?: string;
  contacts?: string[];
  /** Who confirms (--by, default $USER). */
  by: string;
  notes?: string;
  concurrency: number;
  timeoutMs: number;
  pollMs?: number;
  /** Step 6: where the handover report goes (default <plan>-report/ beside the plan). */
  reportDir?: string;
}

export interface StepEnv {
  io: IO;
  signal: AbortSignal;
  planPath: string;
  plan: Plan;
  /** Writes the plan as it is now (atomically). */
  save(): void;
  /** The service, acting for the plan's client. */
  connection(): Promise<Connection>;
  /** A progress or log line on stderr (not with --json). */
  log(line: string): void;
  /** Records the step's state in the plan now (step 6 does, so that its report shows it); the runner does otherwise. */
  record(state: 'done' | 'failed', notes: string, hint?: string): void;
}

export interface StepResult {
  state: 'done' | 'failed';
  notes: string;
  details: Record<string, unknown>;
  /** Exit code when failed (default 1; 3 when step 6 partly passed). */
  exitCode?: number;
  hint?: string;
}

/** An answer a step needs that neither the plan nor the flags give. */
export interface MissingInput {
  flag: string;
  message: string;
  kind: 'text' | 'contacts';
  /** Sets the answer on the inputs. */
  set(inputs: StepInputs, value: string | string[]): void;
}

export function missingInputs(step: StepNumber, plan: Plan, inputs: StepInputs): MissingInput[] {
  const missing: MissingInput[] = [];
  if (step === 1) {
    if (!inputs.platform && !plan.platform.key) {
      missing.push({ flag: '--platform KEY', message: 'Platform key (ferry integrations list --route managed)', kind: 'text', set: (i, v) => (i.platform = String(v)) });
    }
    if (!inputs.appClientId && !plan.platform.appClientId) {
      missing.push({ flag: '--app-client-id ID', message: "Client id of the client's OAuth app at the platform", kind: 'text', set: (i, v) => (i.appClientId = String(v)) });
    }
    if (!inputs.companies && !plan.companies.file) {
      missing.push({ flag: '--companies FILE.csv', message: 'Company CSV (companyName, externalId and the token columns)', kind: 'text', set: (i, v) => (i.companies = String(v)) });
    }
  }
  if (step === 2) {
    if (!inputs.date && !plan.schedule.date) {
      missing.push({ flag: '--date YYYY-MM-DD', message: 'Migration date (YYYY-MM-DD)', kind: 'text', set: (i, v) => (i.date = String(v)) });
    }
    if ((inputs.contacts ?? []).length === 0 && plan.contacts.length === 0) {
      missing.push({ flag: '--contact "Name <email>"', message: 'Contact at the client (Name <email>)', kind: 'contacts', set: (i, v) => (i.contacts = Array.isArray(v) ? v : [v]) });
    }
  }
  return missing;
}

/** What a person confirms (or is asked) before the step runs. */
export function confirmQuestion(step: StepNumber, plan: Plan, callbackUrl?: string): string {
  const companies = plan.companies.count ? `${plan.companies.count} compan${plan.companies.count === 1 ? 'y' : 'ies'}` : 'the companies';
  switch (step) {
    case 1: return 'Check the platform details and validate the company file?';
    case 2: return 'Record this schedule and these contacts?';
    case 3: return callbackUrl
      ? `Has the client added ${callbackUrl} to the callback URLs of its app ${plan.platform.appClientId}?`
      : 'Check the callback URL on the client\'s app?';
    case 4: return `Has the client disabled syncing in its existing application for all ${companies}?`;
    case 5: return `Import the pilot company${plan.companies.pilot ? ` ${pilotLabel(plan.companies.pilot)}` : ''} and run the end-to-end check?`;
    case 6: return `Migrate the remaining ${Math.max(0, plan.companies.count - 1)} companies, check each, and write the handover report?`;
  }
}

function pilotLabel(pilot: PilotRef): string {
  return `${pilot.companyName ?? pilot.key} (${pilot.externalId ? `${pilot.externalId}, ` : ''}row ${pilot.row})`;
}

function failed(notes: string, hint?: string, details: Record<string, unknown> = {}, exitCode?: number): StepResult {
  return { state: 'failed', notes, details, ...(hint ? { hint } : {}), ...(exitCode !== undefined ? { exitCode } : {}) };
}

async function integrationsOf(client: ApiClient, signal: AbortSignal): Promise<IntegrationInfo[]> {
  return (await client.get<{ results: IntegrationInfo[] }>('/integrations', { query: { pageSize: 5000 }, signal })).results;
}

export interface RowInfo {
  row: number;
  key: string;
  externalId?: string;
  companyName?: string;
  platformKey: string;
}

/** Every valid row of the company file, as the bulk engine reads it. */
async function listRows(file: string, integrations: IntegrationInfo[], platform: string): Promise<RowInfo[]> {
  const { validateInput } = await import('../migrate/first-pass.js');
  const rows: RowInfo[] = [];
  await validateInput({
    openInput: () => createReadStream(file), inputName: file, integrations, defaultPlatform: platform, allowManaged: true,
    concurrency: 1, resultsPath: '', journalPath: '',
  }, async (validated) => {
    if (!validated.ok) return;
    const { row, key, externalId, companyName, platformKey } = validated.row;
    rows.push({ row, key, platformKey, ...(externalId ? { externalId } : {}), ...(companyName ? { companyName } : {}) });
  });
  return rows;
}

// ---------------------------------------------------------------- step 1

export async function stepPlatformDetails(env: StepEnv, inputs: StepInputs): Promise<StepResult> {
  const { plan, signal } = env;
  const key = (inputs.platform ?? plan.platform.key).trim().toLowerCase();
  const appClientId = (inputs.appClientId ?? plan.platform.appClientId).trim();
  const file = inputs.companies ?? (plan.companies.file ? companiesPath(env.planPath, plan) : '');
  const connection = await env.connection();
  const { client } = connection;

  let integration: IntegrationInfo & { dataTypes: string[] };
  try {
    integration = await client.get(`/integrations/${encodeURIComponent(key)}`, { signal });
  } catch (err) {
    if (err instanceof ApiRequestError && err.status === 404) {
      return failed(`${key} is not a platform of the registry.`, 'See the keys with: ferry integrations list --route managed');
    }
    throw err;
  }
  plan.platform = { key: integration.key, name: integration.name, migrationRoute: integration.migrationRoute, appClientId };
  plan.service.baseUrl = connection.baseUrl;
  const notes: string[] = [`${integration.name} (${integration.key}), app ${appClientId}`];
  if (integration.migrationRoute === 'self-service') {
    const note = `${integration.name} has a self-service route: ferry migrate tokens is the simpler way for the client; the managed migration goes on if you want it.`;
    env.log(`note: ${note}`);
    notes.push(note);
  }

  if (!existsSync(file)) return failed(`The company file ${file} does not exist.`, 'Give the CSV with --companies FILE.csv (ferry templates show KEY shows its columns).');
  plan.companies.file = storedCompaniesPath(env.planPath, file);

  const integrations = await integrationsOf(client, signal);
  const work = workDir(env.planPath);
  const { runMigration } = await import('../migrate/engine.js');
  const { RowsError } = await import('../migrate/first-pass.js');
  const { CsvFormatError } = await import('../migrate/read-rows.js');
  env.log(`Validating ${file} as the bulk migration does (nothing is written)…`);
  let summary;
  try {
    summary = await runMigration({
      openInput: () => createReadStream(file), inputName: file, integrations, defaultPlatform: integration.key,
      concurrency: 1, dryRun: true, allowManaged: true,
      resultsPath: join(work, 'validation.results.csv'), journalPath: join(work, 'validation.journal'), signal,
    }, {
      client,
      account: async () => {
        const profile = await client.get<{ plan: string }>('/profile', { signal });
        const companies = await client.get<{ totalResults: number }>('/companies', { query: { pageSize: 1 }, signal });
        return { plan: profile.plan, companies: companies.totalResults };
      },
    });
  } catch (err) {
    if (err instanceof CsvFormatError || err instanceof RowsError) return failed(`The company file is not a readable CSV: ${err.message}`, 'Check the quoting and the header row.');
    throw err;
  }
  const { validation } = summary;
  if (validation.invalid > 0) {
    for (const { row, problems } of validation.problems.slice(0, 10)) for (const p of problems) env.log(`  row ${row}, ${p.field}: ${p.message}`);
    return failed(`${validation.invalid} of ${validation.rows} rows are not valid; every problem is in ${summary.results}.`,
      'Fix the rows, then run step 1 again.', { validation: { rows: validation.rows, valid: validation.valid, invalid: validation.invalid, results: summary.results } });
  }
  if (validation.rows === 0) return failed('The company file has no rows.', 'Add one row per company.');
  const rows = await listRows(file, integrations, integration.key);
  const others = rows.filter((r) => r.platformKey !== integration.key);
  if (others.length > 0) {
    return failed(`${others.length} row${others.length === 1 ? ' is' : 's are'} for another platform than ${integration.key} (first: row ${others[0]!.row}, ${others[0]!.platformKey}).`,
      'A managed migration moves one platform: split the file by platformKey.');
  }
  const report = summary.dryRunReport!;
  if (summary.planLimitHit) {
    return failed(`The client's ${report.plan} plan allows ${report.headroom} more companies, and the file would create ${report.toCreate}.`,
      'Move the client to the Paid plan (or migrate into existing companies with a companyId column), then run step 1 again.');
  }

  const wanted = inputs.pilot?.trim();
  const pilotRow = wanted ? rows.find((r) => r.externalId === wanted) : rows[0];
  if (!pilotRow) return failed(`No row has externalId ${wanted}, so it cannot be the pilot.`, 'Give --pilot with an externalId of the file, or leave it out to pilot the first row.');
  plan.companies.fingerprint = await fingerprint(file);
  plan.companies.count = validation.rows;
  plan.companies.pilot = pilotRef(pilotRow);
  notes.push(`${validation.rows} companies valid (${report.toCreate} to create, ${report.existing} already exist); pilot ${pilotLabel(plan.companies.pilot)}`);
  return {
    state: 'done', notes: notes.join('; '),
    details: {
      platform: plan.platform, companies: { file: plan.companies.file, count: validation.rows, toCreate: report.toCreate, existing: report.existing, pilot: plan.companies.pilot },
      validationResults: summary.results,
    },
  };
}

function pilotRef(row: RowInfo): PilotRef {
  return { row: row.row, key: row.key, ...(row.externalId ? { externalId: row.externalId } : {}), ...(row.companyName ? { companyName: row.companyName } : {}) };
}

// ---------------------------------------------------------------- step 2

export async function stepSchedule(env: StepEnv, inputs: StepInputs): Promise<StepResult> {
  const { plan } = env;
  const date = (inputs.date ?? plan.schedule.date).trim();
  if (!/^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(date) || Number.isNaN(Date.parse(date))) {
    throw new UsageError(`--date ${date} is not a date.`, 'Use YYYY-MM-DD (or an ISO 8601 date-time), e.g. --date 2026-12-01');
  }
  const contacts: Contact[] = [...plan.contacts];
  for (const text of inputs.contacts ?? []) {
    const contact = parseContact(text);
    if (!contact) throw new UsageError(`--contact ${JSON.stringify(text)} is not "Name <email>".`, 'Example: --contact "Jo Bloggs <jo@acme.example>" (repeat --contact for more).');
    const same = contacts.findIndex((c) => c.email.toLowerCase() === contact.email.toLowerCase());
    if (same >= 0) contacts[same] = contact;
    else contacts.push(contact);
  }
  if (contacts.length === 0) throw new UsageError('Missing --contact "Name <email>".', 'Name at least one contact at the client.');
  plan.schedule.date = date;
  plan.contacts = contacts;
  if (Date.parse(date) < Date.now() - 86_400_000) env.log(`note: ${date} is in the past.`);
  return { state: 'done', notes: `${date} · ${contacts.map(contactText).join(', ')}`, details: { schedule: plan.schedule, contacts } };
}

// ---------------------------------------------------------------- step 3

/** The callback URL as this plan defines it (the service the CLI talks to). */
export async function planCallbackUrl(env: StepEnv): Promise<string> {
  const connection = await env.connection();
  return callbackUrlFor(connection.baseUrl, env.plan.platform.key);
}

export async function stepCallbackUrl(env: StepEnv, inputs: StepInputs): Promise<StepResult> {
  const { plan, signal } = env;
  const connection = await env.connection();
  const url = callbackUrlFor(connection.baseUrl, plan.platform.key);
  plan.service = { baseUrl: connection.baseUrl, callbackUrl: url };
  env.log(`The service's callback URL for ${plan.platform.name}: ${url}`);
  if (connection.embedded) env.log('note: the embedded service listens on a new port each run; use ferry serve (or the real service) for a callback URL that lasts.');
  const sandbox = await optionalSandbox(connection);
  if (!sandbox) {
    return { state: 'done', notes: `${url}: confirmed by ${inputs.by} (the platform cannot be asked)`, details: { callbackUrl: url, checkedWithPlatform: false } };
  }
  const app = await appCallback(sandbox, plan.platform.appClientId, url, signal);
  if (!app.found) {
    return failed(`The platform has no app ${plan.platform.appClientId}.`,
      `Check the client's app client id, then: ferry managed step 1 --confirm --redo --app-client-id ID`, { callbackUrl: url, checkedWithPlatform: true });
  }
  if (app.platform !== plan.platform.key) {
    return failed(`App ${plan.platform.appClientId} belongs to platform ${app.platform}, not ${plan.platform.key}.`,
      'Check the client\'s app client id (ferry managed step 1 --confirm --redo --app-client-id ID).', { callbackUrl: url, checkedWithPlatform: true });
  }
  if (!app.registered) {
    return failed(`${url} is not registered on the client's app ${plan.platform.appClientId} (it has ${app.callbackUrls.length ? app.callbackUrls.join(', ') : 'no callback URLs'}).`,
      `Ask the client to add ${url} to the callback (redirect) URLs of app ${plan.platform.appClientId} at ${plan.platform.name}, then run: ferry managed step 3 --confirm`,
      { callbackUrl: url, checkedWithPlatform: true, registered: app.callbackUrls });
  }
  return { state: 'done', notes: `${url}: registered on app ${plan.platform.appClientId} (checked with the platform)`, details: { callbackUrl: url, checkedWithPlatform: true } };
}

// ---------------------------------------------------------------- step 4

export async function stepSyncingDisabled(env: StepEnv, inputs: StepInputs): Promise<StepResult> {
  const count = env.plan.companies.count;
  return {
    state: 'done',
    notes: `${inputs.by} confirmed that the client disabled syncing in its existing application for all ${count} companies; a legacy refresh after this time fails that company`,
    details: { companies: count },
  };
}

// ---------------------------------------------------------------- steps 5 and 6

interface Batch {
  rows: RowInfo[];
  pilot: boolean;
  /** Results and journal file names in the work dir. */
  name: string;
  integrations: IntegrationInfo[];
}

async function assertSameFile(env: StepEnv): Promise<string | StepResult> {
  const file = companiesPath(env.planPath, env.plan);
  if (!existsSync(file)) return failed(`The company file ${file} is not there.`, 'Put it back where step 1 found it (the plan stores its path relative to the plan), or run step 1 again with --redo --companies FILE.');
  if ((await fingerprint(file)) !== env.plan.companies.fingerprint) {
    return failed(`The company file ${file} changed since step 1 validated it.`, 'Validate it again: ferry managed step 1 --confirm --redo');
  }
  return file;
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

async function readResults(path: string): Promise<Map<number, RowResult>> {
  const { parse } = await import('csv-parse');
  const results = new Map<number, RowResult>();
  if (!existsSync(path)) return results;
  const parser = createReadStream(path).pipe(parse({ columns: true, bom: true, skip_empty_lines: true }));
  for await (const record of parser as AsyncIterable<RowResult & { row: string }>) results.set(Number(record.row), { ...record, row: Number(record.row) });
  return results;
}

/** Holds back, migrates (bulk engine) and checks a batch of rows, saving each company's outcome as it comes. */
async function migrateAndCheck(env: StepEnv, inputs: StepInputs, file: string, batch: Batch): Promise<{ outcomes: CompanyOutcome[]; checks: CheckResult[] }> {
  const { plan, signal } = env;
  const connection = await env.connection();
  const { client } = connection;
  const sandbox: SandboxApi | undefined = await optionalSandbox(connection);
  const since = legacySince(plan);
  const { default: pLimit } = await import('p-limit');
  const limit = pLimit(Math.max(1, inputs.concurrency));
  const { startProgress, rateLine } = await import('../../cli/progress.js');
  const previous = new Map(plan.outcomes.map((o) => [o.row, o]));
  const passedBefore = (row: RowInfo) => {
    const o = previous.get(row.row);
    return o?.verdict === 'pass' && o.key === row.key && o.companyId !== undefined;
  };
  const todo = batch.rows.filter((r) => !passedBefore(r));
  if (todo.length < batch.rows.length) env.log(`${batch.rows.length - todo.length} compan${batch.rows.length - todo.length === 1 ? 'y' : 'ies'} passed in an earlier run: not checked again.`);

  // 1. Companies whose legacy application refreshed after syncing was confirmed disabled are
  //    held back: their tokens in the file are spent (or about to be), so importing them would only break.
  const heldBack = new Map<number, string>();
  if (sandbox) {
    await Promise.all(todo.map((row) => limit(async () => {
      const lookup = await legacyRefreshes(sandbox, tenantOf(row), since.at, signal);
      if (lookup.checked && lookup.refreshes.length > 0) {
        heldBack.set(row.row, `reauthorization required: the legacy application refreshed the token at ${lookup.refreshes[0]!.at}, after ${since.what}`);
      }
    })));
  }
  for (const [rowNumber, reason] of heldBack) {
    const row = todo.find((r) => r.row === rowNumber)!;
    const outcome = { ...baseOutcome(row, batch.pilot), migration: 'not-imported' as const, reasons: [reason], checkedAt: new Date().toISOString() };
    upsertOutcome(plan, outcome);
    env.log(`${outcome.companyName}: not imported: ${reason}`);
  }
  if (heldBack.size > 0) env.save();

  // 2. The bulk engine migrates the rest (no sync: the check queues a fresh one).
  const toMigrate = todo.filter((r) => !heldBack.has(r.row));
  const work = workDir(env.planPath);
  const resultsPath = join(work, `${batch.name}.results.csv`);
  if (toMigrate.length > 0) {
    const { runMigration, JournalMismatchError } = await import('../migrate/engine.js');
    const started = Date.now();
    const progress = await startProgress(env.io, `Migrating ${toMigrate.length} compan${toMigrate.length === 1 ? 'y' : 'ies'}…`);
    let summary;
    try {
      summary = await runMigration({
        openInput: () => createReadStream(file), inputName: file, integrations: batch.integrations, defaultPlatform: plan.platform.key,
        concurrency: Math.max(1, inputs.concurrency), noSync: true, allowManaged: true, onlyRows: new Set(toMigrate.map((r) => r.row)),
        resultsPath, journalPath: `${resultsPath}.journal`, signal,
      }, { client, onProgress: (p) => progress.update(`Migrating: ${rateLine(p.done, p.total, started, 'companies')} · ${p.failed} failed`) });
    } catch (err) {
      progress.fail('Migration stopped.');
      if (err instanceof JournalMismatchError) throw new CliError(err.message, EXIT.error, `The company file changed: validate it again (ferry managed step 1 --confirm --redo), or remove ${resultsPath}.journal.`);
      throw err;
    }
    progress.done(`Migrated ${summary.migrated} · already migrated ${summary.skipped} · failed ${summary.failed}${summary.resumed ? ` · ${summary.resumed} done by an earlier run` : ''}${summary.retried ? ` · ${summary.retried} tried again` : ''} (${summary.seconds.toFixed(1)}s).`);
    if (summary.stoppedBy === 'auth') {
      throw new CliError(`The service refused the key (${summary.authError?.message}); the migration stopped.`, EXIT.auth, 'Use the support team\'s admin key (ferry whoami), then run the step again to resume.');
    }
    if (summary.stoppedBy === 'interrupt') throw new InterruptedError('Interrupted: in-flight companies finished; run the same step again to resume.');
  }

  // 3. The end-to-end check of every migrated company.
  const results = await readResults(resultsPath);
  const targets: Array<{ row: RowInfo; target: CheckTarget }> = [];
  for (const row of toMigrate) {
    const result = results.get(row.row);
    const outcome = baseOutcome(row, batch.pilot);
    if (!result || result.status === 'failed' || !result.companyId) {
      outcome.reasons = [result ? `migration failed at the ${result.step || 'company'} step: ${result.error}${result.httpStatus ? ` (HTTP ${result.httpStatus})` : ''}` : 'not migrated (the run stopped before this company)'];
      if (result?.companyId) outcome.companyId = result.companyId;
      outcome.checkedAt = new Date().toISOString();
      upsertOutcome(plan, outcome);
      continue;
    }
    const target: CheckTarget = { companyId: result.companyId, platformKey: plan.platform.key, legacySince: since };
    const tenant = tenantOf(row);
    if (tenant) target.tenantId = tenant;
    targets.push({ row, target });
  }
  env.save();
  if (targets.length === 0) return { outcomes: plan.outcomes.filter((o) => batch.rows.some((r) => r.row === o.row)), checks: [] };
  const byCompany = new Map(targets.map((t) => [t.target.companyId, t.row]));
  const migration = new Map(targets.map((t) => [t.row.row, results.get(t.row.row)!]));
  let done = 0;
  let failedCount = 0;
  const started = Date.now();
  const progress = await startProgress(env.io, `Checking ${targets.length} compan${targets.length === 1 ? 'y' : 'ies'} end to end (fresh sync of every data type)…`);
  const checks = await checkCompanies(targets.map((t) => t.target), {
    sync: true, timeoutMs: inputs.timeoutMs, signal, concurrency: Math.max(1, inputs.concurrency), ...(inputs.pollMs ? { pollMs: inputs.pollMs } : {}),
  }, { client, ...(sandbox ? { sandbox } : {}), integration: integrationCache(client, signal) }, (check) => {
    const row = byCompany.get(check.companyId)!;
    const result = migration.get(row.row)!;
    const connectionCreated = check.criteria.find((c) => c.name === 'connection')?.evidence.created;
    const outcome: CompanyOutcome = {
      ...baseOutcome(row, batch.pilot),
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
    upsertOutcome(plan, outcome);
    env.save();
    done += 1;
    if (check.verdict === 'fail') {
      failedCount += 1;
      env.log(`${outcome.companyName} (${check.companyId}): FAIL: ${check.reasons.join('; ')}`);
    }
    progress.update(`Checking: ${rateLine(done, targets.length, started, 'companies')} · ${failedCount} failed`);
  });
  if (signal.aborted) {
    progress.fail('Stopped checking.');
    throw new InterruptedError('Interrupted: the outcomes so far are saved in the plan; run the same step again to go on.');
  }
  progress.done(`Checked ${checks.length} compan${checks.length === 1 ? 'y' : 'ies'}: ${checks.length - failedCount} passed, ${failedCount} failed (${durationText(Date.now() - started)}).`);
  const rowsOfBatch = new Set(batch.rows.map((r) => r.row));
  return { outcomes: plan.outcomes.filter((o) => rowsOfBatch.has(o.row)), checks };
}

/** The company file (unchanged since step 1), the registry, and the file's valid rows; or the step's failure. */
async function companyRows(env: StepEnv): Promise<StepResult | { file: string; integrations: IntegrationInfo[]; rows: RowInfo[] }> {
  const file = await assertSameFile(env);
  if (typeof file !== 'string') return file;
  const { client } = await env.connection();
  const integrations = await integrationsOf(client, env.signal);
  return { file, integrations, rows: await listRows(file, integrations, env.plan.platform.key) };
}

export async function stepPilot(env: StepEnv, inputs: StepInputs): Promise<StepResult> {
  const { plan } = env;
  const loaded = await companyRows(env);
  if (!('rows' in loaded)) return loaded;
  const { file, integrations, rows } = loaded;
  let pilot = rows.find((r) => r.row === plan.companies.pilot?.row && r.key === plan.companies.pilot?.key) ?? rows[0];
  if (inputs.pilot) {
    pilot = rows.find((r) => r.externalId === inputs.pilot!.trim());
    if (!pilot) throw new UsageError(`No row of the company file has externalId ${inputs.pilot}.`, 'Give --pilot with an externalId of the file, or leave it out.');
  }
  if (!pilot) return failed('The company file has no valid row to pilot.', 'Run step 1 again.');
  if (plan.companies.pilot?.row !== pilot.row) {
    // A different pilot: the earlier one's outcome no longer describes the pilot.
    plan.outcomes = plan.outcomes.filter((o) => !o.pilot || o.row === pilot!.row);
  }
  plan.companies.pilot = pilotRef(pilot);
  env.log(`Pilot: ${pilotLabel(plan.companies.pilot)}`);
  const { outcomes, checks } = await migrateAndCheck(env, inputs, file, { rows: [pilot], pilot: true, name: 'pilot', integrations });
  const outcome = outcomes[0];
  const details = { pilot: plan.companies.pilot, outcome, check: checks[0] };
  if (outcome?.verdict === 'pass') {
    return { state: 'done', notes: `pilot ${outcome.companyName} (${outcome.companyId}) passed the end-to-end check in ${outcome.durations.checkSeconds}s`, details };
  }
  const reasons = outcome?.reasons.join('; ') || 'no outcome';
  const reauth = /reauthorization required/.test(reasons);
  return failed(`pilot ${outcome?.companyName ?? pilot.key} failed: ${reasons}`,
    reauth
      ? 'The client\'s existing application still refreshes tokens: have the client disable syncing there for every company and supply fresh tokens for this one, confirm again (ferry managed step 4 --confirm --redo), then rerun step 5.'
      : 'See the check\'s evidence (ferry check COMPANY_ID --json), fix the cause, then run step 5 again.',
    details);
}

export async function stepMigrateRest(env: StepEnv, inputs: StepInputs): Promise<StepResult> {
  const { plan } = env;
  const loaded = await companyRows(env);
  if (!('rows' in loaded)) return loaded;
  const { file, integrations, rows } = loaded;
  const pilotRow = plan.companies.pilot?.row;
  const rest = rows.filter((r) => r.row !== pilotRow);
  env.log(`Migrating the remaining ${rest.length} compan${rest.length === 1 ? 'y' : 'ies'} of ${file} (the pilot, row ${pilotRow}, is done).`);
  await migrateAndCheck(env, inputs, file, { rows: rest, pilot: false, name: 'migration', integrations });
  // Outcomes of rows no longer in the file (a re-validated file) do not belong in the report.
  const current = new Set(rows.map((r) => r.row));
  plan.outcomes = plan.outcomes.filter((o) => current.has(o.row));

  const passedCount = plan.outcomes.filter((o) => o.verdict === 'pass').length;
  const failedCount = plan.outcomes.length - passedCount;
  const { writeReport, defaultReportPath } = await import('./report.js');
  const reportDir = defaultReportPath(env.planPath, inputs.reportDir);
  const notes = failedCount === 0
    ? `${passedCount} of ${plan.outcomes.length} companies migrated and passed the end-to-end check; report in ${reportDir}`
    : `${failedCount} of ${plan.outcomes.length} companies failed (${passedCount} passed); see ${join(reportDir, 'report.html')}`;
  env.record(failedCount === 0 ? 'done' : 'failed', notes);
  const files = await writeReport(plan, env.planPath, reportDir);
  plan.report = { dir: files.dir, files: [files.markdown, files.html, files.json], at: new Date().toISOString() };
  env.log(`Handover report: ${files.html} (also ${files.markdown} and ${files.json})`);
  const passed = plan.outcomes.filter((o) => o.verdict === 'pass').length;
  const failedOnes = plan.outcomes.filter((o) => o.verdict === 'fail');
  const details = { companies: plan.outcomes.length, passed, failed: failedOnes.length, report: files, failures: failedOnes.map((o) => ({ row: o.row, companyId: o.companyId, companyName: o.companyName, reasons: o.reasons })) };
  if (failedOnes.length === 0) return { state: 'done', notes, details };
  return failed(notes,
    'Fix the causes listed in the report (reauthorization: the client authorizes the company again), then run step 6 again: companies that passed are not checked again.',
    details, passed > 0 ? EXIT.partial : EXIT.error);
}

export const STEPS: Record<StepNumber, (env: StepEnv, inputs: StepInputs) => Promise<StepResult>> = {
  1: stepPlatformDetails,
  2: stepSchedule,
  3: stepCallbackUrl,
  4: stepSyncingDisabled,
  5: stepPilot,
  6: stepMigrateRest,
};
