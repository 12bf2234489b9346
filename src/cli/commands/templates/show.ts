// `ferry templates show KEY`: the CSV header and example row that `ferry migrate tokens`
// takes for one integration, exactly as shipped in templates/migration/<key>.csv.
// Static files: no service is started.
import { printResult } from '../../io.js';
import type { Command } from 'commander';
import type { CommandContext } from '../../context.js';
import { UsageError } from '../../errors.js';
import { examples, group, type Registrar } from '../../command.js';

export function register(program: Command, registrar: Registrar): void {
  group(program, 'templates', 'Migration CSV templates (static files, no service needed)')
    .command('show')
    .description('Print the migration CSV header and an example row for one integration')
    .argument('<key>', 'integration key, e.g. gbol (see ferry templates list)')
    .addHelpText('after', examples(
      'ferry templates show gbol                 # Xero: header and example row',
      'ferry templates show gbol > tokens.csv    # start a migration file from it',
      'ferry templates show gbol --json | jq .tokenFields',
    ))
    .action(registrar.action(runTemplatesShow));
}

export async function runTemplatesShow(_options: object, ctx: CommandContext, [rawKey]: string[]): Promise<void> {
  const { readTemplate, listTemplates } = await import('../../templates/catalogue.js');
  const key = (rawKey ?? '').trim().toLowerCase();
  const template = await readTemplate(key);
  if (!template) {
    const { closeMatches, describeCandidates } = await import('../../suggest.js');
    const all = await listTemplates();
    const near = closeMatches(rawKey ?? '', all.map((t) => ({ key: t.key, name: t.name ?? '' })));
    throw new UsageError(
      `No migration template for ${JSON.stringify(rawKey ?? '')}.`,
      near.length ? `Did you mean ${describeCandidates(near)}? Every key: ferry templates list` : 'Every key: ferry templates list',
    );
  }
  const { io } = ctx;
  const json = {
    key: template.key, name: template.name, migrationRoute: template.migrationRoute, file: template.file,
    header: template.header, example: template.example, tokenFields: template.tokenFields,
  };
  printResult(io, json, () => {
    for (const line of template.text.replace(/\r?\n$/, '').split(/\r?\n/)) io.out(line);
    const required = template.tokenFields.filter((f) => f.required).map((f) => f.name);
    const optional = template.tokenFields.filter((f) => !f.required).map((f) => f.name);
    io.err('');
    io.err(`${template.name ?? template.key} token columns: ${required.join(', ') || 'none'} (required)${optional.length ? `; ${optional.join(', ')} (optional)` : ''}. Details: ferry integrations get ${template.key}`);
    if (template.migrationRoute === 'managed') {
      io.err(`${template.name} is a managed migration: the support team moves its tokens (ferry managed init), not ferry migrate tokens.`);
    } else {
      io.err(`One row per company, then: ferry migrate tokens FILE (companyName or companyId, platformKey, tags as k=v;k2=v2).`);
    }
  });
}
