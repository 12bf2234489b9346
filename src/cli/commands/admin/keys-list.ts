// `ferry admin keys list CLIENT_ID`: key ids and dates (never the keys themselves).
import type { Command } from 'commander';
import type { CommandContext } from '../../context.js';
import { printTable } from '../../output.js';
import type { Registrar } from '../../program.js';
import { examples, group } from '../group.js';

interface KeyRecord {
  id: string;
  created: string;
  revoked?: string;
}

export function register(program: Command, registrar: Registrar): void {
  group(group(program, 'admin', 'Accounts and API keys (admin key only)'), 'keys', 'API keys of a client')
    .command('list')
    .description('List the API keys of a client (ids and dates only)')
    .argument('<clientId>', 'the client account id')
    .addHelpText('after', examples(
      'ferry admin keys list 3f1c…',
      "ferry admin keys list 3f1c… --json | jq -r '.[] | select(.revoked == null) | .id'   # keys still in use",
    ))
    .action(registrar.action(runKeysList));
}

export async function runKeysList(_options: object, ctx: CommandContext, [clientId]: string[]): Promise<void> {
  const { client } = await ctx.connect();
  const rows: KeyRecord[] = [];
  for await (const row of client.records<KeyRecord>(`/admin/clients/${encodeURIComponent(clientId!)}/apiKeys`)) rows.push(row);
  if (ctx.io.mode === 'json') {
    ctx.io.json(rows);
    return;
  }
  printTable(ctx.io, rows, [
    { header: 'id', value: (r) => r.id },
    { header: 'created', value: (r) => r.created },
    { header: 'revoked', value: (r) => r.revoked },
  ]);
}
