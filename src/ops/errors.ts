// The one error an engine throws on purpose: what went wrong, a hint for the person, and
// its kind. The command line turns the kind into an exit code (cli/errors.ts); an engine
// never picks one.

/**
 * input: the files or options given are wrong · failed: the work could not be done ·
 * partial: some items of a batch failed, others succeeded · auth: the service refused the
 * credentials · interrupted: stopped on purpose (Ctrl-C).
 */
export type OpErrorKind = 'input' | 'failed' | 'partial' | 'auth' | 'interrupted';

export class OpError extends Error {
  constructor(message: string, readonly kind: OpErrorKind = 'failed', readonly hint?: string) {
    super(message);
    this.name = 'OpError';
  }
}

/** The input is wrong: a file, a flag's value, a plan out of order. */
export function inputError(message: string, hint?: string): OpError {
  return new OpError(message, 'input', hint);
}

export function interrupted(message = 'Interrupted.'): OpError {
  return new OpError(message, 'interrupted');
}
