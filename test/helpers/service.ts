// A tiny fetch wrapper that speaks the service's auth, and temp dirs. Stacks start in
// stack.ts.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface CallOptions {
  apiKey?: string | null;
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
}

export interface CallResult {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

export function tempDir(prefix = 'ferry-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function basic(apiKey: string): string {
  return `Basic ${Buffer.from(apiKey).toString('base64')}`;
}

/** One real HTTP call to a ferry service with Basic auth (`apiKey: null` sends none). */
export async function callApi(baseUrl: string, defaultKey: string, method: string, path: string, opts: CallOptions = {}): Promise<CallResult> {
  const headers: Record<string, string> = { ...opts.headers };
  const apiKey = opts.apiKey === undefined ? defaultKey : opts.apiKey;
  if (apiKey !== null) headers.authorization = basic(apiKey);
  let body: string | undefined;
  if (opts.rawBody !== undefined) body = opts.rawBody;
  else if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(baseUrl + path, { method, headers, body });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: response.status, headers: response.headers, body: parsed, text };
}
