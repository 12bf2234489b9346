// `ferry whoami`: which service, which account, which plan.
import * as api from '../../client/api.js';
import type { Command } from 'commander';
import type { CommandContext } from '../context.js';
import { printRecord } from '../output.js';
import { examples, type Registrar } from '../command.js';

export function register(program: Command, registrar: Registrar): void {
  program.command('whoami')
    .description('Show the target service and the account the key acts for')
    .addHelpText('after', examples(
      'ferry whoami',
      'ferry --profile staging whoami --json',
      'ferry --client CLIENT_ID whoami          # an admin key acting for a client',
    ))
    .action(registrar.action(runWhoami));
}

export async function runWhoami(_options: object, ctx: CommandContext): Promise<void> {
  const connection = await ctx.connect();
  const profile = await api.profile(connection.client);
  const record = { baseUrl: connection.baseUrl, embedded: connection.embedded, ...profile };
  printRecord(ctx.io, record, [
    ['service', `${connection.baseUrl}${connection.embedded ? ' (embedded)' : ''}`],
    ['account', profile.name],
    ['client id', profile.clientId],
    ['plan', profile.plan],
    ['admin key', profile.isAdmin ? (profile.actingAsClient ? 'yes, acting for this client' : 'yes') : 'no'],
  ]);
}
