// `ferry admin keys revoke CLIENT_ID KEY_ID`: later use of that key gets 403.
import { printResult } from '../../../io.js';
import * as api from '../../../../client/api.js';
import type { Command } from 'commander';
import type { CommandContext } from '../../../context.js';
import { examples, group, type Registrar } from '../../../command.js';

export function register(program: Command, registrar: Registrar): void {
  group(group(program, 'admin', 'Accounts and API keys (admin key only)'), 'keys', 'API keys of a client')
    .command('revoke')
    .description('Revoke an API key; requests with it then get 403')
    .argument('<clientId>', 'the client account id')
    .argument('<keyId>', 'the key id (ferry admin keys list CLIENT_ID)')
    .addHelpText('after', examples(
      'ferry admin keys create CLIENT_ID > new.key && ferry admin keys revoke CLIENT_ID KEY_ID   # rotate a key',
      'ferry admin keys revoke CLIENT_ID KEY_ID --json',
    ))
    .action(registrar.action(runKeysRevoke));
}

export async function runKeysRevoke(_options: object, ctx: CommandContext, [clientId, keyId]: string[]): Promise<void> {
  const { client } = await ctx.connect();
  await api.revokeApiKey(client, clientId!, keyId!);
  printResult(ctx.io, { id: keyId, revoked: true }, () => ctx.io.err(`Revoked key ${keyId}.`));
}
