// What the managed migration asks the platform itself, where the platform can be asked:
// the sandbox platforms' admin surface (found through GET /admin/sandbox). A real
// platform has no such surface, so every answer here may be "cannot tell".
import { capabilitiesOf } from '../../client/capabilities.js';
import { ApiRequestError } from '../../client/errors.js';
import type { Connection } from '../../client/connection.js';
import type { SandboxApi } from '../../client/sandbox-api.js';

export interface LegacyRefresh {
  at: string;
  outcome: string;
}

/** The legacy application's refreshes of one tenant since a time, or why they could not be looked up. */
export type LegacyLookup =
  | { checked: true; tenantId: string; since: string; refreshes: LegacyRefresh[] }
  | { checked: false; why: string };

export type AppLookup =
  | { found: false }
  | { found: true; platform: string; callbackUrls: string[]; registered: boolean };

/**
 * The sandbox of this service, or undefined when it has none: the public API alone (its
 * admin routes are not asked at all), a deployment without sandbox platforms, or a key
 * that may not ask (not admin).
 */
export async function optionalSandbox(connection: Connection): Promise<SandboxApi | undefined> {
  if (!(await capabilitiesOf(connection.client)).ferryRoutes) return undefined;
  const { sandboxApi } = await import('../../client/sandbox-api.js');
  try {
    return await sandboxApi(connection);
  } catch (err) {
    if (err instanceof ApiRequestError && (err.status === 404 || err.status === 403)) return undefined;
    throw err;
  }
}

/**
 * The legacy application's refreshes of a sandbox tenant at or after `since`. The tenant id
 * is the company CSV's externalId when the file came from `ferry sandbox tenants create`.
 */
export async function legacyRefreshes(sandbox: SandboxApi | undefined, tenantId: string | undefined, since: string, signal?: AbortSignal): Promise<LegacyLookup> {
  if (!sandbox) return { checked: false, why: 'the platform cannot be asked (no sandbox)' };
  if (!tenantId) return { checked: false, why: 'no tenant id (externalId) for this company' };
  let reply;
  try {
    reply = await sandbox.legacyRefreshes(tenantId, since, signal);
  } catch (err) {
    if (signal?.aborted) throw err;
    return { checked: false, why: `the sandbox could not be reached (${(err as Error).message})` };
  }
  if (reply.status === 404) return { checked: false, why: `the sandbox has no tenant ${tenantId}` };
  if (reply.status !== 200) return { checked: false, why: `the sandbox answered ${reply.status}` };
  const results = Array.isArray(reply.body?.results) ? (reply.body.results as LegacyRefresh[]) : [];
  return { checked: true, tenantId, since, refreshes: results };
}

/** Whether the client's OAuth app on the platform has `callbackUrl` registered. */
export async function appCallback(sandbox: SandboxApi, appClientId: string, callbackUrl: string, signal?: AbortSignal): Promise<AppLookup> {
  const reply = await sandbox.app(appClientId, callbackUrl, signal);
  if (reply.status === 404) return { found: false };
  if (reply.status !== 200 || !reply.body) throw new Error(`The sandbox answered ${reply.status} for app ${appClientId}.`);
  return {
    found: true,
    platform: String(reply.body.platform ?? ''),
    callbackUrls: Array.isArray(reply.body.callbackUrls) ? (reply.body.callbackUrls as string[]) : [],
    registered: reply.body.callbackUrlRegistered === true,
  };
}

/** The service's OAuth callback for a platform: `<service base URL>/callback/<platformKey>` (docs/cli.md). */
export function callbackUrlFor(serviceBaseUrl: string, platformKey: string): string {
  return `${serviceBaseUrl.replace(/\/+$/, '')}/callback/${encodeURIComponent(platformKey)}`;
}
