// How a plan looks to a person (the six steps as a checklist, with the next action and
// the exact command for it), to a pipe (tab-separated lines) and to a script (--json).
import chalk from 'chalk';
import { printResult, type IO } from '../../io.js';
import type { Plan } from '../../../ops/managed/plan.js';
import { shortTime, statusJson } from '../../../ops/managed/view.js';

function mark(io: IO, state: string): string {
  if (!(io.mode === 'tty' && io.color)) return state;
  if (state === 'done') return chalk.green('✓');
  if (state === 'failed') return chalk.red('✗');
  return chalk.dim('·');
}

export function printStatus(io: IO, plan: Plan, planPath: string, flag: string): void {
  const data = statusJson(plan, planPath, flag);
  printResult(io, data, () => {
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
  });
}
