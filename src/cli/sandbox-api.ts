// The sandbox platforms' admin surface, found through the service (GET /admin/sandbox,
// admin key), so the sandbox commands work on the embedded target and on a remote
// `ferry serve` alike.
import type { Connection } from './context.js';
import { CliError } from './errors.js';

export interface SandboxApi {
  url: string;
  get<T>(path: string): Promise<T>;
  post<T>(path: string, body: unknown): Promise<T>;
  patch<T>(path: string, body: unknown): Promise<T>;
}

/** A sandbox bound to every interface reports 0.0.0.0; reach it on the service's host instead. */
export function reachableUrl(sandboxUrl: string, serviceBaseUrl: string): string {
  const url = new URL(sandboxUrl);
  if (['0.0.0.0', '[::]', '::'].includes(url.hostname)) url.hostname = new URL(serviceBaseUrl).hostname;
  return url.href.replace(/\/$/, '');
}

export async function sandboxApi(connection: Connection): Promise<SandboxApi> {
  const { url: reported } = await connection.client.get<{ url: string }>('/admin/sandbox');
  const url = reachableUrl(reported, connection.baseUrl);
  const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    let response: Response;
    try {
      response = await fetch(url + path, {
        method,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (err) {
      throw new CliError(`Could not reach the sandbox platforms at ${url} (${(err as Error).message}).`);
    }
    const text = await response.text();
    const parsed = text ? JSON.parse(text) : undefined;
    if (!response.ok) {
      const detail = (parsed?.errors as Array<{ field?: string; message: string }> | undefined)?.map((e) => `${e.field ? `${e.field}: ` : ''}${e.message}`).join('; ');
      throw new CliError(`The sandbox answered ${response.status}: ${parsed?.message ?? parsed?.error ?? text}${detail ? ` (${detail})` : ''}`);
    }
    return parsed as T;
  };
  return {
    url,
    get: (path) => call('GET', path),
    post: (path, body) => call('POST', path, body),
    patch: (path, body) => call('PATCH', path, body),
  };
}
