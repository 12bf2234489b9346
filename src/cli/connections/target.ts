// Which connection a command means: `--company ID` plus the connection id, given either
// as the argument or as `--connection ID` (the same flag `authorize` takes), so
// get/unlink/delete/authorize read alike in scripts and by hand.
import { Option, type Command } from 'commander';
import { UsageError } from '../errors.js';
import { ferryCommand } from '../command-line.js';

export interface ConnectionTargetOptions {
  company: string;
  connection?: string;
}

/** Adds `--company ID`, `--connection ID` and an optional `[connectionId]` argument. */
export function connectionTarget(command: Command): Command {
  return command
    .argument('[connectionId]', 'the connection id (or give --connection)')
    .requiredOption('--company <id>', 'the company id')
    .addOption(new Option('--connection <id>', 'the connection id (or give it as the argument)'));
}

/** The connection id, given once; `target` (targetArgs) reaches the service for the command that lists them. */
export function connectionIdOf(options: ConnectionTargetOptions, args: readonly string[], target: string[] = []): string {
  const positional = args[0];
  if (positional !== undefined && options.connection !== undefined && positional !== options.connection) {
    throw new UsageError(`Two different connection ids: ${positional} and --connection ${options.connection}.`, 'Give the connection id once.');
  }
  const id = options.connection ?? positional;
  if (!id) throw new UsageError('Missing the connection id.', `Give it as the argument or as --connection ID; list them with: ${ferryCommand(['connections', 'list', '--company', options.company], target)}`);
  return id;
}
