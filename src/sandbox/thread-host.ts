// Starts the sandbox platforms in their own thread (thread.ts) and waits until they listen.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { SandboxThreadMessage, SandboxThreadOptions } from './thread.js';

export interface SandboxThread {
  url: string;
  close(): Promise<void>;
}

/** The compiled thread beside this file; from src/ (under the test runner), its copy in dist/. */
function threadUrl(): URL {
  const url = new URL('./thread.js', import.meta.url);
  if (existsSync(fileURLToPath(url))) return url;
  return new URL(url.href.replace('/src/sandbox/', '/dist/sandbox/'));
}

export function startSandboxThread(options: SandboxThreadOptions): Promise<SandboxThread> {
  const worker = new Worker(threadUrl(), { workerData: options });
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    worker.once('error', reject);
    worker.on('message', (message: SandboxThreadMessage) => {
      if (message.type === 'failed') {
        reject(Object.assign(new Error(message.message), message.code ? { code: message.code } : {}));
        void worker.terminate();
      }
      if (message.type !== 'listening') return;
      resolve({
        url: message.url,
        async close() {
          worker.postMessage({ type: 'close' });
          await exited;
        },
      });
    });
  });
}
