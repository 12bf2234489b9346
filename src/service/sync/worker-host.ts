// Starts the worker thread and talks to it: wake it when work is queued, stop it (after
// the pass in flight) when the service closes.
import { Worker } from 'node:worker_threads';
import { threadUrl } from '../../lib/thread-url.js';
import { DatabaseUnreachable } from '../store/unreachable.js';
import type { HostMessage, WorkerMessage, WorkerOptions } from './worker-thread.js';

export interface SyncWorker {
  wake(): void;
  stop(): Promise<void>;
}

/** `onExit` is told when the thread has ended, stopped or not. */
export function startSyncWorker(options: WorkerOptions, onError: (err: Error, context: string) => void, onExit?: () => void): SyncWorker {
  const worker = new Worker(threadUrl('./worker-thread.js', import.meta.url), { workerData: options });
  let exited = false;
  const exit = new Promise<void>((resolve) => worker.once('exit', () => {
    exited = true;
    onExit?.();
    resolve();
  }));
  worker.on('message', (message: HostMessage) => {
    if (message.type === 'error') onError(message.unreachable ? new DatabaseUnreachable(message.message) : new Error(message.message), message.context);
  });
  worker.on('error', (err) => onError(err, 'sync worker'));
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
