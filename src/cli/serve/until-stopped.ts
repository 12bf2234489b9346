// The end of every long-running server command (serve, worker, sandbox serve): wait for
// Ctrl-C, say what stopping waits for, stop, and say it stopped.
import { printResult, type IO } from '../io.js';

/** `say` writes the two lines (the log, when the command has one; else stderr). */
export async function untilStopped(io: IO, signal: AbortSignal, stopping: string, stop: () => Promise<void>, say: (line: string) => void = (line) => io.err(line)): Promise<void> {
  await new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
  say(stopping);
  await stop();
  printResult(io, { event: 'stopped' }, () => say('stopped'));
}
