// `ferry connections get --company ID CONNECTION_ID` (or --connection ID): one connection.
import { ferryCommand, targetArgs } from '../../command-line.js';
import * as api from '../../../client/api.js';
import type { Command } from 'commander';
import type { CommandContext } from '../../context.js';
import { printRecord } from '../../output.js';
import { examples, group, type Registrar } from '../../command.js';
import { connectionIdOf, connectionTarget, type ConnectionTargetOptions } from '../../connections/target.js';

export function register(program: Command, registrar: Registrar): void {
  connectionTarget(group(program, 'connections', "A company's connections to platforms, and token authorization")
    .command('get')
    .description('Show one connection: platform, status, last sync, errors'))
    .addHelpText('after', examples(
      'ferry connections get --company COMPANY_ID CONNECTION_ID',
      'ferry connections get --company COMPANY_ID --connection CONNECTION_ID --json | jq -r .status',
    ))
    .action(registrar.action(runConnectionsGet));
}

export async function runConnectionsGet(options: ConnectionTargetOptions, ctx: CommandContext, args: string[]): Promise<void> {
  const connectionId = connectionIdOf(options, args, targetArgs(ctx.flags));
  const { client } = await ctx.connect();
  const connection = await api.connection(client, options.company, connectionId, ctx.signal);
  const { io } = ctx;
  const errors = connection.dataConnectionErrors ?? [];
  const errorText = (e: (typeof errors)[number]) => [e.erroredOnUtc, e.statusCode, e.statusText, e.errorMessage].filter((p) => p !== undefined && p !== null && p !== '').join(' ');
  printRecord(io, connection, [
    ['id', connection.id],
    ['company', options.company],
    ['platform', connection.integrationKey],
    ['platformName', connection.platformName],
    ['sourceType', connection.sourceType],
    ['status', connection.status],
    ['created', connection.created],
    ['lastSync', connection.lastSync ?? (io.mode === 'tty' ? 'never' : '')],
    ['linkUrl', connection.linkUrl],
    ['errors', errors.length],
  ], [{ kind: 'error', rows: errors, compact: true, columns: [{ header: 'error', value: errorText }], piped: (e) => [errorText(e)] }],
  connection.status === 'PendingAuth' ? `Not authorized yet: ${ferryCommand(['connections', 'authorize', '--company', options.company, '--connection', connection.id, '--tokens-file', 'tokens.json'], targetArgs(ctx.flags))}` : undefined);
}
