// What a command's run function receives: IO, the global flags, a cancellation signal,
// and a lazy connection to the target (remote, or the embedded service started on demand).
import type { Connection } from '../client/connection.js';
import type { IO } from './io.js';
import { resolveTarget, type GlobalFlags } from './globals.js';

export type { Connection };

export interface CommandContext {
  io: IO;
  flags: GlobalFlags;
  signal: AbortSignal;
  connect(): Promise<Connection>;
}

export function createContext(io: IO, flags: GlobalFlags, signal: AbortSignal): CommandContext & { dispose(): Promise<void> } {
  let connection: Promise<Connection> | undefined;
  const cleanups: Array<() => Promise<void>> = [];
  const open = async (): Promise<Connection> => {
    const spec = resolveTarget(flags, io.env);
    const { ApiClient } = await import('../client/client.js');
    const log = io.verbose ? (line: string) => io.err(`[http] ${line}`, { force: true }) : undefined;
    if (spec.kind === 'remote') {
      const client = new ApiClient({ baseUrl: spec.baseUrl, apiKey: spec.apiKey, clientId: spec.clientId, log });
      cleanups.push(() => client.close());
      return { client, baseUrl: spec.baseUrl, embedded: false };
    }
    const { startEmbedded } = await import('./embedded.js');
    const embedded = await startEmbedded(spec.dataDir, (message) => io.err(message, { force: true }));
    cleanups.push(() => embedded.close());
    if (io.mode !== 'json') io.err(`Using the embedded ferry service (data dir ${spec.dataDir}); set --base-url or FERRY_BASE_URL for a remote one.`);
    const client = new ApiClient({ baseUrl: embedded.baseUrl, apiKey: embedded.adminKey, clientId: spec.clientId, log });
    cleanups.unshift(() => client.close());
    return { client, baseUrl: embedded.baseUrl, embedded: true };
  };
  return {
    io,
    flags,
    signal,
    connect: () => (connection ??= open()),
    async dispose() {
      for (const cleanup of cleanups.splice(0)) await cleanup();
    },
  };
}
