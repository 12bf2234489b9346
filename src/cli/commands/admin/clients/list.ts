// `ferry admin clients list`: every client account.
import * as api from '../../../../client/api.js';
import type { Command } from 'commander';
import type { ClientRecord } from '../../../../client/wire.js';
import type { CommandContext } from '../../../context.js';
import { printList } from '../../../output.js';
import { examples, group, type Registrar } from '../../../command.js';

export function register(program: Command, registrar: Registrar): void {
  group(group(program, 'admin', 'Accounts and API keys (admin key only)'), 'clients', 'Client accounts')
    .command('list')
    .description('List client accounts')
    .option('--query <q>', 'filter, e.g. plan=Free')
    .addHelpText('after', examples('ferry admin clients list', 'ferry admin clients list --query "plan=Free" --json'))
    .action(registrar.action(runClientsList));
}

export async function runClientsList(options: { query?: string }, ctx: CommandContext): Promise<void> {
  const { client } = await ctx.connect();
  const rows: ClientRecord[] = [];
  for await (const row of api.clientRecords(client, { query: options.query })) rows.push(row);
  printList(ctx.io, rows, [
    { header: 'id', value: (r) => r.id },
    { header: 'name', value: (r) => r.name },
    { header: 'plan', value: (r) => r.plan },
    { header: 'created', value: (r) => r.created },
    { header: 'admin', value: (r) => (r.isAdmin ? 'yes' : '') },
  ]);
}
