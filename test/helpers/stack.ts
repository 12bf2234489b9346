// The one way tests start what they talk to: real servers on 127.0.0.1, port 0, each over
// a data dir of its own, removed at stop unless the test gave it.
//   'service'      the service alone, in-process (the sandbox is not needed);
//   'sandbox'      the sandbox platforms alone, in-process, on a fake clock;
//   'fake-clocks'  sandbox and service in-process on fake clocks with the worker off: the
//                  test drives the sync passes (deterministic: no timers, no sleeps);
//   'threads'      the real stack of src/stack.ts in-process (sync worker and reader threads);
//   'serve'        `ferry serve` run in this process by runCli: the same flags, start-up,
//                  listening line and admin key file as the binary, no child;
//   'process'      the real `ferry serve` child (bin/ferry.js → dist/), as users run it: for
//                  tests of the process itself (signals, kill -9, what a real process prints).
// Each kind's handle carries the helpers its tests use (an API client, the admin key's file…).
//
// The store: SQLite (the data dir's ferry.db) unless FERRY_TEST_STORE=postgres (the
// postgres project of vitest.config.ts), which gives every data dir a PostgreSQL database
// of its own, copied from a migrated template when a service first starts over it (a
// restart over the same data dir finds the same database, as it would find ferry.db) and
// dropped when the data dir is removed at stop, or at the end of the test file.
import type { ChildProcess } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll } from 'vitest';
import { fixedAdminKey } from '../../src/sandbox/admin-auth.js';
import { createSandbox, type Sandbox, type SandboxOptions } from '../../src/sandbox/index.js';
import { createService, type Service, type ServiceOptions } from '../../src/service/app.js';
import type { SyncDeps } from '../../src/service/sync/deps.js';
import { syncOnce, type PassResult } from '../../src/service/sync/sync-once.js';
import { startStack, type Stack, type StackOptions } from '../../src/stack.js';
import { SANDBOX_ADMIN_KEY, FakeClock as SandboxClock } from '../sandbox/support.js';
import type { RunResult } from './cli.js';
import { startInProcess } from './in-process.js';
import { startFerry } from './processes.js';
import { basic, callApi, tempDir, type CallOptions, type CallResult } from './service.js';
import { FakeClock, apiClient, trustSandbox, type Api } from './sync.js';

// ---------------------------------------------------------------- the store

/** The store the services of this run are on. */
export const testStore: 'sqlite' | 'postgres' = process.env.FERRY_TEST_STORE === 'postgres' ? 'postgres' : 'sqlite';

// Loaded only on PostgreSQL: the SQLite run never probes for it.
const postgres = testStore === 'postgres' ? await import('./postgres.js') : undefined;
postgres?.requirePostgres();

/** Data dir → the database made for it (a promise: two services may start over one dir at once). */
const databases = new Map<string, Promise<string>>();
/** Drops under way: a stop does not wait for its drop, the end of the file waits for them all. */
const dropping: Array<Promise<void>> = [];
if (postgres) {
  afterAll(async () => {
    dropDatabasesOf([...databases.keys()]);
    await Promise.all(dropping.splice(0));
  });
}

/** The postgres:// URL of the data dir's database (made on first use), or undefined on SQLite. */
async function databaseFor(dataDir: string): Promise<string | undefined> {
  if (!postgres) return undefined;
  const key = resolve(dataDir);
  let name = databases.get(key);
  if (!name) databases.set(key, (name = postgres.migratedDatabase()));
  return postgres.databaseUrl(await name);
}

/** Forgets the data dirs' databases and starts dropping them. */
function dropDatabasesOf(dataDirs: string[]): void {
  const names = dataDirs.map((dir) => {
    const key = resolve(dir);
    const name = databases.get(key);
    databases.delete(key);
    return name;
  }).filter((name) => name !== undefined);
  if (!postgres || names.length === 0) return;
  const drop = Promise.all(names).then((made) => postgres.dropDatabases(made));
  drop.catch(() => undefined); // reported where the end of the file awaits it
  dropping.push(drop);
}

// ---------------------------------------------------------------- 'service'

export interface TestService {
  service: Service;
  baseUrl: string;
  dataDir: string;
  /** The service's PostgreSQL database (FERRY_TEST_STORE=postgres); undefined on SQLite. */
  database?: string;
  adminKey: string;
  /** fetch with Basic auth for `apiKey` (default: the admin key). */
  call(method: string, path: string, options?: CallOptions): Promise<CallResult>;
  /** Creates a client account and returns its id and API key. */
  createClient(name: string, plan: 'Free' | 'Paid', created?: string): Promise<{ id: string; apiKey: string }>;
  stop(): Promise<void>;
}

async function startService(options: Partial<ServiceOptions> = {}): Promise<TestService> {
  const dataDir = options.dataDir ?? tempDir();
  const database = options.database ?? await databaseFor(dataDir);
  const service = await createService({ rateLimit: 0, ...options, dataDir, ...(database ? { database } : {}) });
  const baseUrl = await service.listen({ port: 0, host: '127.0.0.1' });
  const call = (method: string, path: string, opts: CallOptions = {}) => callApi(baseUrl, service.adminKey, method, path, opts);
  return {
    service,
    baseUrl,
    dataDir,
    ...(database ? { database } : {}),
    adminKey: service.adminKey,
    call,
    async createClient(name, plan, created) {
      const result = await call('POST', '/admin/clients', { body: created ? { name, plan, created } : { name, plan } });
      if (result.status !== 201) throw new Error(`createClient failed: ${result.status} ${result.text}`);
      return { id: result.body.id, apiKey: result.body.apiKey };
    },
    async stop() {
      await service.close();
      if (options.dataDir) return;
      rmSync(dataDir, { recursive: true, force: true });
      dropDatabasesOf([dataDir]);
    },
  };
}

// ---------------------------------------------------------------- 'sandbox'

export interface SandboxResult {
  status: number;
  headers: Headers;
  body: any;
}

export interface TestSandbox {
  sandbox: Sandbox;
  url: string;
  dataDir: string;
  clock: SandboxClock;
  /** A call to the sandbox; admin paths carry the admin key it accepts. */
  call(method: string, path: string, options?: { body?: unknown; form?: Record<string, string>; headers?: Record<string, string> }): Promise<SandboxResult>;
  /** POST /admin/tenants, asserting 201; returns the tenants with their token field values. */
  tenants(platform: string, extra?: Record<string, unknown>): Promise<Array<{ id: string; orgId?: string; seed: number; tokens: Record<string, string> }>>;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

async function startSandbox(options: Partial<SandboxOptions> = {}): Promise<TestSandbox> {
  const dataDir = options.dataDir ?? tempDir('ferry-sandbox-');
  const clock = new SandboxClock();
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

// ---------------------------------------------------------------- 'fake-clocks'

export interface Harness {
  dataDir: string;
  /** The service's PostgreSQL database (FERRY_TEST_STORE=postgres); undefined on SQLite. */
  database?: string;
  clock: FakeClock;
  sandboxClock: FakeClock;
  sandbox: Sandbox;
  sandboxUrl: string;
  service: Service;
  baseUrl: string;
  adminKey: string;
  /** Client of the service, with the admin key by default. */
  api: Api;
  /** One pass of the sync and push workers, in-process, on the fake clock. */
  sync(extra?: Partial<SyncDeps>): Promise<PassResult>;
  /** Passes until none claims a pull (those waiting for a retry time stay queued); returns the pulls run. */
  drain(extra?: Partial<SyncDeps>): Promise<number>;
  stop(): Promise<void>;
}

export interface HarnessOptions {
  sandbox?: Omit<Partial<SandboxOptions>, 'dataDir' | 'clock'>;
  service?: Omit<Partial<ServiceOptions>, 'dataDir' | 'clock' | 'platformUrl' | 'startWorker'>;
  /** Give the sandbox a clock of its own (frozen unless the test moves it). */
  separateSandboxClock?: boolean;
}

async function startFakeClocks(options: HarnessOptions = {}): Promise<Harness> {
  const dataDir = tempDir('ferry-sync-');
  const clock = new FakeClock();
  const sandboxClock = options.separateSandboxClock ? new FakeClock(clock.now().getTime()) : clock;
  // As in the stack: the sandbox's admin routes take the service's admin keys.
  const made: { service?: Service } = {};
  const adminAuth = async (authorization: string | undefined) => made.service?.checkAdmin(authorization) ?? 'unauthenticated';
  const sandbox = createSandbox({ rateLimit: 0, ...options.sandbox, dataDir, clock: sandboxClock, adminAuth });
  const sandboxUrl = await sandbox.listen({ port: 0, host: '127.0.0.1' });
  const database = options.service?.database ?? await databaseFor(dataDir);
  const service = made.service = await createService({
    rateLimit: 0, ...options.service, dataDir, ...(database ? { database } : {}), clock, platformUrl: sandboxUrl, startWorker: false,
  });
  const baseUrl = await service.listen({ port: 0, host: '127.0.0.1' });
  trustSandbox(sandboxUrl, service.adminKey);
  const { store, sealer, platform } = service.context;
  const sync = (extra: Partial<SyncDeps> = {}) => syncOnce({ store, clock, sealer, adapter: platform!, ...extra });
  return {
    dataDir,
    ...(database ? { database } : {}),
    clock,
    sandboxClock,
    sandbox,
    sandboxUrl,
    service,
    baseUrl,
    adminKey: service.adminKey,
    api: apiClient(baseUrl, service.adminKey),
    sync,
    async drain(extra = {}) {
      let total = 0;
      for (let pass = 0; pass < 100; pass++) {
        const { pulls } = await sync(extra);
        if (pulls === 0) return total;
        total += pulls;
      }
      throw new Error('drain: pulls still claimable after 100 passes');
    },
    async stop() {
      await service.close();
      await sandbox.close();
      rmSync(dataDir, { recursive: true, force: true });
      dropDatabasesOf([dataDir]);
    },
  };
}

// ---------------------------------------------------------------- 'threads'

/** src/stack.ts as the embedded CLI starts it; its sandbox's admin routes take its admin key (see trustSandbox). */
async function startThreads(options: StackOptions): Promise<Stack> {
  const database = options.database ?? await databaseFor(options.dataDir);
  const stack = await startStack({ rateLimit: 0, ...options, ...(database ? { database } : {}) });
  trustSandbox(stack.sandboxUrl, stack.adminKey);
  return stack;
}

// ---------------------------------------------------------------- 'serve' and 'process'

export interface ServeOptions {
  /** The service's data dir; default: `data/` in a scratch dir of the test's own (`dir`), removed at stop. */
  dataDir?: string;
  /** More `ferry serve` flags. */
  args?: string[];
  env?: Record<string, string>;
  deadlineMs?: number;
}

/** `ferry serve`, in this process ('serve') or as a child ('process'). */
export interface ServeHandle {
  listening: Record<string, string>;
  /** A scratch dir for the test's files (its own unless `dataDir` was given: then the data dir's parent is not touched). */
  dir: string;
  dataDir: string;
  /** The service's PostgreSQL database (FERRY_TEST_STORE=postgres, unless `args` names one); undefined on SQLite. */
  database?: string;
  baseUrl: string;
  sandboxUrl: string;
  adminKey: string;
  /** The admin key's file (mode 0600, written by `ferry serve`). */
  adminKeyFile: string;
  /** Client of the service, with the admin key by default. */
  api: Api;
  /** `--base-url URL --api-key-file FILE` for this service (the admin key by default). */
  target(keyFile?: string, baseUrl?: string): string[];
  /** Writes a key to a file in `dir` and returns its path. */
  keyFile(name: string, key: string): string;
  /** Everything it printed on stderr so far (its log, its notices). */
  stderr(): string;
  /**
   * Sends the signal (in-process: aborts the command as main.ts does on it) and resolves
   * with the exit code and everything printed after start; removes the scratch dir.
   */
  stop(signal?: NodeJS.Signals): Promise<RunResult>;
}

export interface ServeProcess extends ServeHandle {
  child: ChildProcess;
}

/** Starts `ferry serve --port 0 --json …` and waits (with a deadline) for its listening line. */
function startServe(options: ServeOptions, where: 'in-process'): Promise<ServeHandle>;
function startServe(options: ServeOptions, where: 'child'): Promise<ServeProcess>;
async function startServe(options: ServeOptions, where: 'in-process' | 'child'): Promise<ServeHandle | ServeProcess> {
  const owned = options.dataDir === undefined ? tempDir('ferry-serve-') : undefined;
  const dataDir = options.dataDir ?? join(owned!, 'data');
  const dir = owned ?? tempDir('ferry-serve-');
  const deadlineMs = options.deadlineMs ?? 30_000;
  const args = [...(options.args ?? [])];
  const database = args.includes('--database') || options.env?.FERRY_DATABASE_URL ? undefined : await databaseFor(dataDir);
  if (database) args.push('--database', database);
  const command = ['serve', '--port', '0', '--data-dir', dataDir, ...args];
  const serve = where === 'child' ? await startFerry(command, options.env, deadlineMs) : await startInProcess(command, options.env, deadlineMs);
  const listening = serve.ready as Record<string, string>;
  const adminKeyFile = join(dataDir, 'admin.key');
  const adminKey = readFileSync(adminKeyFile, 'utf8').trim();
  const baseUrl = listening.baseUrl!;
  // Its sandbox's admin routes take this service's admin key.
  trustSandbox(listening.sandboxUrl!, adminKey);
  return {
    ...('child' in serve ? { child: serve.child } : {}),
    listening,
    dir,
    dataDir,
    ...(database ? { database } : {}),
    baseUrl,
    sandboxUrl: listening.sandboxUrl!,
    adminKey,
    adminKeyFile,
    api: apiClient(baseUrl, adminKey),
    target: (keyFile = adminKeyFile, url = baseUrl) => ['--base-url', url, '--api-key-file', keyFile],
    stderr: () => serve.stderr(),
    keyFile(name, key) {
      const path = join(dir, name);
      writeFileSync(path, `${key}\n`, { mode: 0o600 });
      return path;
    },
    async stop(signal = 'SIGTERM') {
      const result = await serve.stop(signal);
      rmSync(dir, { recursive: true, force: true });
      if (owned) dropDatabasesOf([dataDir]);
      return result;
    },
  };
}

// ---------------------------------------------------------------- the one entry point

export function startTestStack(kind: 'service', options?: Partial<ServiceOptions>): Promise<TestService>;
export function startTestStack(kind: 'sandbox', options?: Partial<SandboxOptions>): Promise<TestSandbox>;
export function startTestStack(kind: 'fake-clocks', options?: HarnessOptions): Promise<Harness>;
export function startTestStack(kind: 'threads', options: StackOptions): Promise<Stack>;
export function startTestStack(kind: 'serve', options?: ServeOptions): Promise<ServeHandle>;
export function startTestStack(kind: 'process', options?: ServeOptions): Promise<ServeProcess>;
export function startTestStack(kind: string, options?: object): Promise<unknown> {
  switch (kind) {
    case 'service': return startService(options as Partial<ServiceOptions>);
    case 'sandbox': return startSandbox(options as Partial<SandboxOptions>);
    case 'fake-clocks': return startFakeClocks(options as HarnessOptions);
    case 'threads': return startThreads(options as StackOptions);
    case 'serve': return startServe((options ?? {}) as ServeOptions, 'in-process');
    case 'process': return startServe((options ?? {}) as ServeOptions, 'child');
    default: throw new Error(`startTestStack: no kind ${kind}`);
  }
}
