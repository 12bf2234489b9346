// The command line's side of a managed step, shared by `ferry managed step N` (no
// prompts: every answer is a flag, --confirm says yes) and `ferry managed run` (prompts
// where a person can answer): flags become the step's inputs, prompts answer its
// questions, and its outcome is printed. The step itself is ops/managed/engine.ts.
import { printResult } from '../io.js';
import { createContext, type CommandContext } from '../context.js';
import { UsageError } from '../errors.js';
import { logTo } from '../waiting.js';
import { eventsWanted } from '../event-waits.js';
import { limitFlags } from '../flags.js';
import { STEP_NUMBERS, planPathOf, type Plan, type StepNumber } from '../../ops/managed/plan.js';
import { checkPlanTarget } from './target.js';
import type { StepOutcome } from '../../ops/managed/engine.js';
import type { StepInputs } from '../../ops/managed/step-env.js';

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
  maxRate?: number;
  /** Milliseconds per company's check. */
  timeout?: number;
  pollMs?: number;
  redo?: boolean;
  /** Step 6: report directory. */
  out?: string;
  /** false with --no-events. */
  events?: boolean;
}

export const DEFAULT_CHECK_TIMEOUT_MS = 10 * 60_000;

/**
 * The service acting for the plan's client: X-Client-Id is --client / FERRY_CLIENT_ID when
 * given (it must be the plan's), or else the plan's client id.
 */
function clientConnection(ctx: CommandContext, plan: Plan, planPath: string) {
  checkPlanTarget(plan, planPath, ctx.flags, ctx.io.env);
  const given = ctx.flags.client ?? ctx.io.env.FERRY_CLIENT_ID;
  if (given && plan.client.id && given !== plan.client.id) {
    throw new UsageError(`--client ${given} is not this plan's client (${plan.client.id}).`, 'Drop --client (and FERRY_CLIENT_ID): ferry managed acts for the plan\'s client by itself.');
  }
  if (given || !plan.client.id) return { connect: () => ctx.connect(), dispose: async () => {} };
  const scoped = createContext(ctx.io, { ...ctx.flags, client: plan.client.id }, ctx.signal);
  return { connect: () => scoped.connect(), dispose: () => scoped.dispose() };
}

/** --by, else FERRY_USER; '' when neither: the step asks for it, or refuses naming both (the report never says "unknown"). */
export function whoConfirms(flags: StepFlags, env: NodeJS.ProcessEnv): string {
  return (flags.by ?? env.FERRY_USER ?? '').trim();
}

function inputsOf(flags: StepFlags, env: NodeJS.ProcessEnv): StepInputs {
  const inputs: StepInputs = {
    by: whoConfirms(flags, env),
    ...limitFlags(flags),
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
  if (!eventsWanted(flags, env)) inputs.events = false;
  return inputs;
}

export function parseStepNumber(text: string): StepNumber {
  const n = Number(text);
  if (!STEP_NUMBERS.includes(n as StepNumber)) throw new UsageError(`${text} is not a step: the steps are 1 to 6.`, 'ferry managed status lists them.');
  return n as StepNumber;
}

/** Runs step `n` and prints its outcome. `prompt`: ask for missing answers and the confirmation where a person can answer. */
export async function runStep(n: StepNumber, flags: StepFlags, ctx: CommandContext, prompt: boolean): Promise<StepOutcome> {
  const { io, signal } = ctx;
  const canAsk = prompt && io.canPrompt;
  const { runPlanStep } = await import('../../ops/managed/engine.js');
  const { startProgress } = await import('../progress.js');
  const { ask } = await import('../prompt.js');
  const askLine = async (flag: string, message: string) => (await ask(io, { flag, message }, signal)).trim();
  const run = await runPlanStep(n, { ...(flags.file !== undefined ? { file: flags.file } : {}), inputs: inputsOf(flags, io.env), confirmed: flags.confirm === true, redo: flags.redo === true }, {
    signal,
    log: logTo(io),
    progress: (text) => startProgress(io, text),
    connectFor: (plan) => clientConnection(ctx, plan, planPathOf(flags.file)),
    ...(prompt ? { noAskReason: ' (no prompt without a terminal, or with --no-input/CI)' } : {}),
    ...(canAsk ? {
      async ask(m) {
        if (m.kind !== 'contacts') {
          let answer = '';
          while (answer === '') answer = await askLine(m.flag, m.message);
          // Who confirms is asked once: `managed run` passes these flags on to its next steps.
          if (m.flag.startsWith('--by')) flags.by = answer;
          return answer;
        }
        const contacts: string[] = [];
        for (;;) {
          const answer = await askLine(m.flag, contacts.length ? 'Another contact (Name <email>, or an e-mail), empty to finish' : m.message);
          if (answer !== '') contacts.push(answer);
          else if (contacts.length > 0) return contacts;
        }
      },
      async confirm(question, defaultYes) {
        const { confirm } = await import('@inquirer/prompts');
        return confirm({ message: question, default: defaultYes }, { input: io.stdin, output: io.stderr, signal });
      },
    } : {}),
  });
  await printOutcome(ctx, run.outcome);
  if (run.failure) throw run.failure;
  return run.outcome;
}

async function printOutcome(ctx: CommandContext, result: StepOutcome): Promise<void> {
  const { io } = ctx;
  const { step, next } = result;
  const { printRecord } = await import('../output.js');
  printResult(io, result, () => {
    printRecord(io, result, [
      ['step', step.step], ['title', step.title], ['state', step.state], ['at', step.at], ['by', step.by], ['notes', step.notes],
      ['next', next ? next.command : 'all six steps are done'],
    ]);
    if (step.state === 'done' && result.changed) {
      io.err(`Step ${step.step} done.${next ? ` Next: step ${next.step}, ${next.title.charAt(0).toLowerCase()}${next.title.slice(1)}: ${next.command}` : ' The migration is handed over.'}`);
    }
  });
}
