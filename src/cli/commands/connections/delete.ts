// `ferry connections delete --company ID CONNECTION_ID [--yes]`: removes a connection,
// its data and its stored tokens. Asks on a terminal; anywhere else --yes is required.
import { printResult } from '../../io.js';
import * as api from '../../../client/api.js';
import type { Command } from 'commander';
import type { CommandContext } from '../../context.js';
import { confirmOrYes } from '../../prompt.js';
import { examples, group, type Registrar } from '../../command.js';
import { targetArgs } from '../../command-line.js';
import { connectionIdOf, connectionTarget, type ConnectionTargetOptions } from '../../connections/target.js';

export interface ConnectionsDeleteOptions extends ConnectionTargetOptions {
  yes?: boolean;
}

export function register(program: Command, registrar: Registrar): void {
  connectionTarget(group(program, 'connections', "A company's connections to platforms, and token authorization")
    .command('delete')
    .description('Delete a connection with its data and stored tokens'))
    .option('--yes', 'do not ask (required without a terminal)')
    .addHelpText('after', examples(
      'ferry connections delete --company COMPANY_ID CONNECTION_ID          # asks first',
      'ferry connections delete --company COMPANY_ID --connection CONNECTION_ID --yes',
    ))
    .action(registrar.action(runConnectionsDelete));
}

export async function runConnectionsDelete(options: ConnectionsDeleteOptions, ctx: CommandContext, args: string[]): Promise<void> {
  const connectionId = connectionIdOf(options, args, targetArgs(ctx.flags));
  const { io } = ctx;
  let label = `connection ${connectionId}`;
  if (!options.yes) {
    if (!io.canPrompt) await confirmOrYes(io, false, `Delete ${label}?`);
    const { client } = await ctx.connect();
    const connection = await api.connection(client, options.company, connectionId, ctx.signal);
    label = `connection ${connection.id} (${connection.platformName}, ${connection.status})`;
    await confirmOrYes(io, false, `Delete ${label} with its data and stored tokens?`, ctx.signal);
  }
  const { client } = await ctx.connect();
  await api.deleteConnection(client, options.company, connectionId, ctx.signal);
  printResult(io, { id: connectionId, companyId: options.company, deleted: true }, () => io.err(`Deleted ${label}.`));
}
