// Shared by the `ferry migrate tokens` tests: a `ferry serve` (service +
// sandbox), sandbox tenants and the CSV of their tokens, the results file parsed, the
// service's companies read back, a killable `ferry` child, and a seeded random source.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { expect } from 'vitest';
import { FERRY_BIN, cleanEnv, type RunResult } from '../helpers/cli.js';
import type { ServeHandle } from '../helpers/stack.js';
import { sandboxCall, type Api, type Tenant } from '../helpers/sync.js';

export const RESULT_HEADER = 'row,externalId,companyName,platformKey,companyId,connectionId,status,step,httpStatus,error,correlationId';
export const XERO_TOKENS = ['accessToken', 'refreshToken', 'tenantId', 'expiresAt'];
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Stops the `ferry serve` (child or in-process) and expects it to exit cleanly. */
export async function stopCleanly(stack: ServeHandle | undefined): Promise<void> {
  if (!stack) return;
  const stopped = await stack.stop();
  expect(stopped.code, stopped.stderr).toBe(0);
}

/** `count` sandbox tenants (1000 per request), seeds apart so every token differs. */
export async function makeTenants(sandboxUrl: string, count: number, options: { seed?: number; invoices?: number; platform?: string } = {}): Promise<Tenant[]> {
  const tenants: Tenant[] = [];
  for (let offset = 0; offset < count; offset += 1000) {
    const body = { platform: options.platform ?? 'gbol', count: Math.min(1000, count - offset), invoices: options.invoices ?? 5, seed: (options.seed ?? 1) + offset };
    const result = await sandboxCall(sandboxUrl, 'POST', '/admin/tenants', body);
    if (result.status !== 201) throw new Error(`sandbox tenants: ${result.status} ${JSON.stringify(result.body)}`);
    tenants.push(...(result.body.results as Tenant[]));
  }
  return tenants;
}

/** The CSV `ferry sandbox tenants create` writes: companyName, externalId (tenant id), platformKey, token fields. */
export function tokensCsv(tenants: Tenant[], platform = 'gbol', tokenColumns = XERO_TOKENS): string {
  const rows = tenants.map((t) => [t.name, t.id, platform, ...tokenColumns.map((c) => t.tokens[c] ?? '')]);
  return stringify([['companyName', 'externalId', 'platformKey', ...tokenColumns], ...rows]);
}

export function writeCsv(dir: string, name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text, { mode: 0o600 });
  return path;
}

/** Every secret a tenant's row carries (expiresAt is a date, not a secret). */
export function secretsOf(tenants: Tenant[]): string[] {
  return tenants.flatMap((t) => [t.tokens.accessToken, t.tokens.refreshToken, t.tokens.tenantId].filter((v): v is string => !!v));
}

/** The secrets that appear in `text` (the test expects none). */
export function leakedSecrets(text: string, secrets: string[]): string[] {
  return secrets.filter((secret) => text.includes(secret));
}

export interface ResultRow {
  row: string;
  externalId: string;
  companyName: string;
  platformKey: string;
  companyId: string;
  connectionId: string;
  status: string;
  step: string;
  httpStatus: string;
  error: string;
  correlationId: string;
}

export function readResults(path: string): ResultRow[] {
  const text = readFileSync(path, 'utf8');
  expect(text.split('\n')[0]).toBe(RESULT_HEADER);
  return parse(text, { columns: true, skip_empty_lines: true }) as ResultRow[];
}

/** Rows of a results file keyed by row number; fails if a row appears twice. */
export function byRow(results: ResultRow[]): Map<number, ResultRow> {
  const map = new Map<number, ResultRow>();
  const twice = results.filter((r) => map.has(Number(r.row)) || !map.set(Number(r.row), r));
  expect(twice.map((r) => r.row), 'rows that appear twice in the results').toEqual([]);
  return map;
}

export function countBy<T>(items: T[], key: (item: T) => string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of items) counts[key(item)] = (counts[key(item)] ?? 0) + 1;
  return counts;
}

/** Every company the key can see (paged by 5000), with its tags and connections. */
export async function allCompanies(api: Api, apiKey?: string): Promise<any[]> {
  const companies: any[] = [];
  let next: string | undefined = '/companies?pageSize=5000';
  while (next) {
    const page = await api.call('GET', next, apiKey ? { apiKey } : {});
    expect(page.status, page.text).toBe(200);
    companies.push(...page.body.results);
    next = page.body.results.length > 0 ? page.body._links.next?.href : undefined;
  }
  return companies;
}

/**
 * The migration's invariants on the service: one company per ferryKey, exactly the
 * expected keys, one connection per company, Linked. Returns the companies by ferryKey.
 */
export async function expectMigratedOnce(api: Api, expectedKeys: string[], options: { apiKey?: string; platform?: string; context?: string } = {}): Promise<Map<string, any>> {
  const context = options.context ?? '';
  const companies = (await allCompanies(api, options.apiKey)).filter((c) => c.tags?.ferryKey);
  const keys = countBy(companies, (c) => c.tags.ferryKey);
  const duplicated = Object.entries(keys).filter(([, n]) => n > 1);
  expect(duplicated, `${context} companies with the same ferryKey`).toEqual([]);
  expect(Object.keys(keys).sort(), `${context} ferryKeys on the service`).toEqual([...expectedKeys].sort());
  const badConnections = companies
    .filter((c) => c.dataConnections.length !== 1 || c.dataConnections[0].status !== 'Linked' || c.dataConnections[0].integrationKey !== (options.platform ?? 'gbol'))
    .map((c) => ({ key: c.tags.ferryKey, connections: c.dataConnections.map((d: any) => `${d.integrationKey}:${d.status}`) }));
  expect(badConnections, `${context} companies without exactly one Linked connection`).toEqual([]);
  return new Map(companies.map((c) => [c.tags.ferryKey as string, c]));
}

export const extKeys = (tenants: Tenant[]) => tenants.map((t) => `ext:${t.id}`);

export interface FerryChild {
  child: ChildProcess;
  /** Everything printed so far. */
  output(): { stdout: string; stderr: string };
  done: Promise<RunResult>;
}

/** The real `ferry` binary as a child the test can signal (SIGKILL, SIGINT). */
export function spawnFerry(args: string[], options: { input?: string; cwd?: string } = {}): FerryChild {
  const child = spawn(process.execPath, [FERRY_BIN, ...args], { env: cleanEnv(), stdio: 'pipe', ...(options.cwd ? { cwd: options.cwd } : {}) });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdin!.end(options.input ?? '');
  const done = new Promise<RunResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return { child, output: () => ({ stdout, stderr }), done };
}

/** Lines in a file so far (0 when it does not exist yet). */
export function lineCount(path: string): number {
  if (!existsSync(path)) return 0;
  const text = readFileSync(path, 'utf8');
  let lines = 0;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) lines += 1;
  return lines;
}

/** The sandbox's seeded generator, so a failing kill schedule can be replayed. */
export { mulberry32 as seededRandom } from '../../src/sandbox/generate/prng.js';

/** The seed: FERRY_TEST_SEED to replay a run, else a fresh one (printed in every assertion). */
export function testSeed(): number {
  const fromEnv = Number(process.env.FERRY_TEST_SEED);
  return Number.isInteger(fromEnv) && fromEnv > 0 ? fromEnv : Math.floor(Math.random() * 2 ** 31) + 1;
}
