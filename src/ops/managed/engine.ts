// Runs one step of a plan: rereads the plan, refuses steps out of order, says so when a
// step is already done, gathers the answers (asking where someone can answer), confirms,
// acts for the plan's client, records the outcome and saves. Asking, confirming and
// showing are the caller's (src/cli/managed/runner.ts).
import type { Connection } from '../../client/connection.js';
import { inputError, OpError } from '../errors.js';
import type { StartProgress } from '../progress.js';
import { planPathOf, readPlan, planFlag, planTargetFlag, stepCommand, stepOf, writePlan, type Plan, type PlanStep, type StepNumber } from './plan.js';
import { planCallbackUrl } from './step-callback.js';
import { confirmQuestion, missingInputs, type MissingInput, type StepEnv, type StepInputs, type StepResult } from './step-env.js';
import { STEPS } from './steps.js';
import { nextAction, shortTime } from './view.js';

export interface StepRequest {
  /** The plan file (default ./ferry-migration.json). */
  file?: string;
  inputs: StepInputs;
  /** The person said yes up front (--confirm). */
  confirmed: boolean;
  /** Do a done step again (steps 1 to 4, before the handover). */
  redo: boolean;
}

export interface StepHooks {
  signal: AbortSignal;
  log(line: string): void;
  progress: StartProgress;
  /** The service acting for the plan's client. */
  connectFor(plan: Plan): { connect(): Promise<Connection>; dispose(): Promise<void> };
  /** Asks a person for a missing answer; absent when no one can answer. */
  ask?: (missing: MissingInput) => Promise<string | string[]>;
  /** Asks a person to confirm; absent when no one can answer. */
  confirm?: (question: string, defaultYes: boolean) => Promise<boolean>;
  /** Says what to add for a missing answer when no one can be asked (e.g. no terminal). */
  noAskReason?: string;
}

export interface StepOutcome {
  plan: string;
  step: PlanStep;
  /** False when the step was already done and nothing was changed. */
  changed: boolean;
  details: Record<string, unknown>;
  next: ReturnType<typeof nextAction>;
}

/** The outcome to show, and the step's failure when it failed (shown after the outcome). */
export interface StepRun {
  outcome: StepOutcome;
  failure?: OpError;
}

export async function runPlanStep(n: StepNumber, request: StepRequest, hooks: StepHooks): Promise<StepRun> {
  const { log } = hooks;
  const planPath = planPathOf(request.file);
  const plan = readPlan(planPath);
  const flag = planFlag(planPath, process.cwd(), plan);
  const step = stepOf(plan, n);
  const outcome = (changed: boolean, details: Record<string, unknown> = {}): StepOutcome => ({ plan: planPath, step, changed, details, next: nextAction(plan, flag) });

  if (step.state === 'done' && !request.redo) {
    log(`Step ${n} (${step.title}) is already done${step.at ? ` (${shortTime(step.at)}${step.by ? ` by ${step.by}` : ''})` : ''}: nothing changed.`);
    return { outcome: outcome(false) };
  }
  if (request.redo && step.state === 'done') {
    if (n > 4) throw inputError(`Step ${n} cannot be redone: it moved real companies.`, 'Rerun a failed step 5 or 6 as it is; it resumes and checks again.');
    if (stepOf(plan, 6).state === 'done') throw inputError('The migration is handed over (step 6 is done): its earlier steps stay as they are.');
  }
  const before = plan.steps.find((s) => s.step < n && s.state !== 'done');
  if (before) {
    throw inputError(`Step ${n} comes after step ${before.step} (${before.title}), which is ${before.state}.`, `Do step ${before.step} first: ${stepCommand(plan, before, flag)}`);
  }

  const { inputs } = request;
  const missing = missingInputs(n, plan, inputs);
  if (missing.length > 0 && !hooks.ask) {
    const flags = missing.map((m) => m.flag).join(', ');
    throw inputError(`Step ${n} needs ${flags}.`, `Give ${flags}${hooks.noAskReason ?? ''}: ${stepCommand(plan, step, flag)}`);
  }
  for (const m of missing) m.set(inputs, await hooks.ask!(m));

  const connection = hooks.connectFor(plan);
  try {
    let recorded = false;
    const record = (state: 'done' | 'failed', notes: string, hint?: string) => {
      recorded = true;
      step.state = state;
      step.at = new Date().toISOString();
      step.by = inputs.by;
      step.notes = inputs.notes ? `${notes} (${inputs.notes})` : notes;
      if (state === 'failed' && hint) step.hint = hint;
      else delete step.hint;
    };
    const env: StepEnv = {
      signal: hooks.signal, planPath, plan, log, record, progress: hooks.progress,
      save: () => writePlan(planPath, plan),
      connection: () => connection.connect(),
      command: (words) => ['ferry', words, words.startsWith('managed ') ? flag : planTargetFlag(planPath, plan)].filter(Boolean).join(' '),
    };
    if (!request.confirmed) {
      const question = confirmQuestion(n, plan, n === 3 ? await planCallbackUrl(env) : undefined);
      if (!hooks.confirm) {
        throw inputError(`Step ${n} needs --confirm. ${question}`, `Add --confirm to say yes: ${stepCommand(plan, step, flag)}`);
      }
      if (!(await hooks.confirm(question, n !== 4))) {
        throw inputError(`Step ${n} not confirmed: nothing changed.`, n === 4 ? 'Confirm once the client has disabled syncing for every company.' : undefined);
      }
    }

    log(`Step ${n}: ${step.title}…`);
    const result: StepResult = await STEPS[n](env, inputs);
    if (!recorded) record(result.state, result.notes, result.hint);
    else if (result.hint && step.state === 'failed') step.hint = result.hint;
    writePlan(planPath, plan);
    const done = outcome(true, result.details);
    if (result.state === 'failed') {
      return { outcome: done, failure: new OpError(`Step ${n} failed: ${result.notes}`, result.partial ? 'partial' : 'failed', result.hint) };
    }
    return { outcome: done };
  } finally {
    await connection.dispose();
  }
}

/** The plan's next step that is not done, or undefined. */
export function pendingStep(file: string | undefined): { plan: Plan; planPath: string; step: PlanStep | undefined } {
  const planPath = planPathOf(file);
  const plan = readPlan(planPath);
  return { plan, planPath, step: plan.steps.find((s) => s.state !== 'done') };
}
