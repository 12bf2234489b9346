// `ferry companies delete ID [--yes]`: removes a company with its connections, data and
// tokens. Asks on a terminal; anywhere else --yes is required.
import { printResult } from '../../io.js';
import * as api from '../../../client/api.js';
import type { Command } from 'commander';
import type { CommandContext } from '../../context.js';
import { confirmOrYes } from '../../prompt.js';
import { examples, group, type Registrar } from '../../command.js';

export interface CompaniesDeleteOptions {
  yes?: boolean;
}

export function register(program: Command, registrar: Registrar): void {
  group(program, 'companies', 'Companies: create, list, show, delete')
    .command('delete')
    .description('Delete a company with its connections, data and stored tokens')
    .argument('<companyId>', 'the company id')
    .option('--yes', 'do not ask (required without a terminal)')
    .addHelpText('after', examples(
      'ferry companies delete COMPANY_ID            # asks first',
      'ferry companies delete COMPANY_ID --yes      # scripts and CI',
    ))
    .action(registrar.action(runCompaniesDelete));
}

export async function runCompaniesDelete(options: CompaniesDeleteOptions, ctx: CommandContext, [companyId]: string[]): Promise<void> {
  const { io } = ctx;
  let label = `company ${companyId}`;
  if (!options.yes) {
    // Refuse before any request when no one can answer; otherwise name what is at stake.
    if (!io.canPrompt) await confirmOrYes(io, false, `Delete ${label}?`);
    const { client } = await ctx.connect();
    const company = await api.company(client, companyId!, ctx.signal);
    const n = company.dataConnections?.length ?? 0;
    label = `company ${company.name} (${company.id})`;
    await confirmOrYes(io, false, `Delete ${label} with its ${n} connection${n === 1 ? '' : 's'}, their data and tokens?`, ctx.signal);
  }
  const { client } = await ctx.connect();
  await api.deleteCompany(client, companyId!, ctx.signal);
  printResult(io, { id: companyId, deleted: true }, () => io.err(`Deleted ${label}.`));
}
