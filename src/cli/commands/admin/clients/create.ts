// `ferry admin clients create`: a new client account; its API key goes to stdout, once.
import { ferryCommand, targetArgs } from '../../../command-line.js';
import { printResult } from '../../../io.js';
import * as api from '../../../../client/api.js';
import { Option, type Command } from 'commander';
import type { CommandContext } from '../../../context.js';
import { UsageError } from '../../../errors.js';
import { examples, group, type Registrar } from '../../../command.js';

export interface ClientsCreateOptions {
  name: string;
  plan: 'Free' | 'Paid';
  created?: string;
}

export function register(program: Command, registrar: Registrar): void {
  group(group(program, 'admin', 'Accounts and API keys (admin key only)'), 'clients', 'Client accounts')
    .command('create')
    .description('Create a client account and print its API key (shown once)')
    .requiredOption('--name <name>', 'account name')
    .addOption(new Option('--plan <plan>', 'plan').choices(['Free', 'Paid']).makeOptionMandatory())
    .option('--created <date>', 'backdate the account (ISO 8601), e.g. to try the Free plan expiry')
    .addHelpText('after', examples(
      'ferry admin clients create --name "Acme Accounting" --plan Paid',
      'KEY=$(ferry admin clients create --name Trial --plan Free)   # stdout is the key alone',
      'ferry admin clients create --name Acme --plan Free --json     # {"id":…,"apiKey":…}',
    ))
    .action(registrar.action(runClientsCreate));
}

export async function runClientsCreate(options: ClientsCreateOptions, ctx: CommandContext): Promise<void> {
  if (options.created !== undefined && Number.isNaN(Date.parse(options.created))) {
    throw new UsageError(`--created ${options.created} is not a date.`, 'Use ISO 8601, e.g. --created 2025-01-31');
  }
  const { client } = await ctx.connect();
  const body: { name: string; plan: string; created?: string } = { name: options.name, plan: options.plan };
  if (options.created) body.created = options.created;
  const created = await api.createClientAccount(client, body);
  const { io } = ctx;
  printResult(io, created, () => {
    io.err(`Created client ${created.name} (${created.plan}), id ${created.id}. Its API key, shown only this once:`);
    io.out(created.apiKey);
    io.err(`Keep it in a file (mode 0600) and give --api-key-file with the file's path; as admin, act for the client with: ${ferryCommand(['--client', created.id, 'companies', 'list'], targetArgs(ctx.flags))}`);
  });
}
