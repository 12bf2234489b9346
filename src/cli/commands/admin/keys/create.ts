// `ferry admin keys create CLIENT_ID`: another API key for a client, printed once.
import { printResult } from '../../../io.js';
import * as api from '../../../../client/api.js';
import type { Command } from 'commander';
import type { CommandContext } from '../../../context.js';
import { examples, group, type Registrar } from '../../../command.js';

export function register(program: Command, registrar: Registrar): void {
  group(group(program, 'admin', 'Accounts and API keys (admin key only)'), 'keys', 'API keys of a client')
    .command('create')
    .description('Create an API key for a client and print it (shown once)')
    .argument('<clientId>', 'the client account id (ferry admin clients list)')
    .addHelpText('after', examples('ferry admin keys create CLIENT_ID', 'ferry admin keys create CLIENT_ID --json'))
    .action(registrar.action(runKeysCreate));
}

export async function runKeysCreate(_options: object, ctx: CommandContext, [clientId]: string[]): Promise<void> {
  const { client } = await ctx.connect();
  const key = await api.createApiKey(client, clientId!);
  printResult(ctx.io, key, () => {
    ctx.io.err(`Created key ${key.id}. The key, shown only this once:`);
    ctx.io.out(key.apiKey);
  });
}
