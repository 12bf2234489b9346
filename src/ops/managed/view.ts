// What a plan says about itself: the six steps with the next action and the exact
// command for it (the status a person reads and a script gets as JSON).
import { hostname } from 'node:os';
import { formatCount } from '../progress.js';
import { nextStep, stepCommand, type Plan, type PlanStep, type StepNumber, type StepProgress } from './plan.js';

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

/**
 * Whether the process that records a step's progress still runs: 'running', 'stopped' (it
 * is gone without ending the run: killed), or 'unknown' (another host's process; only its
 * last update can tell).
 */
export type RunLiveness = 'running' | 'stopped' | 'unknown';

export function liveness(progress: StepProgress, host: string = hostname(), alive: (pid: number) => boolean = pidAlive): RunLiveness {
  if (progress.host !== host) return 'unknown';
  return alive(progress.pid) ? 'running' : 'stopped';
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: a process of another user has that id, so it is alive.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The running step: the first with progress recorded, or undefined. */
export function runningStep(plan: Plan): (PlanStep & { progress: StepProgress }) | undefined {
  return plan.steps.find((s): s is PlanStep & { progress: StepProgress } => s.progress !== undefined);
}

/** "migrating 120 of 199 (1 failed)" / "checking" and so on: what the run is doing now. */
export function phaseText(p: StepProgress): string {
  const plural = (n: number) => `compan${n === 1 ? 'y' : 'ies'}`;
  switch (p.phase) {
    case 'holding-back': return `looking up legacy refreshes of ${formatCount(p.total - p.earlier)} ${plural(p.total - p.earlier)}`;
    case 'migrating': return `migrating ${formatCount(p.migrated + p.migrationFailed)} of ${formatCount(p.toMigrate)}${p.migrationFailed ? ` (${formatCount(p.migrationFailed)} failed)` : ''}`;
    case 'checking': return 'checking end to end';
  }
}

/** "80 of 199 checked · 79 passed · 1 failed". */
export function countsText(p: StepProgress): string {
  return `${formatCount(p.checked)} of ${formatCount(p.total)} checked · ${formatCount(p.passed)} passed · ${formatCount(p.failed)} failed`;
}
