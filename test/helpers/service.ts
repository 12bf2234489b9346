// Starts a real service on 127.0.0.1:0 over a fresh data dir, and a tiny fetch wrapper
// that speaks its auth. Each test owns its data dir and port.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createService, type Service, type ServiceOptions } from '../../src/service/app.js';

export interface TestService {
  service: Service;
  baseUrl: string;
  dataDir: string;
  adminKey: string;
  /** fetch with Basic auth for `apiKey` (default: the admin key). */
  call(method: string, path: string, options?: CallOptions): Promise<CallResult>;
  /** Creates a client account and returns its id and API key. */
  createClient(name: string, plan: 'Free' | 'Paid', created?: string): Promise<{ id: string; apiKey: string }>;
  stop(): Promise<void>;
}

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

export async function startService(options: Partial<ServiceOptions> = {}): Promise<TestService> {
  const dataDir = options.dataDir ?? tempDir();
  const service = createService({ rateLimit: 0, ...options, dataDir });
  const baseUrl = await service.listen({ port: 0, host: '127.0.0.1' });
  const call = (method: string, path: string, opts: CallOptions = {}) => callApi(baseUrl, service.adminKey, method, path, opts);
  return {
    service,
    baseUrl,
    dataDir,
    adminKey: service.adminKey,
    call,
    async createClient(name, plan, created) {
      const result = await call('POST', '/admin/clients', { body: created ? { name, plan, created } : { name, plan } });
      if (result.status !== 201) throw new Error(`createClient failed: ${result.status} ${result.text}`);
      return { id: result.body.id, apiKey: result.body.apiKey };
    },
    async stop() {
      await service.close();
      if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
