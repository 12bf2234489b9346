// The sandbox platforms' admin surface, found through the service (GET /admin/sandbox,
// admin key), so the sandbox commands work on the embedded target and on a remote
// `ferry serve` alike. Every call carries the same admin key as the service calls.
import { sandboxLocation } from './api.js';
import type { Connection } from './connection.js';
import { SandboxError } from './errors.js';

/** A GET whose status the caller judges itself (404 is an answer, not an error). */
export interface Lookup {
  status: number;
  body: Record<string, unknown> | undefined;
}

export interface SandboxTenant {
  id: string;
  platform: string;
  name: string;
  invoices: number;
  created: string;
}

export interface IssuedTenant extends Omit<SandboxTenant, 'created'> {
  /** The tenant's OAuth tokens, by token field name (written to a 0600 file, never shown). */
  tokens: Record<string, string>;
}

/** An OAuth app registered on a sandbox platform (its secret is shown only when it is created). */
export interface SandboxApp {
  clientId: string;
  platform: string;
  name: string;
  callbackUrls: string[];
  created: string;
}

/** Every call ferry makes to the sandbox platforms' admin routes. */
export interface SandboxApi {
  url: string;
  settings(): Promise<Record<string, unknown>>;
  updateSettings(changes: Record<string, unknown>): Promise<Record<string, unknown>>;
  tenants(platform?: string): Promise<SandboxTenant[]>;
  createTenants(body: { platform: string; count: number; invoices?: number; seed?: number }): Promise<IssuedTenant[]>;
  /** The platform-side refresh that a client's legacy application would make. */
  legacyRefresh(tenantId: string): Promise<{ tenantId: string; outcome: string }>;
  legacyRefreshes(tenantId: string, since: string, signal?: AbortSignal): Promise<Lookup>;
  /** Registers an OAuth app; the answer carries its client secret, which is never shown again. */
  createApp(body: { platform: string; name?: string; callbackUrls?: string[] }): Promise<SandboxApp & { clientSecret: string }>;
  apps(platform?: string): Promise<SandboxApp[]>;
  /** Registers a callback URL on an app (again is a no-op); answers the app's callback URLs. */
  addCallback(clientId: string, url: string): Promise<string[]>;
  /** Removes a callback URL from an app (one it does not have is a 404); answers the app's callback URLs. */
  removeCallback(clientId: string, url: string): Promise<string[]>;
  /** An OAuth app, and (given `callbackUrl`) whether that URL is registered on it. */
  app(appClientId: string, callbackUrl?: string, signal?: AbortSignal): Promise<Lookup>;
}

/** A sandbox bound to every interface reports 0.0.0.0; reach it on the service's host instead. */
export function reachableUrl(sandboxUrl: string, serviceBaseUrl: string): string {
  const url = new URL(sandboxUrl);
  if (['0.0.0.0', '[::]', '::'].includes(url.hostname)) url.hostname = new URL(serviceBaseUrl).hostname;
  return url.href.replace(/\/$/, '');
}

function parse(text: string): Record<string, unknown> | undefined {
  try {
    return text ? (JSON.parse(text) as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

export async function sandboxApi(connection: Connection): Promise<SandboxApi> {
  const { url: reported } = await sandboxLocation(connection.client);
  const url = reachableUrl(reported, connection.baseUrl);
  const send = async (method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<{ status: number; text: string }> => {
    const headers: Record<string, string> = { authorization: connection.client.authorization };
    if (body !== undefined) headers['content-type'] = 'application/json';
    try {
      const response = await fetch(url + path, { method, headers, body: body === undefined ? null : JSON.stringify(body), signal: signal ?? null });
      return { status: response.status, text: await response.text() };
    } catch (err) {
      if (signal?.aborted) throw err;
      const hint = new URL(url).hostname === '127.0.0.1' && !connection.embedded
        ? ' The sandbox listens on 127.0.0.1 by default: run this on the service\'s machine, or start it with ferry serve --sandbox-host.'
        : '';
      throw new SandboxError(`Could not reach the sandbox platforms at ${url} (${(err as Error).message}).${hint}`);
    }
  };
  const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const { status, text } = await send(method, path, body);
    const parsed = parse(text);
    if (status < 200 || status >= 300) {
      const detail = (parsed?.errors as Array<{ field?: string; message: string }> | undefined)?.map((e) => `${e.field ? `${e.field}: ` : ''}${e.message}`).join('; ');
      throw new SandboxError(`The sandbox answered ${status}: ${String(parsed?.message ?? parsed?.error ?? text)}${detail ? ` (${detail})` : ''}`);
    }
    return parsed as T;
  };
  const lookup = async (path: string, signal?: AbortSignal): Promise<Lookup> => {
    const { status, text } = await send('GET', path, undefined, signal);
    return { status, body: parse(text) };
  };
  const id = encodeURIComponent;
  return {
    url,
    settings: () => call('GET', '/admin/settings'),
    updateSettings: (changes) => call('PATCH', '/admin/settings', changes),
    tenants: async (platform) => (await call<{ results: SandboxTenant[] }>('GET', `/admin/tenants${platform ? `?platform=${id(platform)}` : ''}`)).results,
    createTenants: async (body) => (await call<{ results: IssuedTenant[] }>('POST', '/admin/tenants', body)).results,
    legacyRefresh: (tenantId) => call('POST', `/admin/tenants/${id(tenantId)}/legacy-refresh`, {}),
    legacyRefreshes: (tenantId, since, signal) => lookup(`/admin/tenants/${id(tenantId)}/legacy-refreshes?since=${id(since)}`, signal),
    createApp: (body) => call('POST', '/admin/apps', body),
    apps: async (platform) => (await call<{ results: SandboxApp[] }>('GET', `/admin/apps${platform ? `?platform=${id(platform)}` : ''}`)).results,
    addCallback: async (clientId, callbackUrl) =>
      (await call<{ callbackUrls: string[] }>('POST', `/admin/apps/${id(clientId)}/callbackUrls`, { url: callbackUrl })).callbackUrls,
    removeCallback: async (clientId, callbackUrl) =>
      (await call<{ callbackUrls: string[] }>('DELETE', `/admin/apps/${id(clientId)}/callbackUrls?url=${id(callbackUrl)}`)).callbackUrls,
    app: (appClientId, callbackUrl, signal) =>
      lookup(`/admin/apps/${id(appClientId)}${callbackUrl === undefined ? '' : `?callbackUrl=${id(callbackUrl)}`}`, signal),
  };
}
