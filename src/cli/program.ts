// Builds the `ferry` command tree and runs it, returning the exit code. Errors of every
// kind become an exit code here (and only here); main.ts turns it into process.exit.
import { setMaxListeners } from 'node:events';
import { Command, CommanderError } from 'commander';
import { readFileSync } from 'node:fs';
import { ApiRequestError, ConnectionError } from '../client/errors.js';
import { createContext } from './context.js';
import { CliError, EXIT, exitCodeFor, InterruptedError, isInterruption, isWorded, withTarget } from './errors.js';
import { ferryCommand, targetArgs } from './command-line.js';
import type { GlobalFlags } from './globals.js';
import { createIO, type IO } from './io.js';
import type { Action, Registrar } from './command.js';
import { COMMANDS } from './commands/index.js';

export interface Streams {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
}

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

/**
 * Every request, pause and wait of a command listens on its one Ctrl-C signal, and a batch
 * keeps dozens in flight at once (at most the adaptive limit's window, 256); each listener
 * goes when its request ends, so this is no leak, and Node's default warning at 11 would
 * only reach the user's terminal. Tasks waiting for a slot, thousands in a large batch,
 * share one listener (client/adaptive-limit.ts): the count is bounded by what is in flight.
 */
const MAX_SIGNAL_LISTENERS = 1000;

export async function runCli(argv: string[], streams: Streams, signal: AbortSignal): Promise<number> {
  setMaxListeners(MAX_SIGNAL_LISTENERS, signal);
  let failure: unknown;
  let io: IO | undefined;
  /** The flags that reached the service, for the commands an error's hint names. */
  let target: string[] = [];
  const registrar: Registrar = {
    action: <O>(fn: Action<O>) => async (...all: unknown[]) => {
      const command = all[all.length - 1] as Command;
      const flags = command.optsWithGlobals<GlobalFlags>();
      io = createIO(streams as never, { json: flags.json, noInput: flags.input === false, noColor: flags.color === false, quiet: flags.quiet, verbose: flags.verbose });
      const ctx = createContext(io, flags, signal);
      try {
        await fn(command.opts() as O, ctx, all.slice(0, -2) as string[]);
      } catch (err) {
        // A command an engine's hint names reaches the service this one did.
        target = targetArgs(flags);
        failure = withTarget(err, target);
      } finally {
        await ctx.dispose();
      }
    },
  };

  const program = new Command('ferry')
    .description('Move companies and their accounting-platform connections onto the company-and-connection data service.')
    .version(version(), '-V, --version')
    .option('--base-url <url>', 'remote service, or set FERRY_BASE_URL (default: the embedded service)')
    .option('--profile <name>', 'a saved target (see ferry login)')
    .option('--api-key-file <path>', 'file holding the API key (or set FERRY_API_KEY)')
    .option('--client <id>', 'admin key acting for this client (X-Client-Id)')
    .option('--data-dir <dir>', 'embedded service state (default: $XDG_DATA_HOME/ferry)')
    .option('--json', 'machine output on stdout, errors as JSON on stderr')
    .option('--no-input', 'never prompt; a missing answer is an error naming the flag')
    .option('--no-color', 'plain text')
    .option('-q, --quiet', 'less output on stderr')
    .option('-v, --verbose', 'log every request (keys and tokens redacted)')
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({
      writeOut: (text) => void streams.stdout.write(text),
      writeErr: (text) => void streams.stderr.write(text),
    });
  for (const register of COMMANDS) register(program, registrar);
  program.commands.forEach(function exit(command: Command) {
    command.exitOverride().showSuggestionAfterError(true);
    command.commands.forEach(exit);
  });

  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') return EXIT.ok;
      return EXIT.usage;
    }
    failure = err;
  }
  if (failure === undefined) return EXIT.ok;
  // Whatever broke while stopping for Ctrl-C/SIGTERM (an aborted request, say) is an interruption.
  if (signal.aborted && !isWorded(failure)) failure = new InterruptedError();
  const out = io ?? createIO(streams as never, { json: argv.includes('--json') });
  reportError(out, failure, target);
  return exitCodeFor(failure);
}

/** A hint for the person: a worded error's, or one a command attached to an API error (`Object.assign(err, { hint })`). */
function hintOf(err: unknown): string | undefined {
  const hint = (err as { hint?: unknown } | null)?.hint;
  return typeof hint === 'string' && hint !== '' ? hint : undefined;
}

/** One place decides how an error looks: JSON on stderr with --json, readable lines otherwise; `target` reaches the service for a command a hint names. */
export function reportError(io: IO, err: unknown, target: string[] = []): void {
  const exitCode = exitCodeFor(err);
  if (io.mode === 'json') {
    const body: Record<string, unknown> = { message: (err as Error).message ?? String(err), exitCode };
    if (err instanceof ApiRequestError) {
      body.status = err.status;
      if (err.correlationId) body.correlationId = err.correlationId;
      if (err.validation.length) body.validation = err.validation;
    }
    const hint = hintOf(err);
    if (hint) body.hint = hint;
    // A command's details follow the fields every error has, and never replace them.
    if (err instanceof CliError && err.details) for (const [key, value] of Object.entries(err.details)) if (!(key in body)) body[key] = value;
    io.stderr.write(`${JSON.stringify({ error: body })}\n`);
    return;
  }
  const say = (line: string) => io.err(line, { force: true });
  // The person's own Ctrl-C is no error: the command says where it stopped and how to go on.
  if (isInterruption(err) && isWorded(err)) {
    say(err.message);
    if (err.hint) say(`hint: ${err.hint}`);
  } else if (err instanceof ApiRequestError) {
    const route = `${err.method} ${err.path.split('?')[0]}`;
    // An answer without the service's words has only its status to tell: said once.
    say(err.message === `HTTP ${err.status}` ? `error: HTTP ${err.status} from ${route}` : `error: ${err.message} (HTTP ${err.status} from ${route})`);
    // An item that only repeats the message (a service's one-problem 400) is not said twice.
    for (const item of err.validation) if (!err.message.includes(item.message)) say(`  - ${item.itemId ? `${item.itemId}: ` : ''}${item.message}`);
    if (err.status === 401) say('hint: check the API key (--api-key-file, FERRY_API_KEY or the profile).');
    if (err.status === 404 && /^\/admin(\/|$)/.test(err.path) && !hintOf(err)) say(`hint: admin and sandbox commands need ferry's own service (ferry serve); this target has no /admin routes (${ferryCommand(['doctor'], target)} says what it is).`);
    const hint = hintOf(err);
    if (hint) say(`hint: ${hint}`);
    else if (err.status === 403) say('hint: the key was revoked, or the resource belongs to another account.');
    if (err.correlationId) say(`correlation id: ${err.correlationId} (quote it to support)`);
  } else if (err instanceof ConnectionError) {
    say(`error: ${err.message}`);
    say('hint: is the service running? Check --base-url, or drop it to use the embedded service.');
  } else if (isWorded(err)) {
    say(`error: ${err.message}`);
    if (err.hint) say(`hint: ${err.hint}`);
  } else {
    say(`error: ${(err as Error)?.message ?? String(err)}`);
    if (io.verbose && (err as Error)?.stack) say((err as Error).stack!);
  }
}
