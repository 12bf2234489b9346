// Prompts, only where a person can answer: every prompt has a flag, and without a
// terminal (or with --no-input, CI, --json) a missing answer is a usage error naming it.
import type { IO } from './io.js';
import { UsageError } from './errors.js';

export interface Ask {
  /** The flag that gives the same answer, named in the error when no one can be asked. */
  flag: string;
  message: string;
  default?: string;
  secret?: boolean;
}

function context(io: IO, signal?: AbortSignal) {
  return { input: io.stdin, output: io.stderr, ...(signal ? { signal } : {}) };
}

export async function ask(io: IO, question: Ask, signal?: AbortSignal): Promise<string> {
  if (!io.canPrompt) throw new UsageError(`Missing ${question.flag}.`, `Give ${question.flag} (no prompt without a terminal, or with --no-input/CI).`);
  const prompts = await import('@inquirer/prompts');
  if (question.secret) return prompts.password({ message: question.message, mask: '*' }, context(io, signal));
  return prompts.input({ message: question.message, ...(question.default !== undefined ? { default: question.default } : {}) }, context(io, signal));
}

/** Goes on when --yes was given or a person confirms; otherwise stops with a usage error. */
export async function confirmOrYes(io: IO, yes: boolean | undefined, message: string, signal?: AbortSignal): Promise<void> {
  if (yes) return;
  if (!io.canPrompt) throw new UsageError(`${message} Refusing without --yes.`, 'Add --yes to confirm (no prompt without a terminal, or with --no-input/CI).');
  const { confirm } = await import('@inquirer/prompts');
  if (!(await confirm({ message, default: false }, context(io, signal)))) throw new UsageError('Cancelled.');
}

/** Chooses one of a few values with a prompt, or demands the flag. */
export async function choose<T extends string>(io: IO, question: { flag: string; message: string; choices: T[] }, signal?: AbortSignal): Promise<T> {
  if (!io.canPrompt) throw new UsageError(`Missing ${question.flag}.`, `Give ${question.flag} ${question.choices.join('|')}.`);
  const { select } = await import('@inquirer/prompts');
  return select({ message: question.message, choices: question.choices.map((value) => ({ value, name: value })) }, context(io, signal));
}
