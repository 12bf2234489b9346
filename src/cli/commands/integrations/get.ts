// `ferry integrations get KEY`: one integration with its token fields (what a token
// file for `connections authorize` or a bulk CSV must hold) and its data types.
import * as api from '../../../client/api.js';
import type { Command } from 'commander';
import type { CommandContext } from '../../context.js';
import { printRecord, printTable } from '../../output.js';
import type { Registrar } from '../../program.js';
import { examples, group } from '../group.js';
import type { IntegrationRecord } from '../../../client/wire.js';

export function register(program: Command, registrar: Registrar): void {
  group(program, 'integrations', 'Platforms the service connects to: token fields and data types')
    .command('get')
    .description('Show one integration: token fields (required or not) and supported data types')
    .argument('<key>', 'integration key, e.g. gbol (see ferry integrations list)')
    .addHelpText('after', examples(
      'ferry integrations get gbol',
      'ferry integrations get gbol --json | jq -r \'.tokenFields[] | select(.required) | .name\'',
    ))
    .action(registrar.action(runIntegrationsGet));
}

export async function runIntegrationsGet(_options: object, ctx: CommandContext, [key]: string[]): Promise<void> {
  const { client } = await ctx.connect();
  let integration: IntegrationRecord;
  try {
    integration = await api.integration(client, (key ?? '').trim(), ctx.signal);
  } catch (err) {
    const { ApiRequestError } = await import('../../../client/errors.js');
    if (err instanceof ApiRequestError && err.status === 404) {
      const all: IntegrationRecord[] = [];
      for await (const row of api.integrationRecords(client, undefined, ctx.signal)) all.push(row);
      const { closeMatches, describeCandidates } = await import('../../suggest.js');
      const near = closeMatches(key ?? '', all);
      Object.assign(err, { hint: near.length ? `Did you mean ${describeCandidates(near)}? Every key: ferry integrations list` : 'Every key: ferry integrations list' });
    }
    throw err;
  }
  const { io } = ctx;
  if (io.mode === 'json') {
    io.json(integration);
    return;
  }
  printRecord(io, integration, [
    ['key', integration.key],
    ['name', integration.name],
    ['sourceType', integration.sourceType],
    ['route', integration.migrationRoute],
  ]);
  if (io.mode === 'tty') {
    io.out('');
    io.out(`Token fields (${integration.tokenFields.length}):`);
    printTable(io, integration.tokenFields, [
      { header: 'name', value: (f) => f.name },
      { header: 'required', value: (f) => (f.required ? 'yes' : 'no') },
      { header: 'description', value: (f) => f.description },
    ]);
    io.out('');
    io.out(`Data types (${integration.dataTypes.length}): ${integration.dataTypes.join(', ')}`);
    io.err(`\nTemplate for a bulk migration: ferry templates show ${integration.key}`);
    return;
  }
  // Piped: one line per token field and per data type, each led by its kind.
  for (const f of integration.tokenFields) io.out(['tokenField', f.name, f.required ? 'required' : 'optional', f.description.replace(/[\t\n]/g, ' ')].join('\t'));
  for (const t of integration.dataTypes) io.out(`dataType\t${t}`);
}
