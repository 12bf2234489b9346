// `ferry connections create --company ID --platform KEY`: a PendingAuth connection; its
// id goes to stdout. Tokens come next with `ferry connections authorize`.
import { ferryCommand, targetArgs } from '../../command-line.js';
import { printResult } from '../../io.js';
import * as api from '../../../client/api.js';
import type { Command } from 'commander';
import type { CommandContext } from '../../context.js';
import { examples, group, type Registrar } from '../../command.js';

export interface ConnectionsCreateOptions {
  company: string;
  platform: string;
}

export function register(program: Command, registrar: Registrar): void {
  group(program, 'connections', "A company's connections to platforms, and token authorization")
    .command('create')
    .description('Create a connection (PendingAuth) and print its id')
    .requiredOption('--company <id>', 'the company id')
    .requiredOption('--platform <key>', 'integration key, e.g. gbol (see ferry integrations list)')
    .addHelpText('after', examples(
      'ferry connections create --company COMPANY_ID --platform gbol',
      'CONN=$(ferry connections create --company "$COMPANY" --platform gbol)   # stdout is the id alone',
    ))
    .action(registrar.action(runConnectionsCreate));
}

export async function runConnectionsCreate(options: ConnectionsCreateOptions, ctx: CommandContext): Promise<void> {
  const { client } = await ctx.connect();
  const connection = await api.createConnection(client, options.company, options.platform.trim(), ctx.signal);
  const { io } = ctx;
  printResult(io, connection, () => {
    io.out(connection.id);
    io.err(`Created connection ${connection.id} to ${connection.platformName} (${connection.status}).`);
    io.err(`Next: ${ferryCommand(['connections', 'authorize', '--company', options.company, '--connection', connection.id, '--tokens-file', 'tokens.json'], targetArgs(ctx.flags))}   # fields: ferry integrations get ${connection.integrationKey}`);
  });
}
