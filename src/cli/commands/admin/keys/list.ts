// `ferry admin keys list CLIENT_ID`: key ids and dates (never the keys themselves).
import * as api from '../../../../client/api.js';
import type { ApiKeyRecord } from '../../../../client/wire.js';
import type { Command } from 'commander';
import type { CommandContext } from '../../../context.js';
import { printList } from '../../../output.js';
import { examples, group, type Registrar } from '../../../command.js';

export function register(program: Command, registrar: Registrar): void {
  group(group(program, 'admin', 'Accounts and API keys (admin key only)'), 'keys', 'API keys of a client')
    .command('list')
    .description('List the API keys of a client (ids and dates only)')
    .argument('<clientId>', 'the client account id')
    .addHelpText('after', examples(
      'ferry admin keys list CLIENT_ID',
      "ferry admin keys list CLIENT_ID --json | jq -r '.[] | select(.revoked == null) | .id'   # keys still in use",
    ))
    .action(registrar.action(runKeysList));
}

export async function runKeysList(_options: object, ctx: CommandContext, [clientId]: string[]): Promise<void> {
  const { client } = await ctx.connect();
  const rows: ApiKeyRecord[] = [];
  for await (const row of api.apiKeyRecords(client, clientId!)) rows.push(row);
  printList(ctx.io, rows, [
    { header: 'id', value: (r) => r.id },
    { header: 'created', value: (r) => r.created },
    { header: 'revoked', value: (r) => r.revoked },
  ]);
}
