// ferry spread over processes, as docs/scaling.md deploys it: the sandbox platforms
// (`ferry sandbox serve`), API instances (`ferry serve --no-worker`) and workers
// (`ferry worker`), all on one PostgreSQL database and one token-encryption key.
import { randomBytes } from 'node:crypto';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { reservePort, startFerry, startSandboxServe, type FerryProcess, type SandboxServe } from './processes.js';

export interface ScaleOutOptions {
  /** A scratch dir: the key file and every process's data dir (sandbox, api-0…, worker-1…) go in it. */
  root: string;
  /** The postgres:// URL every instance and worker shares. */
  database: string;
  instances: number;
  workers: number;
  /** The workers' --lease, in seconds: short, for a killed worker's pulls to be taken over within a test. */
  lease: number;
  /** More flags for every instance, and for every worker (--metrics-port 0, say). */
  instanceArgs?: string[];
  workerArgs?: string[];
}

export interface ScaleOut {
  sandbox: SandboxServe;
  instances: FerryProcess[];
  workers: FerryProcess[];
  /** Each instance's base URL, in the order of `instances`. */
  baseUrls: string[];
  /** The admin account's key (the first instance's admin.key). */
  adminKey: string;
  /** Starts worker `i` (again, after it stopped) over its own data dir, in its place in `workers`. */
  startWorker(i: number): Promise<FerryProcess>;
  /** Stops every process started and not yet exited with `signal` (SIGKILL by default): for afterAll. */
  stopAll(signal?: NodeJS.Signals): Promise<void>;
}

export async function startScaleOut(options: ScaleOutOptions): Promise<ScaleOut> {
  const { root, database } = options;
  const started: FerryProcess[] = [];
  const start = async (args: string[]) => {
    const p = await startFerry(args);
    started.push(p);
    return p;
  };
  const stopAll = async (signal: NodeJS.Signals = 'SIGKILL') => {
    await Promise.all(started.map((p) => p.stop(signal)));
  };
  try {
    const keyFile = join(root, 'secret.key');
    writeFileSync(keyFile, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600 });
    chmodSync(keyFile, 0o600);
    const shared = ['--database', database, '--secret-key-file', keyFile];

    // The sandbox asks the first instance whether a key is an admin key, and a port-0
    // process learns its port only once it listens: that instance's port is chosen first.
    const firstPort = await reservePort();
    const sandbox = await startSandboxServe(['--service-url', `http://127.0.0.1:${firstPort}`, '--data-dir', join(root, 'sandbox')]);
    started.push(sandbox);
    // Started together, as instances come up in a deployment; all settle before a failure
    // is thrown, so none is left running past stopAll.
    const settled = await Promise.allSettled(Array.from({ length: options.instances }, (_, i) => start(
      ['serve', '--port', String(i === 0 ? firstPort : 0), '--no-worker', '--sandbox-url', sandbox.url, ...shared, '--data-dir', join(root, `api-${i}`), ...(options.instanceArgs ?? [])],
    )));
    const instances = settled.map((s) => {
      if (s.status === 'rejected') throw s.reason;
      return s.value;
    });
    const workers: FerryProcess[] = [];
    const startWorker = async (i: number) => (workers[i] = await start(
      ['worker', '--sandbox-url', sandbox.url, '--lease', String(options.lease), ...shared, '--data-dir', join(root, `worker-${i + 1}`), ...(options.workerArgs ?? [])],
    ));
    for (let i = 0; i < options.workers; i++) await startWorker(i);
    return {
      sandbox,
      instances,
      workers,
      baseUrls: instances.map((p) => String(p.ready.baseUrl)),
      adminKey: readFileSync(join(root, 'api-0', 'admin.key'), 'utf8').trim(),
      startWorker,
      stopAll,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}
