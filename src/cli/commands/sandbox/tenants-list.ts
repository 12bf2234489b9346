// `ferry sandbox tenants list`: the emulated organisations (never their tokens).
import type { Command } from 'commander';
import type { CommandContext } from '../../context.js';
import { printTable } from '../../output.js';
import type { Registrar } from '../../program.js';
import { examples, group } from '../group.js';

interface Tenant {
  id: string;
  platform: string;
  name: string;
  invoices: number;
  created: string;
}

export function register(program: Command, registrar: Registrar): void {
  group(group(program, 'sandbox', 'The emulated third-party platforms (admin key)'), 'tenants', 'Emulated organisations and their tokens')
    .command('list')
    .description('List sandbox tenants')
    .option('--platform <key>', 'only this platform')
    .addHelpText('after', examples(
      'ferry sandbox tenants list --platform gbol',
      "ferry sandbox tenants list --json | jq -r '.[] | select(.invoices > 1000) | .id'",
    ))
    .action(registrar.action(runTenantsList));
}

export async function runTenantsList(options: { platform?: string }, ctx: CommandContext): Promise<void> {
  const { sandboxApi } = await import('../../../client/sandbox-api.js');
  const sandbox = await sandboxApi(await ctx.connect());
  const query = options.platform ? `?platform=${encodeURIComponent(options.platform)}` : '';
  const { results } = await sandbox.get<{ results: Tenant[] }>(`/admin/tenants${query}`);
  if (ctx.io.mode === 'json') {
    ctx.io.json(results);
    return;
  }
  printTable(ctx.io, results, [
    { header: 'id', value: (t) => t.id },
    { header: 'platform', value: (t) => t.platform },
    { header: 'invoices', value: (t) => t.invoices },
    { header: 'created', value: (t) => t.created },
    { header: 'name', value: (t) => t.name },
  ]);
}
