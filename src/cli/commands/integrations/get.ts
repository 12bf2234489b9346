// `ferry integrations get KEY`: one integration with its token fields (what a token
// file for `connections authorize` or a bulk CSV must hold) and its data types.
import * as api from '../../../client/api.js';
import type { Command } from 'commander';
import type { CommandContext } from '../../context.js';
import { printRecord, type Section } from '../../output.js';
import { examples, group, type Registrar } from '../../command.js';
import type { IntegrationRecord, TokenField } from '../../../client/wire.js';

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
    const { withKnowledge } = await import('../../../ops/platform-knowledge.js');
    integration = withKnowledge(await api.integration(client, (key ?? '').trim(), ctx.signal));
  } catch (err) {
    const { ApiRequestError } = await import('../../../client/errors.js');
    if (err instanceof ApiRequestError && err.status === 404) {
      const { unknownPlatformHint } = await import('../../platform-hint.js');
      Object.assign(err, { hint: await unknownPlatformHint(client, key ?? '', ctx.signal) });
    }
    throw err;
  }
  printRecord(ctx.io, integration, [
    ['key', integration.key],
    ['name', integration.name],
    ['sourceType', integration.sourceType],
    ['route', integration.migrationRoute],
  ], [{
    kind: 'tokenField',
    title: `Token fields (${integration.tokenFields.length}):`,
    rows: integration.tokenFields,
    columns: [
      { header: 'name', value: (f) => f.name },
      { header: 'required', value: (f) => (f.required ? 'yes' : 'no') },
      { header: 'description', value: (f) => f.description },
    ],
    piped: (f) => [f.name, f.required ? 'required' : 'optional', f.description],
  } satisfies Section<TokenField>, {
    kind: 'dataType',
    rows: integration.dataTypes,
    columns: [],
    line: (types) => `Data types (${types.length}): ${types.join(', ')}`,
    piped: (t) => [t],
  } satisfies Section<string>], `Template for a bulk migration: ferry templates show ${integration.key}`);
}
