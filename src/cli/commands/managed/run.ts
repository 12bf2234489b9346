// `ferry managed run`: walks through the next pending (or failed) step with prompts, and
// on to the following ones while the person wants to go on.
import type { Command } from 'commander';
import type { CommandContext } from '../../context.js';
import type { StepFlags } from '../../managed/runner.js';
import { examples, type Registrar } from '../../command.js';
import { managedGroup, addStepOptions } from '../../managed/options.js';

export type ManagedRunOptions = StepFlags;

export function register(program: Command, registrar: Registrar): void {
  addStepOptions(managedGroup(program)
    .command('run')
    .description('Walk through the next pending (or failed) step, asking for what it needs'))
    .addHelpText('after', `${examples(
      'ferry managed run',
      'ferry managed run --file acme/plan.json --by "Sam (support)"',
      'ferry managed run --no-input --confirm --date 2026-12-01 --contact "Jo <jo@acme.example>"   # one step, no prompts',
    )}
Every question has a flag; with --no-input (or CI, or no terminal) a missing answer is an
error that names it, and only the next step runs. --confirm answers the first step's
confirmation only: each later step is confirmed by a person.
`)
    .action(registrar.action(runManagedRun));
}

export async function runManagedRun(options: ManagedRunOptions, ctx: CommandContext): Promise<void> {
  const { io, signal } = ctx;
  const { runStep } = await import('../../managed/runner.js');
  const { pendingStep } = await import('../../../ops/managed/engine.js');
  const { printStatus } = await import('../../managed/print-status.js');
  const { STEP_ACTIONS } = await import('../../../ops/managed/view.js');
  const { planFlag } = await import('../../../ops/managed/plan.js');
  const say = (line: string) => {
    if (io.mode !== 'json') io.err(line);
  };
  let flags: StepFlags = { ...options };
  for (let first = true; ; first = false) {
    const { plan, planPath, step } = pendingStep(flags.file);
    if (!step) {
      if (first) printStatus(io, plan, planPath, planFlag(planPath, process.cwd(), plan));
      else say('All six steps are done.');
      return;
    }
    say('');
    say(`Step ${step.step} of 6: ${step.title}${step.state === 'failed' ? ' (failed before; trying again)' : ''}`);
    say(`  ${STEP_ACTIONS[step.step]}`);
    if (step.state === 'failed') say(`  Last time: ${step.notes}`);
    await runStep(step.step, flags, ctx, true);
    // --confirm (and a one-off --redo) answer for the first step only: a person confirms the rest.
    flags = { ...flags, confirm: false, redo: false };
    if (!io.canPrompt || step.step === 6) return;
    const { confirm } = await import('@inquirer/prompts');
    if (!(await confirm({ message: `Go on to step ${step.step + 1}?`, default: true }, { input: io.stdin, output: io.stderr, signal }))) {
      say('Stopped; ferry managed status shows where the plan is, ferry managed run goes on.');
      return;
    }
  }
}
