// `ferry managed status`: the six steps as a checklist, the next action and its command;
// with --watch it follows the plan while steps 5 and 6 run elsewhere (cli/managed/watch-status.ts).
import type { Command } from 'commander';
import type { CommandContext } from '../../context.js';
import { examples, type Registrar } from '../../command.js';
import { managedGroup, PLAN_FILE_HELP } from '../../managed/options.js';

export interface ManagedStatusOptions {
  file?: string;
  watch?: boolean;
}

export function register(program: Command, registrar: Registrar): void {
  managedGroup(program)
    .command('status')
    .description('Show the six steps as a checklist, with the next action and the exact command for it')
    .option('--file <plan.json>', PLAN_FILE_HELP)
    .option('--watch', 'follow the plan until step 6 is done: redrawn in place on a terminal; piped, a line per change (--json: a document per change)')
    .addHelpText('after', examples(
      'ferry managed status',
      'ferry managed status --watch --file acme/plan.json   # while step 6 runs in another terminal',
      'ferry managed status --file acme/plan.json --json | jq .next.command',
      'ferry managed status | awk -F\'\\t\' \'$1 == "step" && $4 != "done"\'   # piped: tab-separated',
    ))
    .action(registrar.action(runManagedStatus));
}

export async function runManagedStatus(options: ManagedStatusOptions, ctx: CommandContext): Promise<void> {
  const { planPathOf, planFlag, readPlan } = await import('../../../ops/managed/plan.js');
  const { printStatus } = await import('../../managed/print-status.js');
  const planPath = planPathOf(options.file);
  if (options.watch) {
    const { watchStatus } = await import('../../managed/watch-status.js');
    await watchStatus(ctx.io, planPath, planFlag(planPath, process.cwd(), readPlan(planPath)), ctx.signal, { read: () => readPlan(planPath) });
    return;
  }
  const plan = readPlan(planPath);
  printStatus(ctx.io, plan, planPath, planFlag(planPath, process.cwd(), plan));
}
