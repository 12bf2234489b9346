// Step 6: the remaining companies, each checked end to end, and the handover report.
import { companyRows } from './company-rows.js';
import { migrateAndCheck } from './migrate-and-check.js';
import { counted, formatCount } from '../progress.js';
import { failed, type StepEnv, type StepInputs, type StepResult } from './step-env.js';

export async function stepMigrateRest(env: StepEnv, inputs: StepInputs): Promise<StepResult> {
  const { plan } = env;
  const loaded = await companyRows(env);
  if (!('rows' in loaded)) return loaded;
  const { file, integrations, rows } = loaded;
  const pilotRow = plan.companies.pilot?.row;
  const rest = rows.filter((r) => r.row !== pilotRow);
  env.log(`Migrating the remaining ${counted(rest.length, 'company', 'companies')} of ${file} (the pilot, row ${pilotRow}, is done).`);
  const { throughput } = await migrateAndCheck(env, inputs, file, { rows: rest, pilot: false, name: 'migration', integrations });
  // Outcomes of rows no longer in the file (a re-validated file) do not belong in the report.
  const current = new Set(rows.map((r) => r.row));
  plan.outcomes = plan.outcomes.filter((o) => current.has(o.row));

  const passedCount = plan.outcomes.filter((o) => o.verdict === 'pass').length;
  const failedCount = plan.outcomes.length - passedCount;
  const { writeReport, defaultReportPath } = await import('./report.js');
  const reportDir = defaultReportPath(env.planPath, inputs.reportDir);
  const notes = failedCount === 0
    ? `${formatCount(passedCount)} of ${formatCount(plan.outcomes.length)} companies migrated and passed the end-to-end check; see the handover report`
    : `${formatCount(failedCount)} of ${formatCount(plan.outcomes.length)} companies failed (${formatCount(passedCount)} passed); see the handover report`;
  env.record(failedCount === 0 ? 'done' : 'failed', notes);
  const files = await writeReport(plan, env.planPath, reportDir);
  plan.report = { dir: files.dir, files: [files.markdown, files.html, files.json], at: new Date().toISOString() };
  env.log(`Handover report: ${files.html} (also ${files.markdown} and ${files.json})`);
  const passed = plan.outcomes.filter((o) => o.verdict === 'pass').length;
  const failedOnes = plan.outcomes.filter((o) => o.verdict === 'fail');
  const details = { companies: plan.outcomes.length, passed, failed: failedOnes.length, report: files, failures: failedOnes.map((o) => ({ row: o.row, companyId: o.companyId, companyName: o.companyName, reasons: o.reasons })), ...throughput };
  if (failedOnes.length === 0) return { state: 'done', notes, details };
  return failed(notes,
    'Fix the causes listed in the report (reauthorization: the client authorizes the company again), then run step 6 again: companies that passed are not checked again.',
    details, passed > 0);
}
