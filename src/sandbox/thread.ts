// The sandbox platforms in a thread of their own: beside `ferry serve` they answer the
// sync worker's page fetches and the token checks, and on two cores that work must not
// queue behind the service's own requests on its event loop.
import { parentPort, workerData } from 'node:worker_threads';
import { createSandbox } from './app.js';

export interface SandboxThreadOptions {
  dataDir: string;
  host: string;
  port: number;
}

export type SandboxThreadMessage = { type: 'listening'; url: string } | { type: 'failed'; message: string; code?: string } | { type: 'closed' };

const options = workerData as SandboxThreadOptions;
const port = parentPort!;
const sandbox = createSandbox({ dataDir: options.dataDir });
sandbox.listen({ port: options.port, host: options.host }).then(
  (url) => port.postMessage({ type: 'listening', url } satisfies SandboxThreadMessage),
  (err: NodeJS.ErrnoException) => port.postMessage({ type: 'failed', message: err.message, ...(err.code ? { code: err.code } : {}) } satisfies SandboxThreadMessage),
);
port.on('message', (message: { type: 'close' }) => {
  if (message.type !== 'close') return;
  void sandbox.close().then(() => {
    port.postMessage({ type: 'closed' } satisfies SandboxThreadMessage);
    port.close();
  });
});
