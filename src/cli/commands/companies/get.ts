// `ferry companies get ID`: one company with its connections.
import { ferryCommand, targetArgs } from '../../command-line.js';
import * as api from '../../../client/api.js';
import type { Command } from 'commander';
import type { CommandContext } from '../../context.js';
import { printRecord, type Section } from '../../output.js';
import type { ConnectionRecord } from '../../../client/wire.js';
import { examples, group, type Registrar } from '../../command.js';

export function register(program: Command, registrar: Registrar): void {
  group(program, 'companies', 'Companies: create, list, show, delete')
    .command('get')
    .description('Show one company and its connections')
    .argument('<companyId>', 'the company id')
    .addHelpText('after', examples(
      'ferry companies get COMPANY_ID',
      "ferry companies get COMPANY_ID | awk -F'\\t' '$1==\"connection\" {print $2}'   # its connection ids",
      'ferry companies get COMPANY_ID --json | jq .dataConnections',
    ))
    .action(registrar.action(runCompaniesGet));
}

export async function runCompaniesGet(_options: object, ctx: CommandContext, [companyId]: string[]): Promise<void> {
  const { client } = await ctx.connect();
  const company = await api.company(client, companyId!, ctx.signal);
  const { io } = ctx;
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
  ], [{
    kind: 'connection',
    rows: connections,
    columns: [
      { header: 'connection', value: (c) => c.id },
      { header: 'platform', value: (c) => `${c.integrationKey} (${c.platformName})` },
      { header: 'status', value: (c) => c.status },
      { header: 'created', value: (c) => c.created },
      { header: 'lastSync', value: (c) => c.lastSync },
    ],
    piped: (c) => [c.id, c.integrationKey, c.status, c.created, c.lastSync],
    empty: `No connections yet. Add one: ${ferryCommand(['connections', 'create', '--company', company.id], targetArgs(ctx.flags))} --platform KEY`,
  } satisfies Section<ConnectionRecord>]);
}

function formatTags(tags: Record<string, string> | undefined): string {
  return Object.entries(tags ?? {}).map(([k, v]) => `${k}=${v}`).join(';');
}
