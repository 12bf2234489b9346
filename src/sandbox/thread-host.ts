// Starts the sandbox platforms in their own thread (thread.ts) and waits until they listen.
import { Worker } from 'node:worker_threads';
import { threadUrl } from '../lib/thread-url.js';
import { denyAll, type AdminCheck } from './admin-auth.js';
import type { SandboxHostMessage, SandboxThreadMessage, SandboxThreadOptions } from './thread.js';

export interface SandboxThread {
  url: string;
  close(): Promise<void>;
}

/** `adminAuth` judges the thread's admin requests (default: none allowed). */
export function startSandboxThread(options: SandboxThreadOptions, adminAuth: AdminCheck = denyAll): Promise<SandboxThread> {
  const worker = new Worker(threadUrl('./thread.js', import.meta.url), { workerData: options });
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    worker.once('error', reject);
    worker.on('message', (message: SandboxThreadMessage) => {
      if (message.type === 'authorize') {
        const answer = (verdict: SandboxHostMessage & { type: 'authorized' }) => worker.postMessage(verdict);
        void adminAuth(message.authorization).then(
          (verdict) => answer({ type: 'authorized', id: message.id, verdict }),
          () => answer({ type: 'authorized', id: message.id, verdict: 'unauthenticated' }),
        );
        return;
      }
      if (message.type === 'failed') {
        reject(Object.assign(new Error(message.message), message.code ? { code: message.code } : {}));
        void worker.terminate();
      }
      if (message.type !== 'listening') return;
      resolve({
        url: message.url,
        async close() {
          worker.postMessage({ type: 'close' } satisfies SandboxHostMessage);
          await exited;
        },
      });
    });
  });
}
