// How a plan looks to a person (the six steps as a checklist, each with its time and who
// confirmed it, a running step's counts, then the next action and the exact command for
// it), to a pipe (tab-separated lines) and to a script (--json). statusLines builds the
// checklist as lines that fit the terminal, so --watch can redraw it line by line.
import chalk from 'chalk';
import { printResult, type IO } from '../io.js';
import { planFlag, stepCommand, stepOf, type Plan, type PlanStep, type StepProgress } from '../../ops/managed/plan.js';
import { counted, formatCount } from '../../ops/progress.js';
import { countsText, liveness, phaseText, runningStep, shortTime, statusJson, type RunLiveness } from '../../ops/managed/view.js';

export interface StatusView {
  /** Marks (✓ ✗ · ▸) and colour; otherwise the state as a word. */
  color: boolean;
  /** The terminal's width (Infinity: unknown): notes wrap to it, and times go under the titles when a line would not fit. */
  columns: number;
  /** Watching: every line is cut to the width (a wrapped line would break the redraw) and the footer says so. */
  watching?: { last?: boolean };
  /** Leaves out the notes and the header's facts (a frame taller than the terminal). */
  compact?: boolean;
  liveness?: (progress: StepProgress) => RunLiveness;
}

/** Terminals draw these one column wide; the width counts code points, without escape codes. */
// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-9;?]*[A-Za-z]/g;
// eslint-disable-next-line no-control-regex
const ANSI_HERE = /^\x1b\[[0-9;?]*[A-Za-z]/;

export function visibleWidth(text: string): number {
  return [...text.replace(ANSI, '')].length;
}

/** Cuts a line to `columns` visible characters (escape codes kept, an ellipsis where cut). */
export function fitLine(text: string, columns: number): string {
  if (visibleWidth(text) <= columns) return text;
  let out = '';
  let width = 0;
  let styled = false;
  for (let i = 0; i < text.length;) {
    const code = text[i] === '\x1b' ? ANSI_HERE.exec(text.slice(i)) : null;
    if (code) {
      out += code[0];
      styled = true;
      i += code[0].length;
      continue;
    }
    const char = String.fromCodePoint(text.codePointAt(i)!);
    if (width + 1 >= columns) break;
    out += char;
    width += 1;
    i += char.length;
  }
  return `${out}…${styled ? '\x1b[0m' : ''}`;
}

/** Wraps plain text at spaces to lines of at most `width` characters (a longer word is cut by fitLine later). */
export function wrapText(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && visibleWidth(`${line} ${word}`) > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines;
}

type Paint = (text: string) => string;

function mark(state: string, color: boolean): string {
  if (!color) return state.padEnd(7);
  if (state === 'running') return chalk.cyan('▸');
  if (state === 'done') return chalk.green('✓');
  if (state === 'failed') return chalk.red('✗');
  return chalk.dim('·');
}

/** What a step's line shows: its state (running while a live run records progress), when and by whom. */
function stepFacts(s: PlanStep, live: RunLiveness | undefined): { state: string; when: string } {
  if (s.progress && live !== 'stopped') {
    return { state: 'running', when: `started ${shortTime(s.progress.startedAt)} by ${s.progress.by}` };
  }
  return { state: s.state, when: s.at ? `${shortTime(s.at)}${s.by ? ` by ${s.by}` : ''}` : '' };
}

/** The checklist for a person: header, one line per step (and its notes or counts), then what to do next. */
export function statusLines(plan: Plan, planPath: string, flag: string, view: StatusView): string[] {
  const { color, columns } = view;
  const paint = (style: Paint): Paint => (text) => (color ? style(text) : text);
  const bold = paint(chalk.bold);
  const dim = paint(chalk.dim);
  const data = statusJson(plan, planPath, flag);
  const lines: string[] = [];
  const platform = plan.platform.name ? `${plan.platform.name} (${plan.platform.key})` : plan.platform.key || 'platform not chosen';
  lines.push(bold(`Managed migration: ${plan.client.name || plan.client.id} from ${platform}`));
  const facts = [
    `plan ${planPath}`,
    plan.companies.count ? counted(plan.companies.count, 'company', 'companies') : plan.companies.file ? `companies ${plan.companies.file}` : '',
    plan.companies.pilot ? `pilot ${plan.companies.pilot.companyName ?? plan.companies.pilot.key}` : '',
    plan.schedule.date ? `scheduled ${plan.schedule.date}` : '',
  ].filter(Boolean);
  if (!view.compact) lines.push(dim(facts.join(' · ')));
  lines.push('');

  const liveOf = (p: StepProgress) => (view.liveness ?? liveness)(p);
  const rows = plan.steps.map((s) => ({ s, live: s.progress ? liveOf(s.progress) : undefined }))
    .map(({ s, live }) => ({ s, live, ...stepFacts(s, live) }));
  const width = Math.max(...plan.steps.map((s) => s.title.length));
  const head = (state: string, s: PlanStep) => `  ${mark(state, color)} ${s.step}  `;
  const indent = ' '.repeat(visibleWidth(head('pending', plan.steps[0]!)));
  // Time and who beside the titles when every step's line fits, else on the line under each title.
  const beside = rows.every(({ s, state, when }) => !when || visibleWidth(head(state, s)) + width + 2 + when.length <= columns);
  const detail = (text: string, style: Paint = dim) => {
    for (const line of wrapText(text, Math.max(20, columns - indent.length))) lines.push(`${indent}${style(line)}`);
  };
  for (const { s, live, state, when } of rows) {
    const padded = beside && when ? s.title.padEnd(width) : s.title;
    const title = state === 'failed' ? paint(chalk.red)(padded) : padded;
    lines.push(`${head(state, s)}${title}${beside && when ? `  ${dim(when)}` : ''}`.trimEnd());
    if (!beside && when) detail(when);
    if (s.progress) {
      const p = s.progress;
      if (live === 'stopped') {
        detail(`A run started ${shortTime(p.startedAt)} by ${p.by} stopped at ${countsText(p)}: its process (${p.pid}) is gone. Run step ${s.step} again to resume.`, paint(chalk.yellow));
      } else {
        detail(`${phaseText(p)} · ${countsText(p)}${live === 'unknown' ? ` · last saved ${shortTime(p.updatedAt)} on ${p.host}` : ''}`, paint(chalk.cyan));
      }
    }
    if (s.notes && s.state !== 'pending' && !view.compact) detail(s.notes);
  }
  lines.push('');

  const running = runningStep(plan);
  const next = data.next;
  // The sentence wraps to the width; a command stays on one line, to be copied whole.
  const say = (label: string, text: string) => {
    const wrapped = wrapText(`${label} ${text}`, columns);
    lines.push(`${bold(label)}${wrapped[0]!.slice(label.length)}`, ...wrapped.slice(1));
  };
  if (running && liveOf(running.progress) !== 'stopped') {
    say('Running:', `step ${running.step}, ${running.title.charAt(0).toLowerCase()}${running.title.slice(1)}.`);
    if (!view.watching) lines.push(`  Follow it with: ferry managed status --watch${flag ? ` ${flag}` : ''}`);
  } else if (next) {
    say('Next:', `step ${next.step}, ${next.title.charAt(0).toLowerCase()}${next.title.slice(1)}. ${next.action}`);
    lines.push(`  ${next.command}`);
  } else {
    say('All six steps are done.', `${formatCount(data.outcomes.passed)} of ${formatCount(data.outcomes.checked)} companies passed the end-to-end check.`);
    lines.push(plan.report ? `  Hand over ${plan.report.files[1] ?? plan.report.dir} (rewrite it with: ferry managed report${flag ? ` ${flag}` : ''})` : `  ferry managed report${flag ? ` ${flag}` : ''}`);
  }
  if (view.watching && !view.watching.last) lines.push(dim('Watching the plan; Ctrl-C to stop.'));
  return view.watching ? lines.map((line) => fitLine(line, columns)) : lines;
}

/** The piped form: `step` lines, a `progress` line for a running step, and the `next` line. */
export function statusTsv(plan: Plan, flag: string, planPath: string): string[] {
  const data = statusJson(plan, planPath, flag);
  const lines = plan.steps.map((s) => stepTsv(s));
  const running = runningStep(plan);
  if (running) lines.push(progressTsv(running.step, running.progress));
  const next = data.next;
  if (next) lines.push(['next', next.step, next.command].join('\t'));
  else lines.push(['next', '', plan.report ? `open ${plan.report.files[1] ?? plan.report.dir}` : 'ferry managed report'].join('\t'));
  return lines;
}

export function stepTsv(s: PlanStep): string {
  return ['step', s.step, s.name, s.state, s.at ?? '', s.by ?? '', s.title, s.notes.replace(/[\t\n]/g, ' ')].join('\t');
}

export function progressTsv(step: number, p: StepProgress): string {
  return ['progress', step, p.phase, p.total, p.migrated, p.migrationFailed, p.checked, p.passed, p.failed, p.updatedAt].join('\t');
}

/** The terminal's width, when it says. */
export function columnsOf(io: IO): number | undefined {
  const columns = (io.stdout as { columns?: number }).columns;
  return columns && columns > 0 ? columns : undefined;
}

export function printStatus(io: IO, plan: Plan, planPath: string, flag: string): void {
  printResult(io, statusJson(plan, planPath, flag), () => {
    const lines = io.mode === 'tty' ? statusLines(plan, planPath, flag, { color: io.color, columns: columnsOf(io) ?? Infinity }) : statusTsv(plan, flag, planPath);
    for (const line of lines) io.out(line);
  });
}

/** A new plan: its path on stdout, and the first step's command on stderr (--json: the plan). */
export function printPlanStarted(io: IO, planPath: string, plan: Plan): void {
  printResult(io, { plan: planPath, ...plan }, () => {
    io.out(planPath);
    const flag = planFlag(planPath, process.cwd(), plan);
    io.err(`Started the managed migration of ${plan.client.name} from ${plan.platform.key}: ${planPath}`);
    io.err(`Next: ${stepCommand(plan, stepOf(plan, 1), flag)}   # ferry managed status shows the checklist`);
  });
}
