// `ferry managed step N --confirm [flags]`: does one step without prompts (CI).
import type { Command } from 'commander';
import type { CommandContext } from '../../context.js';
import type { StepFlags } from '../../managed/runner.js';
import { examples, type Registrar } from '../../command.js';
import { managedGroup, addStepOptions } from '../../managed/options.js';

export type ManagedStepOptions = StepFlags;

export function register(program: Command, registrar: Registrar): void {
  addStepOptions(managedGroup(program)
    .command('step')
    .description('Do one step of the plan without prompts (every answer is a flag; --confirm says yes)')
    .argument('<n>', 'the step, 1 to 6'))
    .addHelpText('after', `${examples(
      'ferry managed step 1 --confirm --platform qhyg --app-client-id ABC123 --companies acme.csv',
      'ferry managed step 2 --confirm --date 2026-12-01 --contact "Jo Bloggs <jo@acme.example>"',
      'ferry managed step 4 --confirm --by "Sam (support)"   # the client disabled syncing',
    )}
Steps: 1 platform details · 2 schedule · 3 callback URL · 4 syncing disabled ·
5 pilot (one company, end-to-end check) · 6 the rest, checks and the handover report.
A done step run again says so and changes nothing. Exit codes: 0 done · 1 the step
failed (the plan says why) · 2 a missing flag or a step out of order · 3 step 6: some
companies failed the check.
`)
    .action(registrar.action(runManagedStep));
}

export async function runManagedStep(options: ManagedStepOptions, ctx: CommandContext, [n]: string[]): Promise<void> {
  const { parseStepNumber, runStep } = await import('../../managed/runner.js');
  await runStep(parseStepNumber(n!), options, ctx, false);
}
