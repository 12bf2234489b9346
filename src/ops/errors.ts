// The one error an engine throws on purpose: what went wrong, a hint for the person, and
// its kind. The command line turns the kind into an exit code (cli/errors.ts); an engine
// never picks one.

/**
 * input: the files or options given are wrong · failed: the work could not be done ·
 * partial: some items of a batch failed, others succeeded · auth: the service refused the
 * credentials · interrupted: stopped on purpose (Ctrl-C).
 */
export type OpErrorKind = 'input' | 'failed' | 'partial' | 'auth' | 'interrupted';

/**
 * A ferry command a hint names (its words after `ferry`), and the hint around it: the
 * command line words it again with the run's target flags, so that it reaches the same
 * service as printed (an engine knows nothing of those flags).
 */
export interface SuggestedCommand {
  args: string[];
  hint(command: string): string;
}

export class OpError extends Error {
  constructor(message: string, readonly kind: OpErrorKind = 'failed', readonly hint?: string, readonly suggests?: SuggestedCommand) {
    super(message);
    this.name = 'OpError';
  }
}

/** An error whose hint names a command to run next (its target added by the command line). */
export function suggestingError(message: string, kind: OpErrorKind, suggests: SuggestedCommand): OpError {
  return new OpError(message, kind, suggests.hint(['ferry', ...suggests.args].join(' ')), suggests);
}

/** The input is wrong: a file, a flag's value, a plan out of order. */
export function inputError(message: string, hint?: string): OpError {
  return new OpError(message, 'input', hint);
}

export function interrupted(message = 'Interrupted.'): OpError {
  return new OpError(message, 'interrupted');
}
