// `ferry managed status`: the six steps as a checklist, the next action and its command.
import type { Command } from 'commander';
import type { CommandContext } from '../../context.js';
import type { Registrar } from '../../program.js';
import { examples } from '../group.js';
import { managedGroup } from './init.js';
import { PLAN_FILE_HELP } from './options.js';

export interface ManagedStatusOptions {
  file?: string;
}

export function register(program: Command, registrar: Registrar): void {
  managedGroup(program)
    .command('status')
    .description('Show the six steps as a checklist, with the next action and the exact command for it')
    .option('--file <plan.json>', PLAN_FILE_HELP)
    .addHelpText('after', examples(
      'ferry managed status',
      'ferry managed status --file acme/plan.json --json | jq .next.command',
      'ferry managed status | awk -F\'\\t\' \'$1 == "step" && $4 != "done"\'   # piped: tab-separated',
    ))
    .action(registrar.action(runManagedStatus));
}

export async function runManagedStatus(options: ManagedStatusOptions, ctx: CommandContext): Promise<void> {
  const { planPathOf, planFlag, readPlan } = await import('../../../ops/managed/plan.js');
  const { printStatus } = await import('./print-status.js');
  const planPath = planPathOf(options.file);
  printStatus(ctx.io, readPlan(planPath), planPath, planFlag(planPath));
}
