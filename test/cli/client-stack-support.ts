// Shared by the `ferry sync` and `ferry push` tests: a Paid client of the service under test,
// reached as users reach it (its key in a file ferry reads, the API as that client), and
// the real stack in this process for it (its worker thread syncs and pushes as it does for
// users).
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Stack } from '../../src/stack.js';
import { startTestStack } from '../helpers/stack.js';
import { apiClient, createClient, type Api } from '../helpers/sync.js';

/** `api` with the client's key on every call that names no other. */
export function asClient(api: Api, apiKey: string): Api {
  return { ...api, call: (method, path, options = {}) => api.call(method, path, { apiKey, ...options }) };
}

export interface ClientAccess {
  /** The API as the client. */
  api: Api;
  /** `--base-url URL --api-key-file FILE`: ferry pointed at the service as the client. */
  remote: string[];
}

/** A new Paid client `name` of the service at `baseUrl`; its key is written (0600) to `work`/key. */
export async function newClient(admin: Api, adminKey: string, baseUrl: string, name: string, work: string): Promise<ClientAccess> {
  const key = await createClient(admin, adminKey, name, 'Paid');
  writeFileSync(join(work, 'key'), key, { mode: 0o600 });
  return { api: asClient(admin, key), remote: ['--base-url', baseUrl, '--api-key-file', join(work, 'key')] };
}

/** startStack in this process on `dataDir` (rate limit off), with a new client `name` on it. */
export async function startClientStack(name: string, dataDir: string, work: string): Promise<ClientAccess & { stack: Stack }> {
  const stack = await startTestStack('threads', { dataDir, rateLimit: 0 });
  return { stack, ...(await newClient(apiClient(stack.baseUrl, stack.adminKey), stack.adminKey, stack.baseUrl, name, work)) };
}

/** Closes the stack (if it started) and removes both folders. */
export async function stopClientStack(stack: Stack | undefined, dataDir: string, work: string): Promise<void> {
  await stack?.close();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(work, { recursive: true, force: true });
}
