// The sandbox platforms' admin surface, found through the service (GET /admin/sandbox,
// admin key), so the sandbox commands work on the embedded target and on a remote
// `ferry serve` alike. Every call carries the same admin key as the service calls.
import { sandboxLocation } from './api.js';
import type { Connection } from './connection.js';
import { SandboxError } from './errors.js';

export interface SandboxApi {
  url: string;
  get<T>(path: string): Promise<T>;
  post<T>(path: string, body: unknown): Promise<T>;
  patch<T>(path: string, body: unknown): Promise<T>;
  /** A GET whose status the caller judges itself (404 is an answer, not an error). */
  lookup(path: string, signal?: AbortSignal): Promise<{ status: number; body: Record<string, unknown> | undefined }>;
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
  return {
    url,
    get: (path) => call('GET', path),
    post: (path, body) => call('POST', path, body),
    patch: (path, body) => call('PATCH', path, body),
    async lookup(path, signal) {
      const { status, text } = await send('GET', path, undefined, signal);
      return { status, body: parse(text) };
    },
  };
}
