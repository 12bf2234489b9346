// Starts the worker thread and talks to it: wake it when work is queued, stop it (after
// the pass in flight) when the service closes, and ask it, for the operator, for its
// metrics and whether its loop still turns (observability/thread-link.ts). It says once
// when it first claims work (background.ts starts the other threads then).
import { Worker } from 'node:worker_threads';
import { threadUrl } from '../../lib/thread-url.js';
import { ThreadLink, type ThreadQuestion } from '../observability/thread-link.js';
import type { EventLog } from '../observability/signals.js';
import { DatabaseUnreachable } from '../store/unreachable.js';
import type { HostMessage, WorkerMessage, WorkerOptions } from './worker-thread.js';

export interface SyncWorker {
  wake(): void;
  stop(): Promise<void>;
  /** The thread's answer within `deadlineMs`; undefined when it gave none (busy past it, or ended). */
  ask: ThreadLink['ask'];
  /** The thread has ended, stopped or not. */
  readonly exited: boolean;
}

export interface SyncWorkerHooks {
  onError: (err: Error, context: string) => void;
  /** The thread has ended, stopped or not. */
  onExit?: () => void;
  /** The thread has claimed its first job. */
  onWorking?: () => void;
  /** Takes the thread's log lines. */
  log?: EventLog;
}

/**
 * The thread's young generation (three semi-spaces' worth), four times V8's default on
 * 64-bit. The pages of the jobs in flight live through a page's fetch and write, past what
 * a default semi-space holds at the rate the thread allocates, so scavenges kept copying
 * them and moving them to the old generation. At 3,000 companies the larger space made the
 * main job 14% faster on PostgreSQL and 10% on SQLite; twice this size gained nothing more
 * (docs/performance.md). V8 grows the space up to this only while objects survive in it.
 */
const YOUNG_GENERATION_MB = 192;

export function startSyncWorker(options: WorkerOptions, hooks: SyncWorkerHooks): SyncWorker {
  const { onError, onExit, onWorking, log } = hooks;
  const worker = new Worker(threadUrl('./worker-thread.js', import.meta.url), { workerData: options, resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB } });
  let exited = false;
  const send = (message: WorkerMessage): boolean => {
    if (!exited) worker.postMessage(message);
    return !exited;
  };
  const link = new ThreadLink((question: ThreadQuestion) => send(question), log);
  const exit = new Promise<void>((resolve) => worker.once('exit', () => {
    exited = true;
    link.ended();
    onExit?.();
    resolve();
  }));
  worker.on('message', (message: HostMessage) => {
    if (link.take(message)) return;
    if (message.type === 'working') onWorking?.();
    else if (message.type === 'error') onError(message.unreachable ? new DatabaseUnreachable(message.message) : new Error(message.message), message.context);
  });
  worker.on('error', (err) => onError(err, 'sync worker'));
  return {
    wake: () => void send({ type: 'wake' }),
    async stop() {
      send({ type: 'stop' });
      await exit;
    },
    ask: (about, deadlineMs) => link.ask(about, deadlineMs),
    get exited() {
      return exited;
    },
  };
}
