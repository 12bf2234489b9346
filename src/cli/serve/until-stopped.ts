// The end of every long-running server command (serve, worker, sandbox serve): wait for
// Ctrl-C, say what stopping waits for, stop, and say it stopped.
import { printResult, type IO } from '../io.js';

export async function untilStopped(io: IO, signal: AbortSignal, stopping: string, stop: () => Promise<void>): Promise<void> {
  await new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
  io.err(stopping);
  await stop();
  printResult(io, { event: 'stopped' }, () => io.err('stopped'));
}
