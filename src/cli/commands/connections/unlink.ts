// `ferry connections unlink --company ID CONNECTION_ID`: a Linked connection becomes
// Unlinked (syncs stop; its data stays). Only Linked connections can be unlinked.
import { printResult } from '../../io.js';
import * as api from '../../../client/api.js';
import type { Command } from 'commander';
import type { CommandContext } from '../../context.js';
import { examples, group, type Registrar } from '../../command.js';
import { targetArgs } from '../../command-line.js';
import { connectionIdOf, connectionTarget, type ConnectionTargetOptions } from '../../connections/target.js';

export function register(program: Command, registrar: Registrar): void {
  connectionTarget(group(program, 'connections', "A company's connections to platforms, and token authorization")
    .command('unlink')
    .description('Unlink a Linked connection (status Unlinked; its data is kept)'))
    .addHelpText('after', examples(
      'ferry connections unlink --company COMPANY_ID CONNECTION_ID',
      'ferry connections unlink --company COMPANY_ID --connection CONNECTION_ID --json',
    ))
    .action(registrar.action(runConnectionsUnlink));
}

export async function runConnectionsUnlink(options: ConnectionTargetOptions, ctx: CommandContext, args: string[]): Promise<void> {
  const connectionId = connectionIdOf(options, args, targetArgs(ctx.flags));
  const { client } = await ctx.connect();
  const connection = await api.unlinkConnection(client, options.company, connectionId, ctx.signal);
  printResult(ctx.io, connection, () => ctx.io.err(`Unlinked connection ${connection.id} (${connection.platformName}).`));
}
