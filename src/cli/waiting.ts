// Waiting on work the service does by itself (syncs, async pushes), as the command line
// shows it: --timeout flags, and the one rule for the exit code of a batch whose items
// can each succeed or fail. The polling loop itself is client/poll.ts.
import { EXIT } from './errors.js';
import type { IO } from './io.js';
import type { Progress } from '../ops/progress.js';

export const DEFAULT_WAIT_TIMEOUT_MS = 10 * 60_000;

/**
 * The batch rule (docs/cli.md): nothing failed → 0; some items failed and at least one
 * succeeded → 3 (partial failure); items failed and none succeeded → 1.
 */
export function batchExitCode(succeeded: number, failed: number): number {
  if (failed === 0) return EXIT.ok;
  return succeeded === 0 ? EXIT.error : EXIT.partial;
}

/** Log lines on stderr, except with --json (stdout is the document, stderr only errors). */
export function logTo(io: IO): (line: string) => void {
  return (line) => {
    if (io.mode !== 'json') io.err(line);
  };
}

/** A progress whose first done()/fail() ends it; later calls (e.g. from an error path) do nothing. */
export function endsOnce(progress: Progress): Progress {
  let ended = false;
  return {
    update: (text) => {
      if (!ended) progress.update(text);
    },
    done: (text) => {
      if (!ended) progress.done(text);
      ended = true;
    },
    fail: (text) => {
      if (!ended) progress.fail(text);
      ended = true;
    },
  };
}
