// Starts the worker thread and talks to it: wake it when work is queued, stop it (after
// the pass in flight) when the service closes.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { HostMessage, WorkerMessage, WorkerOptions } from './worker-thread.js';

export interface SyncWorker {
  wake(): void;
  stop(): Promise<void>;
}

/** The compiled worker beside this file; from src/ (under the test runner), its copy in dist/. */
function workerUrl(): URL {
  const url = new URL('./worker-thread.js', import.meta.url);
  if (existsSync(fileURLToPath(url))) return url;
  return new URL(url.href.replace('/src/service/sync/', '/dist/service/sync/'));
}

export function startSyncWorker(options: WorkerOptions, onError: (context: string, message: string) => void): SyncWorker {
  const worker = new Worker(workerUrl(), { workerData: options });
  let exited = false;
  const exit = new Promise<void>((resolve) => worker.once('exit', () => {
    exited = true;
    resolve();
  }));
  worker.on('message', (message: HostMessage) => {
    if (message.type === 'error') onError(message.context, message.message);
  });
  worker.on('error', (err) => onError('sync worker', err.message));
  const send = (message: WorkerMessage) => {
    if (!exited) worker.postMessage(message);
  };
  return {
    wake: () => send({ type: 'wake' }),
    async stop() {
      send({ type: 'stop' });
      await exit;
    },
  };
}
