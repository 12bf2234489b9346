// The servers ferry runs, and the one door the command line has to the service and the
// sandbox (lint holds src/cli to it):
// - startStack: the bundled service with its sandbox platforms beside it, what `ferry
//   serve` runs and what the CLI's embedded target starts in-process. The sandbox runs in
//   a thread of its own, listens on 127.0.0.1 (unless sandboxHost says otherwise) on a
//   port of its own, keeps its state in the same data dir, and lets only the service's
//   admin keys use its admin routes. Given `sandboxUrl`, it starts none and uses that
//   sandbox instead (one `ferry sandbox serve` process that every service instance points at).
// - startWorker: `ferry worker`, the background work alone (service/worker.ts).
// - startSandbox: `ferry sandbox serve`, the sandbox platforms as a process of their own.
// - the errors a refused start throws, for the commands to word.
import { createService, type Service, type ServiceOptions } from './service/app.js';
import { startSandboxThread, type SandboxThread } from './sandbox/thread-host.js';
import { startMetricsServer, type MetricsServer } from './service/observability/metrics-server.js';

export { startWorker, type RunningWorker, type WorkerProcessOptions } from './service/worker.js';
export { SecretKeyError } from './service/secrets.js';
export { DATABASE_UNAVAILABLE, describeTarget, parseTarget } from './service/store/pg/unavailable.js';
export { backupSqlite, BackupRefused, type SqliteBackup } from './service/store/sqlite/backup.js';
export { createLogger, LOG_FORMATS, LOG_LEVELS, type LogFormat, type Logger, type LogLevel } from './service/observability/logger.js';

export interface StackOptions extends Omit<ServiceOptions, 'platformUrl'> {
  host?: string;
  port?: number;
  /** Port of the sandbox platforms (default: any free port). */
  sandboxPort?: number;
  /** Interface of the sandbox platforms (default 127.0.0.1, whatever `host` is: its admin routes mint tokens). */
  sandboxHost?: string;
  /**
   * A sandbox already running elsewhere (`ferry sandbox serve`): no thread is started, and
   * sandboxPort/sandboxHost are unused. That sandbox judges admin keys by asking this service.
   */
  sandboxUrl?: string;
  /** Serve /metrics (and /healthz, /readyz) on this port (0: any free one); metrics are kept only then. */
  metricsPort?: number;
  /** The metrics port's interface (default 127.0.0.1: scrapers, not clients). */
  metricsHost?: string;
}

export interface Stack {
  baseUrl: string;
  sandboxUrl: string;
  adminKey: string;
  dataDir: string;
  /** http://host:port/metrics, with metricsPort. */
  metricsUrl?: string;
  /** The start of a stop: /readyz answers 503 while the requests in flight finish (at most `deadlineMs`). */
  drain(deadlineMs: number): Promise<void>;
  close(): Promise<void>;
}

export async function startStack(options: StackOptions): Promise<Stack> {
  const host = options.host ?? '127.0.0.1';
  const { sandboxUrl: external, sandboxPort, sandboxHost, metricsPort, metricsHost, ...serviceOptions } = options;
  // The service is made once the sandbox listens (it needs the sandbox's URL); until then no admin request is let in.
  const made: { service?: Service } = {};
  let sandbox: SandboxThread | undefined;
  let sandboxUrl = external;
  if (sandboxUrl === undefined) {
    sandbox = await startSandboxThread(
      { dataDir: options.dataDir, host: sandboxHost ?? '127.0.0.1', port: sandboxPort ?? 0 },
      async (authorization) => (await made.service?.checkAdmin(authorization)) ?? 'unauthenticated',
    );
    sandboxUrl = sandbox.url;
  }
  let service: Service;
  try {
    service = await createService({ ...serviceOptions, platformUrl: sandboxUrl, metrics: metricsPort !== undefined });
  } catch (err) {
    // A refused start (a secret key that cannot be settled on, say) leaves no sandbox thread behind.
    await sandbox?.close();
    throw err;
  }
  made.service = service;
  let metrics: MetricsServer | undefined;
  try {
    const baseUrl = await service.listen({ port: options.port ?? 0, host });
    if (metricsPort !== undefined) metrics = await serveMetrics(service, metricsPort, metricsHost, options.onInternalError);
    return {
      baseUrl,
      sandboxUrl,
      adminKey: service.adminKey,
      dataDir: options.dataDir,
      ...(metrics ? { metricsUrl: metrics.url } : {}),
      drain: (deadlineMs) => service.drain(deadlineMs),
      async close() {
        await service.close();
        await metrics?.close();
        await sandbox?.close();
      },
    };
  } catch (err) {
    await service.close();
    await metrics?.close();
    await sandbox?.close();
    throw err;
  }
}

function serveMetrics(service: Service, port: number, host = '127.0.0.1', onInternalError?: StackOptions['onInternalError']): Promise<MetricsServer> {
  return startMetricsServer({
    host, port, readiness: service.readiness, metrics: service.exposition!,
    ...(onInternalError ? { onError: (err: unknown) => onInternalError(err, 'metrics') } : {}),
  });
}

export interface SandboxOptions {
  dataDir: string;
  host: string;
  port: number;
  /** The ferry service whose admin keys may use the admin routes; without it they stay shut. */
  serviceUrl?: string;
  /** Said when that service cannot be asked. */
  onNotice?: (message: string) => void;
}

export interface StandaloneSandbox {
  url: string;
  close(): Promise<void>;
}

/** The sandbox platforms in this process (loaded only here: the stack runs them in a thread). */
export async function startSandbox(options: SandboxOptions): Promise<StandaloneSandbox> {
  const [{ createSandbox }, { denyAll, serviceAdminCheck }] = await Promise.all([import('./sandbox/app.js'), import('./sandbox/admin-auth.js')]);
  const adminAuth = options.serviceUrl ? serviceAdminCheck(options.serviceUrl, options.onNotice) : denyAll;
  const sandbox = createSandbox({ dataDir: options.dataDir, adminAuth });
  try {
    const url = await sandbox.listen({ port: options.port, host: options.host });
    return { url, close: () => sandbox.close() };
  } catch (err) {
    await sandbox.close();
    throw err;
  }
}
