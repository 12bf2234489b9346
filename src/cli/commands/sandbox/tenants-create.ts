// `ferry sandbox tenants create`: emulated organisations on a platform, and a CSV of their
// fresh tokens that `ferry migrate tokens` takes as it is.
import { wholeNumber } from '../../flags.js';
import { printResult } from '../../io.js';
import * as api from '../../../client/api.js';
import type { Command } from 'commander';
import type { CommandContext } from '../../context.js';
import { assertWritable, writeFileAtomic } from '../../files.js';
import type { Registrar } from '../../program.js';
import { examples, group } from '../group.js';

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
    .option('--count <n>', 'how many tenants (1-1000)', wholeNumber('--count', 1), 1)
    .option('--invoices <n>', 'invoices per tenant (default 100, up to 10,000,000)', wholeNumber('--invoices', 0))
    .option('--seed <n>', 'seed of the first tenant (the same seed gives the same data)', wholeNumber('--seed', 0))
    .option('--out <file>', 'CSV to write (mode 0600: it holds tokens)', 'tokens.csv')
    .option('--force', 'replace --out if it exists')
    .addHelpText('after', examples(
      'ferry sandbox tenants create --platform gbol --count 50 --out tokens.csv',
      'ferry sandbox tenants create --platform gbol --count 1 --invoices 200000 --out big.csv',
      'ferry migrate tokens tokens.csv        # then migrate them',
    ))
    .action(registrar.action(runTenantsCreate));
}

export async function runTenantsCreate(options: TenantsCreateOptions, ctx: CommandContext): Promise<void> {
  assertWritable(options.out, options.force ?? false);
  const connection = await ctx.connect();
  const integration = await api.integration(connection.client, options.platform);
  const { sandboxApi } = await import('../../../client/sandbox-api.js');
  const sandbox = await sandboxApi(connection);
  const body: Parameters<typeof sandbox.createTenants>[0] = { platform: integration.key, count: options.count };
  if (options.invoices !== undefined) body.invoices = options.invoices;
  if (options.seed !== undefined) body.seed = options.seed;
  const results = await sandbox.createTenants(body);

  const { stringify } = await import('csv-stringify/sync');
  const tokenColumns = integration.tokenFields.map((f) => f.name);
  const rows = results.map((t) => [t.name, t.id, integration.key, ...tokenColumns.map((c) => t.tokens[c] ?? '')]);
  const csv = stringify([['companyName', 'externalId', 'platformKey', ...tokenColumns], ...rows]);
  writeFileAtomic(options.out, csv, { mode: 0o600, overwrite: options.force ?? false });

  const { io } = ctx;
  printResult(io, { platform: integration.key, out: options.out, tenants: results.map(({ id, name, invoices }) => ({ id, name, invoices })) }, () => {
    io.err(`Created ${results.length} ${integration.name} sandbox tenant${results.length === 1 ? '' : 's'} (${results[0]?.invoices ?? 0} invoices each).`);
    io.out(options.out);
    io.err(`Tokens written to ${options.out} (mode 0600). Next: ferry migrate tokens ${options.out}`);
  });
}
