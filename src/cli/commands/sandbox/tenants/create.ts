// `ferry sandbox tenants create`: emulated organisations on a platform, and a CSV of their
// fresh tokens that `ferry migrate tokens` takes as it is. Any number up to MAX_TENANTS,
// made in calls the sandbox accepts (cli/sandbox/tenants-file.ts).
import { wholeNumber } from '../../../flags.js';
import * as api from '../../../../client/api.js';
import type { Command } from 'commander';
import type { CommandContext } from '../../../context.js';
import { assertWritable } from '../../../files.js';
import { MAX_TENANTS, TENANTS_PER_CALL } from '../../../../ops/sandbox/engine.js';
import { formatCount } from '../../../../ops/progress.js';
import { examples, group, type Registrar } from '../../../command.js';

export interface TenantsCreateOptions {
  platform: string;
  count: number;
  invoices?: number;
  seed?: number;
  out: string;
  force?: boolean;
}

export function register(program: Command, registrar: Registrar): void {
  group(group(program, 'sandbox', 'The emulated third-party platforms (admin key)'), 'tenants', 'Emulated organisations and their tokens')
    .command('create')
    .description('Create sandbox tenants and write a ready-to-migrate CSV of their tokens')
    .requiredOption('--platform <key>', 'integration key, e.g. gbol (Xero); see ferry integrations list')
    .option('--count <n>', `how many tenants, 1-${formatCount(MAX_TENANTS)} (made ${formatCount(TENANTS_PER_CALL)} per call to the sandbox)`, wholeNumber('--count', 1, MAX_TENANTS), 1)
    .option('--invoices <n>', 'invoices per tenant (default 100, up to 10,000,000)', wholeNumber('--invoices', 0))
    .option('--seed <n>', 'seed of the first tenant; tenant k gets seed+k (the same seed gives the same data)', wholeNumber('--seed', 0, 2 ** 32 - 1))
    .option('--out <file>', 'CSV to write (mode 0600: it holds tokens); appears only once complete', 'tokens.csv')
    .option('--force', 'replace --out if it exists (the old file stays until the new one is complete)')
    .addHelpText('after', examples(
      'ferry sandbox tenants create --platform gbol --count 50 --out tokens.csv',
      'ferry sandbox tenants create --platform gbol --count 2500 --invoices 10 --out tokens.csv --force',
      'ferry sandbox tenants create --platform gbol --count 1 --invoices 200000 --out big.csv',
      'ferry migrate tokens tokens.csv        # then migrate them',
    ))
    .action(registrar.action(runTenantsCreate));
}

export async function runTenantsCreate(options: TenantsCreateOptions, ctx: CommandContext): Promise<void> {
  assertWritable(options.out, options.force ?? false);
  const connection = await ctx.connect();
  const integration = await api.integration(connection.client, options.platform);
  const { sandboxApi } = await import('../../../../client/sandbox-api.js');
  const { writeTenantsFile, printTenantsFile } = await import('../../../sandbox/tenants-file.js');
  const target = (await import('../../../command-line.js')).targetArgs(ctx.flags);
  const made = await writeTenantsFile(ctx.io, ctx.signal, await sandboxApi(connection), integration, { ...options, target });
  printTenantsFile(ctx.io, integration, made, target);
}
