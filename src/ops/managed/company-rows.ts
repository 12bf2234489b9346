// The company file as the steps read it: its valid rows (as the bulk engine validates
// them), the pilot's reference, and the check that it has not changed since step 1.
import { createReadStream, existsSync } from 'node:fs';
import { targetIntegrations } from '../platform-knowledge.js';
import type { ApiClient } from '../../client/client.js';
import type { IntegrationInfo } from '../migrate/types.js';
import { companiesPath, fingerprint, type PilotRef } from './plan.js';
import { failed, type StepEnv, type StepResult } from './step-env.js';

export async function integrationsOf(client: ApiClient, signal: AbortSignal): Promise<IntegrationInfo[]> {
  return targetIntegrations(client, signal);
}

export interface RowInfo {
  row: number;
  key: string;
  externalId?: string;
  companyName?: string;
  platformKey: string;
}

/** Every valid row of the company file, as the bulk engine reads it. */
export async function listRows(file: string, integrations: IntegrationInfo[], platform: string): Promise<RowInfo[]> {
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

export function pilotRef(row: RowInfo): PilotRef {
  return { row: row.row, key: row.key, ...(row.externalId ? { externalId: row.externalId } : {}), ...(row.companyName ? { companyName: row.companyName } : {}) };
}

async function assertSameFile(env: StepEnv): Promise<string | StepResult> {
  const file = companiesPath(env.planPath, env.plan);
  if (!existsSync(file)) return failed(`The company file ${file} is not there.`, 'Put it back where step 1 found it (the plan stores its path relative to the plan), or run step 1 again with --redo --companies FILE.');
  if ((await fingerprint(file)) !== env.plan.companies.fingerprint) {
    return failed(`The company file ${file} changed since step 1 validated it.`, `Validate it again: ${env.command('managed step 1 --confirm --redo')}`);
  }
  return file;
}

/** The company file (unchanged since step 1), the registry, and the file's valid rows; or the step's failure. */
export async function companyRows(env: StepEnv): Promise<StepResult | { file: string; integrations: IntegrationInfo[]; rows: RowInfo[] }> {
  const file = await assertSameFile(env);
  if (typeof file !== 'string') return file;
  const { client } = await env.connection();
  const integrations = await integrationsOf(client, env.signal);
  return { file, integrations, rows: await listRows(file, integrations, env.plan.platform.key) };
}
