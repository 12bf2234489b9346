// `ferry managed init`: starts a managed migration's plan file from templates/managed/plan.json.
import * as api from '../../../client/api.js';
import type { Command } from 'commander';
import type { CommandContext } from '../../context.js';
import { UsageError } from '../../errors.js';
import { examples, type Registrar } from '../../command.js';
import { managedGroup, PLAN_FILE_HELP } from '../../managed/options.js';
import type { PlanTarget } from '../../../ops/managed/plan.js';

export interface ManagedInitOptions {
  platform: string;
  name?: string;
  companies?: string;
  appClientId?: string;
  file?: string;
  force?: boolean;
}

export function register(program: Command, registrar: Registrar): void {
  managedGroup(program)
    .command('init')
    .description('Start a managed migration: write its plan file (the single source of truth for the six steps)')
    .requiredOption('--platform <key>', 'the platform to migrate from, e.g. qhyg (QuickBooks Online); see ferry integrations list --route managed')
    .option('--name <name>', "the client's name (default: looked up from the client id)")
    .option('--companies <file.csv>', 'the company CSV (companyName, externalId and the token columns); also step 1\'s --companies')
    .option('--app-client-id <id>', "the client id of the client's OAuth app at the platform; also step 1's --app-client-id")
    .option('--file <plan.json>', PLAN_FILE_HELP)
    .option('--force', 'replace an existing plan file')
    .addHelpText('after', `${examples(
      'ferry managed init --platform qhyg --client CLIENT_ID --name "Acme Accounting" --companies acme.csv',
      'ferry managed init --platform qhyg --client CLIENT_ID --name Acme --file acme/plan.json',
      'ferry managed status        # then follow the checklist',
    )}
--client ID (or FERRY_CLIENT_ID) names the client the migration is for; every later
command acts for it (X-Client-Id) with the support team's admin key.
`)
    .action(registrar.action(runManagedInit));
}

export async function runManagedInit(options: ManagedInitOptions, ctx: CommandContext): Promise<void> {
  const { io } = ctx;
  const { assertWritable } = await import('../../files.js');
  const { planPathOf, startPlan } = await import('../../../ops/managed/plan.js');
  const { printPlanStarted } = await import('../../managed/print-status.js');
  const { planTargetOf } = await import('../../managed/target.js');
  const clientId = (ctx.flags.client ?? io.env.FERRY_CLIENT_ID ?? '').trim();
  if (!clientId) throw new UsageError('Missing --client ID: the client the migration is for.', 'ferry admin clients list shows the ids.');
  const planPath = planPathOf(options.file);
  assertWritable(planPath, options.force ?? false);
  let name = options.name?.trim();
  if (!name) {
    const { client } = await ctx.connect();
    try {
      name = (await api.clientAccount(client, clientId, ctx.signal)).name;
    } catch (err) {
      throw Object.assign(err as Error, { hint: 'Give the client\'s name with --name (the lookup needs the admin key).' });
    }
  }
  if (options.companies) {
    const { existsSync } = await import('node:fs');
    if (!existsSync(options.companies)) io.err(`note: ${options.companies} does not exist yet; step 1 needs it.`);
  }
  const plan = startPlan(planPath, {
    client: { id: clientId, name }, platform: options.platform,
    ...(options.appClientId ? { appClientId: options.appClientId } : {}),
    ...(options.companies ? { companies: options.companies } : {}),
    ...withTarget(planTargetOf(ctx.flags, io.env)),
  });
  printPlanStarted(io, planPath, plan);
}

function withTarget(target: PlanTarget | undefined): { target?: PlanTarget } {
  return target ? { target } : {};
}
