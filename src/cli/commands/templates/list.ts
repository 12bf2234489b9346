// `ferry templates list`: the bulk-migration CSV templates shipped with ferry, one per
// integration. Static files: no service is started.
import { printResult } from '../../io.js';
import type { Command } from 'commander';
import type { CommandContext } from '../../context.js';
import { CliError } from '../../errors.js';
import { printTable } from '../../output.js';
import { examples, group, type Registrar } from '../../command.js';

export function register(program: Command, registrar: Registrar): void {
  group(program, 'templates', 'Migration CSV templates (static files, no service needed)')
    .command('list')
    .description('List the migration CSV templates and their integrations')
    .addHelpText('after', examples(
      'ferry templates list',
      'ferry templates list --json | jq -r \'.[] | select(.migrationRoute=="self-service") | .key\'',
      'ferry templates show gbol > tokens.csv',
    ))
    .action(registrar.action(runTemplatesList));
}

export async function runTemplatesList(_options: object, ctx: CommandContext): Promise<void> {
  const { listTemplates, TEMPLATES_DIR } = await import('../../templates/catalogue.js');
  const templates = await listTemplates();
  if (templates.length === 0) throw new CliError(`No migration templates found in ${TEMPLATES_DIR}.`, undefined, 'Reinstall ferry, or run npm run templates in a checkout.');
  const { io } = ctx;
  const json = templates.map((t) => ({
    key: t.key, name: t.name, migrationRoute: t.migrationRoute, file: t.file, columns: t.header, tokenFields: t.tokenFields,
  }));
  printResult(io, json, () => {
    printTable(io, templates, [
      { header: 'key', value: (t) => t.key },
      { header: 'name', value: (t) => t.name },
      { header: 'route', value: (t) => t.migrationRoute },
      { header: 'token fields', value: (t) => t.tokenFields.map((f) => f.name).join(',') },
    ]);
    if (io.mode === 'tty') io.err(`\n${templates.length} templates in ${TEMPLATES_DIR}. Show one with: ferry templates show KEY`);
  });
}
