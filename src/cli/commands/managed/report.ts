// `ferry managed report`: (re)writes the handover report from the plan: Markdown, a
// self-contained HTML page, and JSON. Step 6 writes it too.
import { printResult } from '../../io.js';
import type { Command } from 'commander';
import type { CommandContext } from '../../context.js';
import { examples, type Registrar } from '../../command.js';
import { managedGroup, PLAN_FILE_HELP } from '../../managed/options.js';

export interface ManagedReportOptions {
  file?: string;
  out?: string;
}

export function register(program: Command, registrar: Registrar): void {
  managedGroup(program)
    .command('report')
    .description('Write the handover report (report.md, report.html, report.json) from the plan')
    .option('--file <plan.json>', PLAN_FILE_HELP)
    .option('--out <dir>', 'the report folder (default: <plan>-report/ beside the plan)')
    .addHelpText('after', examples(
      'ferry managed report',
      'ferry managed report --file acme/plan.json --out handover/',
      'ferry managed report --json | jq .summary',
    ))
    .action(registrar.action(runManagedReport));
}

export async function runManagedReport(options: ManagedReportOptions, ctx: CommandContext): Promise<void> {
  const { io } = ctx;
  const { planPathOf, readPlan, writePlan } = await import('../../../ops/managed/plan.js');
  const { reportJson, writeReport } = await import('../../../ops/managed/report.js');
  const planPath = planPathOf(options.file);
  const plan = readPlan(planPath);
  const now = new Date();
  const files = await writeReport(plan, planPath, options.out, now);
  plan.report = { dir: files.dir, files: [files.markdown, files.html, files.json], at: now.toISOString() };
  writePlan(planPath, plan, now);
  const data = reportJson(plan, planPath, now);
  printResult(io, { files, verdict: data.verdict, summary: data.summary }, () => {
    for (const file of [files.markdown, files.html, files.json]) io.out(file);
    const s = data.summary;
    io.err(`Handover report (${data.verdict}): ${s.passed} of ${s.companies} companies passed${s.failed ? `, ${s.failed} failed` : ''}${s.checked < s.companies ? `, ${s.companies - s.checked} not checked yet` : ''}. Open ${files.html}`);
  });
}
