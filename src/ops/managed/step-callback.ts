// Steps 3 and 4: the service's callback URL on the client's app (checked with the
// platform where it can be asked), and the person's confirmation that the client's
// existing application stopped syncing.
import { callbackUrlFor, appCallback, optionalSandbox } from '../check/platform-lookups.js';
import { failed, type StepEnv, type StepInputs, type StepResult } from './step-env.js';
import { formatCount } from '../progress.js';

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
  // Only the sandbox can be asked; so a failure below is on the sandbox, and its hint names the sandbox's commands.
  const sandbox = await optionalSandbox(connection);
  if (!sandbox) {
    return { state: 'done', notes: `${url}: confirmed by ${inputs.by} (the platform cannot be asked)`, details: { callbackUrl: url, checkedWithPlatform: false } };
  }
  const app = await appCallback(sandbox, plan.platform.appClientId, url, signal);
  if (!app.found) {
    return failed(`The platform has no app ${plan.platform.appClientId}.`,
      `See the apps with: ${env.command(`sandbox apps list --platform ${plan.platform.key}`)}, then: ${env.command('managed step 1 --confirm --redo --app-client-id ID')}`, { callbackUrl: url, checkedWithPlatform: true });
  }
  if (app.platform !== plan.platform.key) {
    return failed(`App ${plan.platform.appClientId} belongs to platform ${app.platform}, not ${plan.platform.key}.`,
      `See the apps with: ${env.command(`sandbox apps list --platform ${plan.platform.key}`)}, then: ${env.command('managed step 1 --confirm --redo --app-client-id ID')}`, { callbackUrl: url, checkedWithPlatform: true });
  }
  if (!app.registered) {
    return failed(`${url} is not registered on the client's app ${plan.platform.appClientId} (it has ${app.callbackUrls.length ? app.callbackUrls.join(', ') : 'no callback URLs'}).`,
      `Add it to the sandbox app: ${env.command(`sandbox apps callbacks add ${plan.platform.appClientId} ${url}`)}, then run: ${env.command('managed step 3 --confirm')}`,
      { callbackUrl: url, checkedWithPlatform: true, registered: app.callbackUrls });
  }
  return { state: 'done', notes: `${url}: registered on app ${plan.platform.appClientId} (checked with the platform)`, details: { callbackUrl: url, checkedWithPlatform: true } };
}

export async function stepSyncingDisabled(env: StepEnv, inputs: StepInputs): Promise<StepResult> {
  const count = env.plan.companies.count;
  return {
    state: 'done',
    notes: `${inputs.by} confirmed that the client disabled syncing in its existing application for all ${formatCount(count)} companies; a legacy refresh after this time fails that company`,
    details: { companies: count },
  };
}
