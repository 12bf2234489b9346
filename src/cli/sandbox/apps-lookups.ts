// What the `ferry sandbox apps` commands check before they ask the sandbox to change
// anything: the platform key, a callback URL, and that an app exists. Each refusal names
// the value and what to do, rather than relaying the sandbox's raw 400 or 404.
import type { IntegrationRecord } from '../../client/wire.js';
import type { Connection } from '../../client/connection.js';
import type { SandboxApi, SandboxApp } from '../../client/sandbox-api.js';
import { CliError, UsageError } from '../errors.js';
import { ferryCommand } from '../command-line.js';

/** The registry's integration for `--platform`, with "did you mean" when the key is unknown. */
export async function platformFor(connection: Connection, key: string, signal?: AbortSignal): Promise<IntegrationRecord> {
  const api = await import('../../client/api.js');
  const { ApiRequestError } = await import('../../client/errors.js');
  const wanted = key.trim().toLowerCase();
  try {
    return await api.integration(connection.client, wanted, signal);
  } catch (err) {
    if (!(err instanceof ApiRequestError && err.status === 404)) throw err;
    const { unknownPlatformHint } = await import('../platform-hint.js');
    throw new UsageError(`--platform ${key} is not a platform key.`, await unknownPlatformHint(connection.client, wanted, signal));
  }
}

/** An absolute http(s) URL, normalised as the sandbox stores it; a usage error naming the value (and `flag`) otherwise. */
export function callbackUrlArg(value: string, flag?: string): string {
  let url: URL | undefined;
  try {
    url = new URL(value.trim());
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
    throw new UsageError(`${flag ? `${flag} ` : ''}${JSON.stringify(value)} is not an absolute http(s) URL.`, 'A callback URL looks like https://ferry.example.com/callback/qhyg');
  }
  return url.href;
}

/** The app, or an error naming it and how to list the apps (on the service `target` reaches). */
export async function appFor(sandbox: SandboxApi, clientId: string, target: string[], signal?: AbortSignal): Promise<SandboxApp> {
  const { status, body } = await sandbox.app(clientId, undefined, signal);
  if (status === 404) throw new CliError(`The sandbox has no app ${clientId}.`, 1, `See the apps with: ${ferryCommand(['sandbox', 'apps', 'list'], target)}`);
  if (status !== 200 || !body) {
    const { SandboxError } = await import('../../client/errors.js');
    throw new SandboxError(`The sandbox answered ${status} for app ${clientId}: ${String(body?.message ?? body?.error ?? 'no details')}`);
  }
  return body as unknown as SandboxApp;
}
