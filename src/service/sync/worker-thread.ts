// The sync and push workers' thread: its own database connection, so a heavy sync
// (JSON, SQLite writes) never stalls the request thread.
import { parentPort, workerData } from 'node:worker_threads';
import { systemClock } from '../../lib/clock.js';
import { platformAdapter } from '../integrations/platforms.js';
import { createSealer } from '../secrets.js';
import { openDatabase } from '../store/db.js';
import { createSqliteStore } from '../store/sqlite-store.js';
import { SyncLoop } from './loop.js';

export interface WorkerOptions {
  dbFile: string;
  secretKeyHex: string;
  platformUrl: string;
  concurrency?: number;
  pageSize?: number;
  /** The base of links in event payloads. */
  publicUrl?: string;
}

export type WorkerMessage = { type: 'wake' } | { type: 'stop' };
export type HostMessage = { type: 'stopped' } | { type: 'error'; context: string; message: string };

const options = workerData as WorkerOptions;
const port = parentPort!;
const store = createSqliteStore(openDatabase(options.dbFile));
// Only this thread runs pulls for this data dir: leases left by a killed process are void.
store.releaseOpenPullLeases();
const adapter = platformAdapter(options.platformUrl);
const loop = new SyncLoop({
  store,
  clock: systemClock,
  sealer: createSealer(Buffer.from(options.secretKeyHex, 'hex')),
  adapter,
  ...(options.concurrency ? { concurrency: options.concurrency } : {}),
  ...(options.pageSize ? { pageSize: options.pageSize } : {}),
  ...(options.publicUrl ? { publicUrl: options.publicUrl } : {}),
  onError: (err, context) => port.postMessage({ type: 'error', context, message: (err as Error)?.message ?? String(err) } satisfies HostMessage),
});

port.on('message', (message: WorkerMessage) => {
  if (message.type === 'wake') loop.wake();
  if (message.type === 'stop') {
    void loop.stop().then(async () => {
      await adapter.close();
      store.close();
      port.postMessage({ type: 'stopped' } satisfies HostMessage);
      port.close();
    });
  }
});
loop.start();
