// `ferry integrations list [--route self-service|managed]`: the service's registry of
// platforms, every page.
import * as api from '../../../client/api.js';
import { Option, type Command } from 'commander';
import type { CommandContext } from '../../context.js';
import { printList } from '../../output.js';
import { examples, group, type Registrar } from '../../command.js';
import type { IntegrationRecord } from '../../../client/wire.js';

export interface IntegrationsListOptions {
  route?: 'self-service' | 'managed';
}

export function register(program: Command, registrar: Registrar): void {
  group(program, 'integrations', 'Platforms the service connects to: token fields and data types')
    .command('list')
    .description('List integrations with their source type, migration route and data types')
    .addOption(new Option('--route <route>', 'only integrations migrated this way').choices(['self-service', 'managed']))
    .addHelpText('after', examples(
      'ferry integrations list',
      'ferry integrations list --route self-service',
      'ferry integrations list --json | jq -r \'.[].key\'',
    ))
    .action(registrar.action(runIntegrationsList));
}

export async function runIntegrationsList(options: IntegrationsListOptions, ctx: CommandContext): Promise<void> {
  const { client } = await ctx.connect();
  const { withKnowledge } = await import('../../../ops/platform-knowledge.js');
  // The route is ferry's knowledge (the public API's records do not carry it), so it is filtered here.
  const rows: IntegrationRecord[] = [];
  for await (const record of api.integrationRecords(client, undefined, ctx.signal)) {
    const row = withKnowledge(record);
    if (!options.route || row.migrationRoute === options.route) rows.push(row);
  }
  const { io } = ctx;
  printList(io, rows, [
    { header: 'key', value: (r) => r.key },
    { header: 'name', value: (r) => r.name },
    { header: 'sourceType', value: (r) => r.sourceType },
    { header: 'route', value: (r) => r.migrationRoute },
    { header: 'dataTypes', value: (r) => r.dataTypes.length },
  ]);
}
