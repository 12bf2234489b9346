// How a plan looks to a person (the six steps as a checklist, with the next action and
// the exact command for it) and to a script (--json).
import chalk from 'chalk';
import type { IO } from '../../cli/io.js';
import { nextStep, stepCommand, type Plan, type PlanStep, type StepNumber } from './plan.js';

export const STEP_ACTIONS: Record<StepNumber, string> = {
  1: 'Supply the platform details: the platform key, the client\'s app client id and the company file (validated as the bulk migration does).',
  2: 'Agree the migration date with the client and record the contacts.',
  3: 'Have the client add the service\'s callback URL to its app at the platform, then check it.',
  4: 'Have the client disable syncing in its existing application for every company to migrate, then confirm (the time is recorded).',
  5: 'Import the pilot company with the support team\'s admin key and run the end-to-end check (fresh sync, no reauthorization, every data type readable).',
  6: 'Migrate the remaining companies with the bulk engine, check each end to end, and write the handover report.',
};

export interface NextAction {
  step: StepNumber;
  title: string;
  state: string;
  action: string;
  command: string;
}

export interface StatusJson {
  plan: string;
  client: Plan['client'];
  platform: Plan['platform'];
  schedule: Plan['schedule'];
  contacts: Plan['contacts'];
  companies: { file: string; count: number; pilot: Plan['companies']['pilot'] };
  callbackUrl: string;
  steps: PlanStep[];
  outcomes: { checked: number; passed: number; failed: number };
  report: Plan['report'];
  next: NextAction | null;
}

export function nextAction(plan: Plan, flag: string): NextAction | null {
  const step = nextStep(plan);
  if (!step) return null;
  const said = step.notes.replace(/[.\s]*$/, '.');
  const action = step.state === 'failed' ? `It failed: ${said} ${step.hint ?? 'Fix that, then run it again.'}` : STEP_ACTIONS[step.step];
  return { step: step.step, title: step.title, state: step.state, action, command: stepCommand(plan, step, flag) };
}

export function statusJson(plan: Plan, planPath: string, flag: string): StatusJson {
  const passed = plan.outcomes.filter((o) => o.verdict === 'pass').length;
  return {
    plan: planPath, client: plan.client, platform: plan.platform, schedule: plan.schedule, contacts: plan.contacts,
    companies: { file: plan.companies.file, count: plan.companies.count, pilot: plan.companies.pilot },
    callbackUrl: plan.service.callbackUrl, steps: plan.steps,
    outcomes: { checked: plan.outcomes.length, passed, failed: plan.outcomes.length - passed },
    report: plan.report, next: nextAction(plan, flag),
  };
}

/** "2026-11-21T10:00:05.123Z" → "2026-11-21 10:00 UTC". */
export function shortTime(iso: string | null): string {
  if (!iso) return '';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

function mark(io: IO, state: string): string {
  if (!(io.mode === 'tty' && io.color)) return state;
  if (state === 'done') return chalk.green('✓');
  if (state === 'failed') return chalk.red('✗');
  return chalk.dim('·');
}

export function printStatus(io: IO, plan: Plan, planPath: string, flag: string): void {
  const data = statusJson(plan, planPath, flag);
  if (io.mode === 'json') {
    io.json(data);
    return;
  }
  const next = data.next;
  if (io.mode !== 'tty') {
    // Piped: stable tab-separated lines; the first column says the kind.
    for (const s of plan.steps) io.out(['step', s.step, s.name, s.state, s.at ?? '', s.by ?? '', s.title, s.notes.replace(/[\t\n]/g, ' ')].join('\t'));
    if (next) io.out(['next', next.step, next.command].join('\t'));
    else io.out(['next', '', plan.report ? `open ${plan.report.files[1] ?? plan.report.dir}` : 'ferry managed report'].join('\t'));
    return;
  }
  const bold = (text: string) => (io.color ? chalk.bold(text) : text);
  const dim = (text: string) => (io.color ? chalk.dim(text) : text);
  const platform = plan.platform.name ? `${plan.platform.name} (${plan.platform.key})` : plan.platform.key || 'platform not chosen';
  io.out(bold(`Managed migration: ${plan.client.name || plan.client.id} from ${platform}`));
  const facts = [
    `plan ${planPath}`,
    plan.companies.count ? `${plan.companies.count} companies` : plan.companies.file ? `companies ${plan.companies.file}` : '',
    plan.companies.pilot ? `pilot ${plan.companies.pilot.companyName ?? plan.companies.pilot.key}` : '',
    plan.schedule.date ? `scheduled ${plan.schedule.date}` : '',
  ].filter(Boolean);
  io.out(dim(facts.join(' · ')));
  io.out('');
  const width = Math.max(...plan.steps.map((s) => s.title.length));
  const words = !(io.color);
  for (const s of plan.steps) {
    const state = words ? s.state.padEnd(7) : mark(io, s.state);
    const when = s.at ? `${shortTime(s.at)}${s.by ? ` by ${s.by}` : ''}` : '';
    const title = s.state === 'failed' && io.color ? chalk.red(s.title.padEnd(width)) : s.title.padEnd(width);
    io.out(`  ${state} ${s.step}  ${title}  ${dim(when)}`.trimEnd());
    if (s.notes && s.state !== 'pending') io.out(`${' '.repeat(words ? 14 : 8)}${dim(s.notes)}`);
  }
  io.out('');
  if (next) {
    io.out(`${bold('Next:')} step ${next.step}, ${next.title.charAt(0).toLowerCase()}${next.title.slice(1)}. ${next.action}`);
    io.out(`  ${next.command}`);
  } else {
    const passed = data.outcomes.passed;
    io.out(`${bold('All six steps are done.')} ${passed} of ${data.outcomes.checked} companies passed the end-to-end check.`);
    io.out(plan.report ? `  Hand over ${plan.report.files[1] ?? plan.report.dir} (rewrite it with: ferry managed report${flag ? ` ${flag}` : ''})` : `  ferry managed report${flag ? ` ${flag}` : ''}`);
  }
}
