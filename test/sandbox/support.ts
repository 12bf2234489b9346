// Starts a real sandbox on 127.0.0.1:0 over a fresh data dir, with a fake clock tests
// move by hand (no sleeps), and a small JSON fetch helper. Not a test file itself.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fixedAdminKey } from '../../src/sandbox/admin-auth.js';
import { createSandbox, type Sandbox, type SandboxOptions } from '../../src/sandbox/index.js';
import { basic } from '../helpers/service.js';

/** The admin key this sandbox accepts on /admin, sent by `call` on admin paths. */
export const SANDBOX_ADMIN_KEY = 'fy_sandbox-test-admin-key';

export class FakeClock {
  private ms: number;

  constructor(start = Date.UTC(2026, 10, 21, 10, 0, 0)) {
    this.ms = start;
  }

  now(): Date {
    return new Date(this.ms);
  }

  advance(seconds: number): void {
    this.ms += seconds * 1000;
  }
}

export interface Result {
  status: number;
  headers: Headers;
  body: any;
}

export interface TestSandbox {
  sandbox: Sandbox;
  url: string;
  dataDir: string;
  clock: FakeClock;
  call(method: string, path: string, options?: { body?: unknown; form?: Record<string, string>; headers?: Record<string, string> }): Promise<Result>;
  /** POST /admin/tenants, asserting 201; returns the tenants with their token field values. */
  tenants(platform: string, extra?: Record<string, unknown>): Promise<Array<{ id: string; orgId?: string; seed: number; tokens: Record<string, string> }>>;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'ferry-sandbox-'));
}

export async function startSandbox(options: Partial<SandboxOptions> = {}): Promise<TestSandbox> {
  const dataDir = options.dataDir ?? tempDir();
  const clock = new FakeClock();
  const open = async () => {
    const sandbox = createSandbox({ rateLimit: 0, clock, adminAuth: fixedAdminKey(SANDBOX_ADMIN_KEY), ...options, dataDir });
    return { sandbox, url: await sandbox.listen({ port: 0, host: '127.0.0.1' }) };
  };
  const t: TestSandbox = {
    ...(await open()),
    dataDir,
    clock,
    async call(method, path, opts = {}) {
      const headers: Record<string, string> = { ...(path.startsWith('/admin') ? { authorization: basic(SANDBOX_ADMIN_KEY) } : {}), ...opts.headers };
      let body: string | undefined;
      if (opts.form) {
        body = new URLSearchParams(opts.form).toString();
        headers['content-type'] = 'application/x-www-form-urlencoded';
      } else if (opts.body !== undefined) {
        body = JSON.stringify(opts.body);
        headers['content-type'] = 'application/json';
      }
      const response = await fetch(t.url + path, { method, headers, body });
      const text = await response.text();
      return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
    },
    async tenants(platform, extra = {}) {
      const result = await t.call('POST', '/admin/tenants', { body: { platform, ...extra } });
      if (result.status !== 201) throw new Error(`create tenants: ${result.status} ${JSON.stringify(result.body)}`);
      return result.body.results;
    },
    async restart() {
      await t.sandbox.close();
      Object.assign(t, await open());
    },
    async stop() {
      await t.sandbox.close();
      if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return t;
}

export const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });
