// The sandbox platforms in a thread of their own: beside `ferry serve` they answer the
// sync worker's page fetches and the token checks, and on two cores that work must not
// queue behind the service's own requests on its event loop. Admin requests are judged
// by the host (the service's keys), asked over the thread's port.
import { parentPort, workerData } from 'node:worker_threads';
import type { AdminVerdict } from './admin-auth.js';
import { createSandbox } from './app.js';

export interface SandboxThreadOptions {
  dataDir: string;
  host: string;
  port: number;
}

export type SandboxThreadMessage =
  | { type: 'listening'; url: string }
  | { type: 'failed'; message: string; code?: string }
  | { type: 'closed' }
  | { type: 'authorize'; id: number; authorization: string | undefined };

export type SandboxHostMessage = { type: 'close' } | { type: 'authorized'; id: number; verdict: AdminVerdict };

const options = workerData as SandboxThreadOptions;
const port = parentPort!;
const pending = new Map<number, (verdict: AdminVerdict) => void>();
let nextId = 0;
const sandbox = createSandbox({
  dataDir: options.dataDir,
  adminAuth: (authorization) => new Promise((resolve) => {
    const id = nextId++;
    pending.set(id, resolve);
    port.postMessage({ type: 'authorize', id, authorization } satisfies SandboxThreadMessage);
  }),
});
sandbox.listen({ port: options.port, host: options.host }).then(
  (url) => port.postMessage({ type: 'listening', url } satisfies SandboxThreadMessage),
  (err: NodeJS.ErrnoException) => port.postMessage({ type: 'failed', message: err.message, ...(err.code ? { code: err.code } : {}) } satisfies SandboxThreadMessage),
);
port.on('message', (message: SandboxHostMessage) => {
  if (message.type === 'authorized') {
    pending.get(message.id)?.(message.verdict);
    pending.delete(message.id);
    return;
  }
  void sandbox.close().then(() => {
    port.postMessage({ type: 'closed' } satisfies SandboxThreadMessage);
    port.close();
  });
});
