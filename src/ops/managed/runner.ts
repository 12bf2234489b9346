// Runs one step of a plan for `ferry managed step N` (no prompts: every answer is a flag,
// --confirm says yes) and `ferry managed run` (prompts where a person can answer):
// rereads the plan, refuses steps out of order, says so when a step is already done,
// gathers the answers, acts for the plan's client, records the outcome and saves.
import { createContext, type CommandContext, type Connection } from '../../cli/context.js';
import { CliError, EXIT, UsageError } from '../../cli/errors.js';
import { logTo } from '../../cli/waiting.js';
import {
  planFlag, planPathOf, readPlan, stepCommand, stepOf, writePlan, STEP_NUMBERS,
  type Plan, type PlanStep, type StepNumber,
} from './plan.js';
import { confirmQuestion, missingInputs, planCallbackUrl, STEPS, type StepEnv, type StepInputs, type StepResult } from './steps.js';
import { nextAction, shortTime } from './view.js';

export interface StepFlags {
  file?: string;
  confirm?: boolean;
  by?: string;
  notes?: string;
  platform?: string;
  appClientId?: string;
  companies?: string;
  pilot?: string;
  date?: string;
  contact?: string[];
  concurrency?: number;
  /** Milliseconds per company's check. */
  timeout?: number;
  pollMs?: number;
  redo?: boolean;
  /** Step 6: report directory. */
  out?: string;
}

export interface StepOutcome {
  plan: string;
  step: PlanStep;
  /** False when the step was already done and nothing was changed. */
  changed: boolean;
  details: Record<string, unknown>;
  next: ReturnType<typeof nextAction>;
}

export const DEFAULT_CONCURRENCY = 8;
export const DEFAULT_CHECK_TIMEOUT_MS = 10 * 60_000;

/**
 * The service acting for the plan's client: X-Client-Id is --client / FERRY_CLIENT_ID when
 * given (it must be the plan's), or else the plan's client id.
 */
export function clientConnection(ctx: CommandContext, plan: Plan): { connect(): Promise<Connection>; dispose(): Promise<void> } {
  const given = ctx.flags.client ?? ctx.io.env.FERRY_CLIENT_ID;
  if (given && plan.client.id && given !== plan.client.id) {
    throw new UsageError(`--client ${given} is not this plan's client (${plan.client.id}).`, 'Drop --client (and FERRY_CLIENT_ID): ferry managed acts for the plan\'s client by itself.');
  }
  if (given || !plan.client.id) return { connect: () => ctx.connect(), dispose: async () => {} };
  const scoped = createContext(ctx.io, { ...ctx.flags, client: plan.client.id }, ctx.signal);
  return { connect: () => scoped.connect(), dispose: () => scoped.dispose() };
}

export function whoConfirms(flags: StepFlags, env: NodeJS.ProcessEnv): string {
  return (flags.by ?? env.USER ?? env.USERNAME ?? env.LOGNAME ?? 'unknown').trim() || 'unknown';
}

function inputsOf(flags: StepFlags, env: NodeJS.ProcessEnv): StepInputs {
  const inputs: StepInputs = {
    by: whoConfirms(flags, env),
    concurrency: flags.concurrency ?? DEFAULT_CONCURRENCY,
    timeoutMs: flags.timeout ?? DEFAULT_CHECK_TIMEOUT_MS,
  };
  if (flags.platform !== undefined) inputs.platform = flags.platform;
  if (flags.appClientId !== undefined) inputs.appClientId = flags.appClientId;
  if (flags.companies !== undefined) inputs.companies = flags.companies;
  if (flags.pilot !== undefined) inputs.pilot = flags.pilot;
  if (flags.date !== undefined) inputs.date = flags.date;
  if (flags.contact !== undefined) inputs.contacts = flags.contact;
  if (flags.notes !== undefined) inputs.notes = flags.notes;
  if (flags.pollMs !== undefined) inputs.pollMs = flags.pollMs;
  if (flags.out !== undefined) inputs.reportDir = flags.out;
  return inputs;
}

export function parseStepNumber(text: string): StepNumber {
  const n = Number(text);
  if (!STEP_NUMBERS.includes(n as StepNumber)) throw new UsageError(`${text} is not a step: the steps are 1 to 6.`, 'ferry managed status lists them.');
  return n as StepNumber;
}

/** Runs step `n`. `prompt`: ask for missing answers and the confirmation where a person can answer. */
export async function runPlanStep(n: StepNumber, flags: StepFlags, ctx: CommandContext, prompt: boolean): Promise<StepOutcome> {
  const { io, signal } = ctx;
  const log = logTo(io);
  const planPath = planPathOf(flags.file);
  const flag = planFlag(planPath);
  const plan = readPlan(planPath);
  const step = stepOf(plan, n);
  const outcome = (changed: boolean, details: Record<string, unknown> = {}): StepOutcome => ({ plan: planPath, step, changed, details, next: nextAction(plan, flag) });

  if (step.state === 'done' && !flags.redo) {
    log(`Step ${n} (${step.title}) is already done${step.at ? ` (${shortTime(step.at)}${step.by ? ` by ${step.by}` : ''})` : ''}: nothing changed.`);
    const unchanged = outcome(false);
    await printOutcome(ctx, unchanged);
    return unchanged;
  }
  if (flags.redo && step.state === 'done') {
    if (n > 4) throw new UsageError(`Step ${n} cannot be redone: it moved real companies.`, 'Rerun a failed step 5 or 6 as it is; it resumes and checks again.');
    if (stepOf(plan, 6).state === 'done') throw new UsageError('The migration is handed over (step 6 is done): its earlier steps stay as they are.');
  }
  const before = plan.steps.find((s) => s.step < n && s.state !== 'done');
  if (before) {
    throw new UsageError(`Step ${n} comes after step ${before.step} (${before.title}), which is ${before.state}.`, `Do step ${before.step} first: ${stepCommand(plan, before, flag)}`);
  }

  const inputs = inputsOf(flags, io.env);
  const missing = missingInputs(n, plan, inputs);
  const canAsk = prompt && io.canPrompt;
  if (missing.length > 0 && !canAsk) {
    const flags = missing.map((m) => m.flag).join(', ');
    throw new UsageError(`Step ${n} needs ${flags}.`, `Give ${flags}${prompt ? ' (no prompt without a terminal, or with --no-input/CI)' : ''}: ${stepCommand(plan, step, flag)}`);
  }
  const { ask } = await import('../../cli/prompt.js');
  for (const m of missing) {
    if (m.kind === 'contacts') {
      const contacts: string[] = [];
      for (;;) {
        const answer = (await ask(io, { flag: m.flag, message: contacts.length ? 'Another contact (Name <email>), empty to finish' : `${m.message}` }, signal)).trim();
        if (answer === '') {
          if (contacts.length > 0) break;
          continue;
        }
        contacts.push(answer);
      }
      m.set(inputs, contacts);
    } else {
      let answer = '';
      while (answer === '') answer = (await ask(io, { flag: m.flag, message: m.message }, signal)).trim();
      m.set(inputs, answer);
    }
  }

  const connection = clientConnection(ctx, plan);
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
      io, signal, planPath, plan, log, record,
      save: () => writePlan(planPath, plan),
      connection: () => connection.connect(),
    };
    if (!flags.confirm) {
      const question = confirmQuestion(n, plan, n === 3 ? await planCallbackUrl(env) : undefined);
      if (!canAsk) {
        throw new UsageError(`Step ${n} needs --confirm. ${question}`, `Add --confirm to say yes: ${stepCommand(plan, step, flag)}`);
      }
      const { confirm } = await import('@inquirer/prompts');
      const yes = await confirm({ message: question, default: n !== 4 }, { input: io.stdin, output: io.stderr, signal });
      if (!yes) throw new UsageError(`Step ${n} not confirmed: nothing changed.`, n === 4 ? 'Confirm once the client has disabled syncing for every company.' : undefined);
    }

    log(`Step ${n}: ${step.title}…`);
    const result: StepResult = await STEPS[n](env, inputs);
    if (!recorded) record(result.state, result.notes, result.hint);
    else if (result.hint && step.state === 'failed') step.hint = result.hint;
    writePlan(planPath, plan);
    const done = outcome(true, result.details);
    await printOutcome(ctx, done);
    if (result.state === 'failed') {
      throw new CliError(`Step ${n} failed: ${result.notes}`, result.exitCode ?? EXIT.error, result.hint);
    }
    return done;
  } finally {
    await connection.dispose();
  }
}

export async function printOutcome(ctx: CommandContext, result: StepOutcome): Promise<void> {
  const { io } = ctx;
  const { step, next } = result;
  if (io.mode === 'json') {
    io.json(result);
    return;
  }
  const { printRecord } = await import('../../cli/output.js');
  printRecord(io, result, [
    ['step', step.step], ['title', step.title], ['state', step.state], ['at', step.at], ['by', step.by], ['notes', step.notes],
    ['next', next ? next.command : 'all six steps are done'],
  ]);
  if (step.state === 'done' && result.changed) {
    io.err(`Step ${step.step} done.${next ? ` Next: step ${next.step}, ${next.title.charAt(0).toLowerCase()}${next.title.slice(1)}: ${next.command}` : ' The migration is handed over.'}`);
  }
}

/** The plan's next step that is not done, or undefined. */
export function pendingStep(flags: StepFlags): { plan: Plan; planPath: string; step: PlanStep | undefined } {
  const planPath = planPathOf(flags.file);
  const plan = readPlan(planPath);
  return { plan, planPath, step: plan.steps.find((s) => s.state !== 'done') };
}
