// Step 5: the pilot company, migrated and checked end to end on its own.
import { inputError } from '../errors.js';
import { companyRows, pilotRef } from './company-rows.js';
import { migrateAndCheck } from './migrate-and-check.js';
import { failed, pilotLabel, type StepEnv, type StepInputs, type StepResult } from './step-env.js';

export async function stepPilot(env: StepEnv, inputs: StepInputs): Promise<StepResult> {
  const { plan } = env;
  const loaded = await companyRows(env);
  if (!('rows' in loaded)) return loaded;
  const { file, integrations, rows } = loaded;
  let pilot = rows.find((r) => r.row === plan.companies.pilot?.row && r.key === plan.companies.pilot?.key) ?? rows[0];
  if (inputs.pilot) {
    pilot = rows.find((r) => r.externalId === inputs.pilot!.trim());
    if (!pilot) throw inputError(`No row of the company file has externalId ${inputs.pilot}.`, 'Give --pilot with an externalId of the file, or leave it out.');
  }
  if (!pilot) return failed('The company file has no valid row to pilot.', 'Run step 1 again.');
  if (plan.companies.pilot?.row !== pilot.row) {
    // A different pilot: the earlier one's outcome no longer describes the pilot.
    plan.outcomes = plan.outcomes.filter((o) => !o.pilot || o.row === pilot!.row);
  }
  plan.companies.pilot = pilotRef(pilot);
  env.log(`Pilot: ${pilotLabel(plan.companies.pilot)}`);
  const { outcomes, checks, throughput } = await migrateAndCheck(env, inputs, file, { rows: [pilot], pilot: true, name: 'pilot', integrations });
  const outcome = outcomes[0];
  const details = { pilot: plan.companies.pilot, outcome, check: checks[0], ...throughput };
  if (outcome?.verdict === 'pass') {
    return { state: 'done', notes: `pilot ${outcome.companyName} (${outcome.companyId}) passed the end-to-end check in ${outcome.durations.checkSeconds}s`, details };
  }
  const reasons = outcome?.reasons.join('; ') || 'no outcome';
  const reauth = /reauthorization required/.test(reasons);
  return failed(`pilot ${outcome?.companyName ?? pilot.key} failed: ${reasons}`,
    reauth
      ? `The client's existing application still refreshes tokens: have the client disable syncing there for every company and supply fresh tokens for this one, confirm again (${env.command('managed step 4 --confirm --redo')}), then rerun step 5.`
      : outcome?.companyId
        ? `See the check's evidence (${env.command(`--client ${plan.client.id} check ${outcome.companyId} --json`)}), fix the cause, then run step 5 again.`
        : 'Fix the cause named above, then run step 5 again.',
    details);
}
