// Waiting on work the service does by itself (syncs, async pushes), as the command line
// shows it: --timeout durations, and the one rule for the exit code of a batch whose items
// can each succeed or fail. The polling loop itself is client/poll.ts.
import { InvalidArgumentError } from 'commander';
import { ApiRequestError, ConnectionError } from '../client/errors.js';
import { EXIT } from './errors.js';
import type { IO } from './io.js';
import type { Progress } from './progress.js';

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** "90s", "10m", "1h", "1h30m", "500ms"; a bare number is seconds. Returns milliseconds. */
export function parseDuration(text: string): number | undefined {
  const trimmed = text.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  if (!/^(\d+(\.\d+)?(ms|s|m|h))+$/.test(trimmed)) return undefined;
  let total = 0;
  for (const [, amount, unit] of trimmed.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)) total += Number(amount) * UNIT_MS[unit!]!;
  return Math.round(total);
}

/** A commander argument parser for a duration flag (at least 1 ms). */
export function durationArg(flag: string) {
  return (value: string): number => {
    const ms = parseDuration(value);
    if (ms === undefined || ms < 1) throw new InvalidArgumentError(`${flag} must be a duration such as 90s, 10m or 1h.`);
    return ms;
  };
}

/** 90000 → "90s", 600000 → "10m", 5400000 → "1h30m". */
export function durationText(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  const seconds = Math.round(ms / 1000);
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  return [h ? `${h}h` : '', m ? `${m}m` : '', s || seconds === 0 ? `${s}s` : ''].join('');
}

export const DEFAULT_WAIT_TIMEOUT_MS = 10 * 60_000;

/** Errors that end a whole batch: the key is wrong or revoked, the plan expired, the service is gone. */
export function isFatal(err: unknown): boolean {
  if (err instanceof ConnectionError) return true;
  return err instanceof ApiRequestError && (err.status === 401 || err.status === 402 || err.status === 403);
}

/** One line for an item's failure: the service's message, its HTTP status and correlation id. */
export function describeError(err: unknown): string {
  if (err instanceof ApiRequestError) {
    const items = err.validation.map((v) => `${v.itemId ? `${v.itemId}: ` : ''}${v.message}`);
    return `${err.message}${items.length ? ` (${items.join('; ')})` : ''} [HTTP ${err.status}${err.correlationId ? `, correlation id ${err.correlationId}` : ''}]`;
  }
  return (err as Error)?.message ?? String(err);
}

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
