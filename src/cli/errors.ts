// Typed CLI errors and the one mapping from any error to an exit code (CLI.md):
// 0 success · 1 error · 2 usage · 3 partial failure · 4 auth/permission · 5 plan limit · 130 interrupted.
import { ApiRequestError, SandboxError, UnexpectedAnswerError } from '../client/errors.js';
import { OpError, type OpErrorKind } from '../ops/errors.js';
import { ferryCommand } from './command-line.js';

export const EXIT = { ok: 0, error: 1, usage: 2, partial: 3, auth: 4, planLimit: 5, interrupted: 130 } as const;

export class CliError extends Error {
  /**
   * `details`: fields a script reads from the --json error line beside the message (a sync's
   * counts and the command that resumes it); the text says the same in words.
   */
  constructor(message: string, readonly exitCode: number = EXIT.error, readonly hint?: string, readonly details?: Record<string, unknown>) {
    super(message);
    this.name = 'CliError';
  }
}

export class UsageError extends CliError {
  constructor(message: string, hint?: string) {
    super(message, EXIT.usage, hint);
    this.name = 'UsageError';
  }
}

export class InterruptedError extends CliError {
  constructor(message = 'Stopped.', hint?: string, details?: Record<string, unknown>) {
    super(message, EXIT.interrupted, hint, details);
    this.name = 'InterruptedError';
  }
}

/** An engine's error whose hint names a command, that command given the run's `target` flags (targetArgs) so that it runs as printed. */
export function withTarget(err: unknown, target: string[]): unknown {
  if (!(err instanceof OpError) || !err.suggests || target.length === 0) return err;
  return new OpError(err.message, err.kind, err.suggests.hint(ferryCommand(err.suggests.args, target)));
}

/** What an engine's error kind means on the command line. */
const KIND_EXIT: Record<OpErrorKind, number> = { input: EXIT.usage, failed: EXIT.error, partial: EXIT.partial, auth: EXIT.auth, interrupted: EXIT.interrupted };

export function exitCodeFor(err: unknown): number {
  if (err instanceof CliError) return err.exitCode;
  if (err instanceof OpError) return KIND_EXIT[err.kind];
  if (err instanceof ApiRequestError) {
    if (err.status === 401 || err.status === 403) return EXIT.auth;
    if (err.status === 402) return EXIT.planLimit;
  }
  return EXIT.error;
}

/** An error that speaks for itself, with an optional hint: the command line's own, an engine's, the sandbox client's. */
export function isWorded(err: unknown): err is Error & { hint?: string } {
  return err instanceof CliError || err instanceof OpError || err instanceof SandboxError || err instanceof UnexpectedAnswerError;
}

/** The run was stopped by Ctrl-C (or SIGTERM) on purpose. */
export function isInterruption(err: unknown): boolean {
  return (err instanceof CliError && err.exitCode === EXIT.interrupted) || (err instanceof OpError && err.kind === 'interrupted');
}
