// `ferry connections list --company ID`: every connection of one company.
import { ferryCommand, targetArgs } from '../../command-line.js';
import * as api from '../../../client/api.js';
import type { Command } from 'commander';
import type { CommandContext } from '../../context.js';
import { printList } from '../../output.js';
import type { ConnectionRecord } from '../../../client/wire.js';
import { examples, group, type Registrar } from '../../command.js';

export interface ConnectionsListOptions {
  company: string;
}

export function register(program: Command, registrar: Registrar): void {
  group(program, 'connections', "A company's connections to platforms, and token authorization")
    .command('list')
    .description("List a company's connections (every page)")
    .requiredOption('--company <id>', 'the company id')
    .addHelpText('after', examples(
      'ferry connections list --company COMPANY_ID',
      "ferry connections list --company COMPANY_ID | awk -F'\\t' '$4==\"Linked\" {print $1}'",
      'ferry connections list --company COMPANY_ID --json | jq \'.[].status\'',
    ))
    .action(registrar.action(runConnectionsList));
}

export async function runConnectionsList(options: ConnectionsListOptions, ctx: CommandContext): Promise<void> {
  const { client } = await ctx.connect();
  const rows: ConnectionRecord[] = [];
  for await (const row of api.connectionRecords(client, options.company, ctx.signal)) rows.push(row);
  const { io } = ctx;
  printList(io, rows, [
    { header: 'id', value: (c) => c.id },
    { header: 'platform', value: (c) => c.integrationKey },
    { header: 'name', value: (c) => c.platformName },
    { header: 'status', value: (c) => c.status },
    { header: 'created', value: (c) => c.created },
    { header: 'lastSync', value: (c) => c.lastSync },
  ]);
  if (io.mode === 'tty' && rows.length === 0) io.err(`No connections. Add one: ${ferryCommand(['connections', 'create', '--company', options.company], targetArgs(ctx.flags))} --platform KEY`);
}
