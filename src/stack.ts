// The bundled service with its sandbox platforms beside it: what `ferry serve` runs and
// what the CLI's embedded target starts in-process. The sandbox runs in a thread of its
// own, listens on 127.0.0.1 (unless sandboxHost says otherwise) on a port of its own,
// keeps its state in the same data dir, and lets only the service's admin keys use its
// admin routes. Given `sandboxUrl`, it starts none and uses that sandbox instead (one
// `ferry sandbox serve` process that every service instance points at).
import { createService, type Service, type ServiceOptions } from './service/app.js';
import { startSandboxThread, type SandboxThread } from './sandbox/thread-host.js';

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
}

export interface Stack {
  baseUrl: string;
  sandboxUrl: string;
  adminKey: string;
  dataDir: string;
  close(): Promise<void>;
}

export async function startStack(options: StackOptions): Promise<Stack> {
  const host = options.host ?? '127.0.0.1';
  const { sandboxUrl: external, sandboxPort, sandboxHost, ...serviceOptions } = options;
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
    service = await createService({ ...serviceOptions, platformUrl: sandboxUrl });
  } catch (err) {
    // A refused start (a secret key that cannot be settled on, say) leaves no sandbox thread behind.
    await sandbox?.close();
    throw err;
  }
  made.service = service;
  try {
    const baseUrl = await service.listen({ port: options.port ?? 0, host });
    return {
      baseUrl,
      sandboxUrl,
      adminKey: service.adminKey,
      dataDir: options.dataDir,
      async close() {
        await service.close();
        await sandbox?.close();
      },
    };
  } catch (err) {
    await service.close();
    await sandbox?.close();
    throw err;
  }
}
