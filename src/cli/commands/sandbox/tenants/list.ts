// `ferry sandbox tenants list`: the emulated organisations (never their tokens).
import type { Command } from 'commander';
import type { CommandContext } from '../../../context.js';
import { printList } from '../../../output.js';
import { examples, group, type Registrar } from '../../../command.js';

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
  const { sandboxApi } = await import('../../../../client/sandbox-api.js');
  const sandbox = await sandboxApi(await ctx.connect());
  const results = await sandbox.tenants(options.platform);
  printList(ctx.io, results, [
    { header: 'id', value: (t) => t.id },
    { header: 'platform', value: (t) => t.platform },
    { header: 'invoices', value: (t) => t.invoices },
    { header: 'created', value: (t) => t.created },
    { header: 'name', value: (t) => t.name },
  ]);
}
