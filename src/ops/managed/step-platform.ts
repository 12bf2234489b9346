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
import { failed, pilotLabel, type StepEnv, type StepInputs, type StepResult } from './step-env.js';

export async function stepPlatformDetails(env: StepEnv, inputs: StepInputs): Promise<StepResult> {
  const { plan, signal } = env;
  const key = (inputs.platform ?? plan.platform.key).trim().toLowerCase();
  const appClientId = (inputs.appClientId ?? plan.platform.appClientId).trim();
  const file = inputs.companies ?? (plan.companies.file ? companiesPath(env.planPath, plan) : '');
  const connection = await env.connection();
  const { client } = connection;

  let integration: KnownIntegration;
  try {
    integration = knowIntegration(await api.integration<TargetIntegration>(client, key, signal));
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

  // On the sandbox the app can be looked up now, rather than at step 3 (which checks it in any case,
  // so a sandbox that cannot be reached from here does not stop this step).
  const sandbox = await optionalSandbox(connection);
  const app = sandbox && await sandbox.app(appClientId, undefined, signal).catch((err: unknown) => {
    if (signal.aborted) throw err;
    return undefined;
  });
  if (app) {
    const appPlatform = app.status === 200 ? String(app.body?.platform ?? '') : undefined;
    if (app.status === 404 || (appPlatform !== undefined && appPlatform !== integration.key)) {
      return failed(app.status === 404 ? `The sandbox has no app ${appClientId}.` : `App ${appClientId} belongs to platform ${appPlatform}, not ${integration.key}.`,
        `See the apps with: ferry sandbox apps list --platform ${integration.key} (or make one: ferry sandbox apps create --platform ${integration.key}), then: ferry managed step 1 --confirm --app-client-id ID`);
    }
  }

  if (!existsSync(file)) return failed(`The company file ${file} does not exist.`, 'Give the CSV with --companies FILE.csv (ferry templates show KEY shows its columns).');
  plan.companies.file = storedCompaniesPath(env.planPath, file);

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
