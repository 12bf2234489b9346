// Step 1: the platform details. Looks the platform up in the registry (and the client's
// app, where the platform can be asked), validates the company file as the bulk migration
// would (a dry run: nothing is written) and picks the pilot.
import { createReadStream, existsSync } from 'node:fs';
import { join } from 'node:path';
import * as api from '../../client/api.js';
import { knowIntegration, type KnownIntegration, type TargetIntegration } from '../platform-knowledge.js';
import { accountOf } from '../migrate/account.js';
import { ApiRequestError } from '../../client/errors.js';
import { optionalSandbox } from '../check/platform-lookups.js';
import { integrationsOf, listRows, pilotRef } from './company-rows.js';
import { companiesPath, fingerprint, storedCompaniesPath, workDir } from './plan.js';
import { counted } from '../progress.js';
import { failed, pilotLabel, type StepEnv, type StepInputs, type StepResult } from './step-env.js';
// A type only: the engine itself is loaded when the file is validated.
import type { MigrationSummary } from '../migrate/engine.js';

export async function stepPlatformDetails(env: StepEnv, inputs: StepInputs): Promise<StepResult> {
  const { plan } = env;
  const key = (inputs.platform ?? plan.platform.key).trim().toLowerCase();
  const appClientId = (inputs.appClientId ?? plan.platform.appClientId).trim();
  const file = inputs.companies ?? (plan.companies.file ? companiesPath(env.planPath, plan) : '');
  const connection = await env.connection();

  const found = await platformOf(env, connection, key, appClientId);
  if ('failure' in found) return found.failure;
  const { integration, notes } = found;
  const appProblem = await appMismatch(env, connection, integration, appClientId);
  if (appProblem) return appProblem;

  if (!existsSync(file)) return failed(`The company file ${file} does not exist.`, 'Give the CSV with --companies FILE.csv (ferry templates show KEY shows its columns).');
  plan.companies.file = storedCompaniesPath(env.planPath, file);
  const validated = await validateFile(env, connection.client, file, integration);
  if ('failure' in validated) return validated.failure;
  const { summary, rows } = validated;
  const { validation } = summary;
  const report = summary.dryRunReport!;

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

type Connection = Awaited<ReturnType<StepEnv['connection']>>;

/** The platform from the registry, recorded in the plan with the app; the step's first notes. */
async function platformOf(env: StepEnv, connection: Connection, key: string, appClientId: string): Promise<{ integration: KnownIntegration; notes: string[] } | { failure: StepResult }> {
  const { plan } = env;
  let integration: KnownIntegration;
  try {
    integration = knowIntegration(await api.integration<TargetIntegration>(connection.client, key, env.signal));
  } catch (err) {
    if (err instanceof ApiRequestError && err.status === 404) {
      return { failure: failed(`${key} is not a platform of the registry.`, 'See the keys with: ferry integrations list --route managed') };
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
  return { integration, notes };
}

/**
 * On the sandbox the app can be looked up now, rather than at step 3 (which checks it in any case,
 * so a sandbox that cannot be reached from here does not stop this step): the step's failure
 * when there is no such app or it is another platform's.
 */
async function appMismatch(env: StepEnv, connection: Connection, integration: KnownIntegration, appClientId: string): Promise<StepResult | undefined> {
  const { signal } = env;
  const sandbox = await optionalSandbox(connection);
  const app = sandbox && await sandbox.app(appClientId, undefined, signal).catch((err: unknown) => {
    if (signal.aborted) throw err;
    return undefined;
  });
  if (!app) return undefined;
  const appPlatform = app.status === 200 ? String(app.body?.platform ?? '') : undefined;
  if (app.status === 404 || (appPlatform !== undefined && appPlatform !== integration.key)) {
    return failed(app.status === 404 ? `The sandbox has no app ${appClientId}.` : `App ${appClientId} belongs to platform ${appPlatform}, not ${integration.key}.`,
      `See the apps with: ${env.command(`sandbox apps list --platform ${integration.key}`)} (or make one: ${env.command(`sandbox apps create --platform ${integration.key}`)}), then: ${env.command('managed step 1 --confirm --app-client-id ID')}`);
  }
  return undefined;
}

/**
 * The company file validated as the bulk migration does (a dry run: nothing is written), and
 * its rows; the step's failure when a row is not valid, is another platform's, or the
 * client's plan has no room for the companies it would create.
 */
async function validateFile(
  env: StepEnv, client: Connection['client'], file: string, integration: KnownIntegration,
): Promise<{ summary: MigrationSummary; rows: Awaited<ReturnType<typeof listRows>> } | { failure: StepResult }> {
  const { signal } = env;
  const integrations = await integrationsOf(client, signal);
  const work = workDir(env.planPath);
  const { runMigration } = await import('../migrate/engine.js');
  const { CsvFormatError, RowsError } = await import('../migrate/errors.js');
  env.log(`Validating ${file} as the bulk migration does (nothing is written)…`);
  let summary;
  try {
    summary = await runMigration({
      openInput: () => createReadStream(file), inputName: file, integrations, defaultPlatform: integration.key,
      concurrency: 1, dryRun: true, allowManaged: true,
      resultsPath: join(work, 'validation.results.csv'), journalPath: join(work, 'validation.journal'), signal,
    }, {
      client,
      account: () => accountOf(client, signal),
    });
  } catch (err) {
    if (err instanceof CsvFormatError || err instanceof RowsError) return { failure: failed(`The company file is not a readable CSV: ${err.message}`, 'Check the quoting and the header row.') };
    throw err;
  }
  const { validation } = summary;
  if (validation.invalid > 0) {
    for (const { row, problems } of validation.problems.slice(0, 10)) for (const p of problems) env.log(`  row ${row}, ${p.field}: ${p.message}`);
    return { failure: failed(`${validation.invalid} of ${validation.rows} rows are not valid; every problem is in ${summary.results}.`,
      'Fix the rows, then run step 1 again.', { validation: { rows: validation.rows, valid: validation.valid, invalid: validation.invalid, results: summary.results } }) };
  }
  if (validation.rows === 0) return { failure: failed('The company file has no rows.', 'Add one row per company.') };
  const rows = await listRows(file, integrations, integration.key);
  const others = rows.filter((r) => r.platformKey !== integration.key);
  if (others.length > 0) {
    return { failure: failed(`${counted(others.length, 'row is', 'rows are')} for another platform than ${integration.key} (first: row ${others[0]!.row}, ${others[0]!.platformKey}).`,
      'A managed migration moves one platform: split the file by platformKey.') };
  }
  const report = summary.dryRunReport!;
  if (summary.planLimitHit) {
    return { failure: failed(`The client's ${report.plan} plan allows ${report.headroom} more companies, and the file would create ${report.toCreate}.`,
      'Move the client to the Paid plan (or migrate into existing companies with a companyId column), then run step 1 again.') };
  }
  return { summary, rows };
}
