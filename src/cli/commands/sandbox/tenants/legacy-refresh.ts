// `ferry sandbox tenants legacy-refresh`: the client's old application refreshes a tenant's
// token — what happens when syncing was not disabled there before a migration.
import { printResult } from '../../../io.js';
import type { Command } from 'commander';
import type { CommandContext } from '../../../context.js';
import { examples, group, type Registrar } from '../../../command.js';

const OUTCOMES: Record<string, string> = {
  'grant-revoked': 'the old refresh token had been rotated away, so its reuse revoked the grant: the migrated connection now needs reauthorization',
  rotated: 'the legacy application rotated the tokens away from the service: the next sync fails with reauthorization required',
  rejected: 'the platform rejected the legacy refresh (the grant was already gone)',
};

export function register(program: Command, registrar: Registrar): void {
  group(group(program, 'sandbox', 'The emulated third-party platforms (admin key)'), 'tenants', 'Emulated organisations and their tokens')
    .command('legacy-refresh')
    .description("Simulate the client's old application refreshing a tenant's token")
    .argument('<tenantId>', 'the tenant (the externalId column of the tokens CSV)')
    .addHelpText('after', examples(
      'ferry sandbox tenants legacy-refresh TENANT_ID',
      'ferry check COMPANY_ID     # then the end-to-end check of the migrated company fails',
      'ferry sandbox tenants legacy-refresh TENANT_ID --json',
    ))
    .action(registrar.action(runLegacyRefresh));
}

export async function runLegacyRefresh(_options: object, ctx: CommandContext, [tenantId]: string[]): Promise<void> {
  const { sandboxApi } = await import('../../../../client/sandbox-api.js');
  const sandbox = await sandboxApi(await ctx.connect());
  const result = await sandbox.legacyRefresh(tenantId!);
  printResult(ctx.io, result, () => ctx.io.out(`${result.outcome}\t${OUTCOMES[result.outcome] ?? ''}`));
}
