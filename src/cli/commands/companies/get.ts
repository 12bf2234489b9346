// `ferry companies get ID`: one company with its connections.
import * as api from '../../../client/api.js';
import type { Command } from 'commander';
import type { CommandContext } from '../../context.js';
import { printRecord, printTable } from '../../output.js';
import type { Registrar } from '../../program.js';
import { examples, group } from '../group.js';

export function register(program: Command, registrar: Registrar): void {
  group(program, 'companies', 'Companies: create, list, show, delete')
    .command('get')
    .description('Show one company and its connections')
    .argument('<companyId>', 'the company id')
    .addHelpText('after', examples(
      'ferry companies get 5b2c…',
      "ferry companies get 5b2c… | awk -F'\\t' '$1==\"connection\" {print $2}'   # its connection ids",
      'ferry companies get 5b2c… --json | jq .dataConnections',
    ))
    .action(registrar.action(runCompaniesGet));
}

export async function runCompaniesGet(_options: object, ctx: CommandContext, [companyId]: string[]): Promise<void> {
  const { client } = await ctx.connect();
  const company = await api.company(client, companyId!, ctx.signal);
  const { io } = ctx;
  if (io.mode === 'json') {
    io.json(company);
    return;
  }
  const connections = company.dataConnections ?? [];
  printRecord(io, company, [
    ['id', company.id],
    ['name', company.name],
    ['description', company.description],
    ['tags', formatTags(company.tags)],
    ['created', company.created],
    ['lastSync', company.lastSync ?? (io.mode === 'tty' ? 'never' : '')],
    ['redirect', company.redirect],
    ['connections', connections.length],
  ]);
  if (io.mode === 'tty') {
    if (connections.length === 0) {
      io.err(`\nNo connections yet. Add one: ferry connections create --company ${company.id} --platform KEY`);
      return;
    }
    io.out('');
    printTable(io, connections, [
      { header: 'connection', value: (c) => c.id },
      { header: 'platform', value: (c) => `${c.integrationKey} (${c.platformName})` },
      { header: 'status', value: (c) => c.status },
      { header: 'created', value: (c) => c.created },
      { header: 'lastSync', value: (c) => c.lastSync },
    ]);
    return;
  }
  // Piped: one line per connection after the key/value lines, led by "connection".
  for (const c of connections) io.out(['connection', c.id, c.integrationKey, c.status, c.created, c.lastSync ?? ''].join('\t'));
}

function formatTags(tags: Record<string, string> | undefined): string {
  return Object.entries(tags ?? {}).map(([k, v]) => `${k}=${v}`).join(';');
}
