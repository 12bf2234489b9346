// `ferry demo --managed`: a managed migration rehearsed end to end on the embedded service,
// for a managed-only platform, by calling the same run functions the commands use: a
// client, its OAuth app at the platform with the service's callback URL, sandbox companies
// and their CSV, `ferry managed init`, the six steps, and the handover report. After step
// 4 the client's old application refreshes one company's token, so step 6 holds that
// company back and the report shows a failure and why, as a real migration would.
// Without a terminal the steps are `ferry managed step N --confirm`. With one, the person
// answers what `ferry managed run` asks (the same runner and prompts): the confirmations
// are the judgement a support engineer makes, so the rehearsal leaves them to the person;
// the facts the demo made up itself (platform, app, company file, date, contact) are flags.
import { parse } from 'csv-parse/sync';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import * as api from '../../client/api.js';
import type { ApiClient } from '../../client/client.js';
import { sandboxApi, type SandboxApi } from '../../client/sandbox-api.js';
import type { IntegrationRecord } from '../../client/wire.js';
import { privateDataDir } from '../../lib/private-files.js';
import { callbackUrlFor } from '../../ops/check/platform-lookups.js';
import { OpError } from '../../ops/errors.js';
import { planFlag, readPlan, startPlan, stepOf, STEP_NUMBERS, type CompanyOutcome, type StepNumber } from '../../ops/managed/plan.js';
import { reportJson } from '../../ops/managed/report.js';
import { STEP_ACTIONS } from '../../ops/managed/view.js';
import { createContext, type CommandContext, type Connection } from '../context.js';
import { CliError, UsageError } from '../errors.js';
import { printResult } from '../io.js';
import { printPlanStarted } from '../managed/print-status.js';
import { runStep, type StepFlags } from '../managed/runner.js';
import { printRecord } from '../output.js';
import { writeTenantsFile } from '../sandbox/tenants-file.js';
import { startDemoRun, type DemoRun, type StageTiming } from './stage-io.js';

export interface ManagedDemoOptions {
  companies: number;
  invoices: number;
  platform: string;
}

export interface ManagedDemoSummary {
  dataDir: string;
  kept: boolean;
  /** The person answered the prompts of `ferry managed run` (a terminal); else `step N --confirm`. */
  interactive: boolean;
  platform: string;
  client: { id: string; name: string };
  appClientId: string;
  callbackUrl: string;
  companies: number;
  companiesFile: string;
  plan: string;
  steps: Array<{ step: number; title: string; state: string; at: string | null; by: string | null; notes: string }>;
  /** The step the person chose to stop after (interactive only). */
  stoppedAfter?: number;
  passed: number;
  failed: number;
  /** Companies held back, and why (the company whose legacy application refreshed after step 4). */
  heldBack: Array<{ row: number; companyName: string; externalId?: string; reasons: string[] }>;
  report: { verdict: string; html: string; markdown: string; json: string } | null;
  stages: StageTiming[];
  seconds: number;
  next: string[];
}

const CLIENT_NAME = 'Acme Accounting (rehearsal)';
const CONTACT = 'Jo Bloggs <jo@acme.example>';
/** Who confirms when no person answers. */
const DEMO_BY = 'ferry demo';

/** The rehearsal's stages: four to prepare, then the six steps. */
const STAGES = 10;

/** What the rehearsal's parts share: the run, the person's context, and its files as a command line names them. */
interface Rehearsal {
  run: DemoRun;
  options: ManagedDemoOptions;
  ctx: CommandContext;
  /** A person answers on a terminal; --json, --no-input, CI and a pipe make it `step N --confirm`. */
  interactive: boolean;
  planPath: string;
  companiesFile: string;
  cwd: string;
  /** `--data-dir DIR`: what a command shown for a stage needs to reach the rehearsal's service. */
  dirFlag: string;
  /** The plan's flags as a managed command takes them: its file (`--file PATH`, or nothing for the default file) and the data dir. */
  fileFlag: string;
}

/** The company the client's old application is still syncing: the last row of the file (the first is the pilot). */
interface SpoiledCompany {
  companyName: string;
  externalId: string;
}

/** A path as a shell word: relative to the current directory when inside it, quoted when it needs to be. */
function shellPath(path: string, cwd: string): string {
  const rel = relative(cwd, path);
  const shown = rel === '' ? '.' : rel.startsWith('..') || rel.startsWith('/') ? path : rel;
  return /[\s"'$`\\]/.test(shown) ? `'${shown.replace(/'/g, "'\\''")}'` : shown;
}

export async function runManagedDemo(options: ManagedDemoOptions, ctx: CommandContext): Promise<void> {
  const { io, signal } = ctx;
  if (options.companies < 2) throw new UsageError('ferry demo --managed needs at least 2 companies: a pilot, and one that the legacy application spoils.', 'Leave --companies out (20), or give 2 or more.');
  const run = startDemoRun(io, ctx.flags.dataDir, STAGES);
  const { dataDir, kept, say } = run;
  const work = join(dataDir, 'managed');
  const again = existsSync(work);
  const planPath = join(work, 'plan.json');
  const cwd = process.cwd();
  const dirFlag = `--data-dir ${shellPath(dataDir, cwd)}`;
  const r: Rehearsal = {
    run, options, ctx, interactive: io.canPrompt, planPath, companiesFile: join(work, 'companies.csv'), cwd, dirFlag, fileFlag: `${planFlag(planPath, cwd)} ${dirFlag}`.trim(),
  };

  const admin = createContext(run.sub, { dataDir }, signal);
  let clientApi: ApiClient | undefined;
  try {
    say(`ferry demo --managed: a managed migration of ${options.companies} companies rehearsed on the embedded service in ${dataDir}${kept ? '' : ' (temporary)'}`);
    const adminConnection = await admin.connect();
    const integration = await api.integration(adminConnection.client, options.platform);
    if (integration.migrationRoute !== 'managed') {
      throw new UsageError(`${integration.name} has a self-service route: ferry demo (without --managed) shows that one.`, 'Pick a managed-only platform, e.g. --platform qhyg (QuickBooks Online); ferry integrations list --route managed lists them.');
    }
    // A rehearsal run again in the same data dir starts afresh: an earlier plan's journals and report would not fit the new company file.
    rmSync(work, { recursive: true, force: true });
    mkdirSync(work, { recursive: true, mode: 0o700 });
    if (again) say(`(the earlier rehearsal in ${work} is replaced)`);
    const sandbox = await sandboxApi(adminConnection);

    const account = await run.stage(1, `A client: ${CLIENT_NAME}`, () => api.createClientAccount(adminConnection.client, { name: CLIENT_NAME, plan: 'Paid' }),
      (created) => ({ text: `client ${created.id} (Paid plan)` }), [`$ ferry ${dirFlag} admin clients create --name "${CLIENT_NAME}" --plan Paid`]);
    // The support team acts for the client with the admin key (X-Client-Id), as `ferry managed` does.
    clientApi = adminConnection.client.actingFor(account.id);
    const clientConnection: Connection = { client: clientApi, baseUrl: adminConnection.baseUrl, embedded: true };
    const { appClientId, callbackUrl } = await prepare(r, adminConnection, sandbox, integration, account.id);

    const spoiled = lastCompany(r.companiesFile);
    const asClient: CommandContext = { io: run.sub, flags: { dataDir, client: account.id }, signal, connect: async () => clientConnection };
    const { stoppedAfter, stepSix } = await runSixSteps(r, asClient, sandbox, spoiled);
    const { summary, failures } = rehearsalSummary(r, { platform: integration.key, client: { id: account.id, name: CLIENT_NAME }, appClientId, callbackUrl }, stoppedAfter);
    printRehearsal(r, summary, integration.name);
    // The rehearsal shows one failure on purpose; any other means it did not go as shown.
    if (stoppedAfter === undefined) checkRehearsal(r, summary, failures, spoiled, stepSix !== undefined);
  } catch (err) {
    throw run.ended(err, signal);
  } finally {
    await clientApi?.close();
    await admin.dispose();
    if (!kept) rmSync(dataDir, { recursive: true, force: true });
    // The plan and the report are written with the umask's modes; the data dir is owner-only,
    // so they are made so now rather than the next command saying it had to.
    else privateDataDir(dataDir);
  }
}

/** Stages 2 to 4: the client's OAuth app at the platform, the sandbox companies and their CSV, and `ferry managed init`. */
async function prepare(r: Rehearsal, adminConnection: Connection, sandbox: SandboxApi, integration: IntegrationRecord, clientId: string): Promise<{ appClientId: string; callbackUrl: string }> {
  const { run, options, companiesFile, planPath } = r;
  const callbackUrl = callbackUrlFor(adminConnection.baseUrl, integration.key);
  // Its secret is the client's: the rehearsal never needs it, so it is not shown.
  const app = await run.stage(2, `The client's OAuth app at ${integration.name}, with the service's callback URL`,
    () => sandbox.createApp({ platform: integration.key, name: `${CLIENT_NAME} app`, callbackUrls: [callbackUrl] }),
    (created) => ({ text: `app ${created.clientId}; callback URL ${callbackUrl}` }),
    [`$ ferry ${r.dirFlag} sandbox apps create --platform ${integration.key} --name "${CLIENT_NAME} app" --callback-url ${callbackUrl}`]);

  // Without its lines, which would suggest ferry migrate tokens, a route a managed-only platform refuses.
  const quiet = { ...run.sub, quiet: true, err: () => {} };
  await run.stage(3, `Sandbox: ${options.companies} ${integration.name} companies and a CSV of their tokens`,
    () => writeTenantsFile(quiet, r.ctx.signal, sandbox, integration, { count: options.companies, invoices: options.invoices, out: companiesFile, force: true }),
    () => ({ text: `${options.companies} companies; their tokens in ${companiesFile} (mode 0600)` }),
    [`$ ferry ${r.dirFlag} sandbox tenants create --platform ${integration.key} --count ${options.companies} --invoices ${options.invoices} --out ${shellPath(companiesFile, r.cwd)}`]);

  await run.stage(4, 'ferry managed init: the plan', async () => printPlanStarted(run.sub, planPath, startPlan(planPath, {
    client: { id: clientId, name: CLIENT_NAME }, platform: integration.key, appClientId: app.clientId, companies: companiesFile, target: { dataDir: r.run.dataDir },
  })), () => ({ text: `plan ${planPath}` }),
  [`$ ferry managed init --platform ${integration.key} --client ${clientId} --name "${CLIENT_NAME}" --companies ${shellPath(companiesFile, r.cwd)} --app-client-id ${app.clientId} ${r.fileFlag}`.trimEnd()]);
  return { appClientId: app.clientId, callbackUrl };
}

function lastCompany(companiesFile: string): SpoiledCompany {
  const rows = parse(readFileSync(companiesFile), { columns: true }) as Array<Record<string, string>>;
  const last = rows[rows.length - 1]!;
  return { companyName: last.companyName!, externalId: last.externalId! };
}

/**
 * Stages 5 to 10: the six steps, each through `ferry managed run`'s runner. After step 4 the
 * client's old application refreshes the spoiled company's token. A person may stop between
 * steps, or say no to one; step 6 fails by design (its error is kept).
 */
async function runSixSteps(r: Rehearsal, asClient: CommandContext, sandbox: SandboxApi, spoiled: SpoiledCompany): Promise<{ stoppedAfter?: number; stepSix?: OpError }> {
  const { run, interactive } = r;
  const { io, signal } = r.ctx;
  const schedule = new Date(Date.now() + 7 * 86_400_000).toISOString().slice(0, 10);
  const stepCtx: CommandContext = { ...asClient, io: interactive ? { ...run.sub, canPrompt: true } : run.sub };
  let stepSix: OpError | undefined;
  if (interactive) {
    run.say('');
    run.say(`Now the six steps, as ferry managed run ${r.fileFlag} asks them: you answer (Enter takes the default; step 4 needs a yes).`);
  }
  for (const n of STEP_NUMBERS) {
    const declined = await stepStage(r, n, stepCtx, schedule, (err) => {
      stepSix = err;
    });
    if (declined) return { stoppedAfter: n - 1, ...(stepSix ? { stepSix } : {}) };
    if (n === 4) {
      // What `ferry sandbox tenants legacy-refresh ID` does: after syncing was confirmed disabled.
      const { outcome } = await sandbox.legacyRefresh(spoiled.externalId);
      run.say('');
      run.say(`Meanwhile, the client's old application still syncs ${spoiled.companyName}: it refreshes that company's token after step 4 (ferry sandbox tenants legacy-refresh ${spoiled.externalId}): ${outcome}.`);
    }
    if (interactive && n < 6) {
      const { confirm } = await import('@inquirer/prompts');
      if (!(await confirm({ message: `Go on to step ${n + 1}?`, default: true }, { input: io.stdin, output: io.stderr, signal }))) {
        return { stoppedAfter: n, ...(stepSix ? { stepSix } : {}) };
      }
    }
  }
  return stepSix ? { stepSix } : {};
}

/** One step as a stage; the reason when the person said no to it (nothing changed), else undefined. */
async function stepStage(r: Rehearsal, n: StepNumber, stepCtx: CommandContext, schedule: string, failedSix: (err: OpError) => void): Promise<string | undefined> {
  const { run, interactive, planPath } = r;
  const title = stepOf(readPlan(planPath), n).title;
  const extra = n === 2 ? ` --date ${schedule} --contact "${CONTACT}"` : '';
  const command = `$ ferry managed step ${n} --confirm${extra} ${r.fileFlag}`.trimEnd();
  const flags: StepFlags = {
    file: planPath,
    // A rehearsal's "Confirmed by": the person's FERRY_USER when set, else the demo itself (never asked: the demo asks only what a step asks).
    by: r.ctx.io.env.FERRY_USER?.trim() || DEMO_BY,
    ...(n === 2 ? { date: schedule, contact: [CONTACT] } : {}),
  };
  return run.stage(4 + n, `Step ${n} of 6: ${title}`, async () => {
    try {
      // runStep is `ferry managed run`'s and `ferry managed step N`'s runner: the same questions, checks and output.
      await runStep(n, { ...flags, ...(interactive ? {} : { confirm: true }) }, stepCtx, interactive);
    } catch (err) {
      // Step 6 fails by design (one company held back); a person may say no (nothing changed); anything else stops the rehearsal.
      if (n === 6 && err instanceof OpError && (err.kind === 'partial' || err.kind === 'failed')) failedSix(err);
      else if (interactive && err instanceof OpError && err.kind === 'input') return err.message;
      else throw err;
    }
    return undefined;
  }, (no) => {
    if (no) return { text: no, failed: true };
    const step = stepOf(readPlan(planPath), n);
    return { text: `${step.state}: ${step.notes}`, failed: step.state !== 'done' };
  }, interactive ? [STEP_ACTIONS[n], ...(extra ? [`What the client agreed is given as flags:${extra}`] : [])] : [STEP_ACTIONS[n], command]);
}

/** What the plan says once the steps ran (or stopped), with what to try next; and the companies that failed. */
function rehearsalSummary(r: Rehearsal, made: Pick<ManagedDemoSummary, 'platform' | 'client' | 'appClientId' | 'callbackUrl'>, stoppedAfter: number | undefined): { summary: ManagedDemoSummary; failures: CompanyOutcome[] } {
  const { run, planPath } = r;
  const plan = readPlan(planPath);
  const failures = plan.outcomes.filter((o) => o.verdict === 'fail');
  const heldBack = failures.filter((o) => o.migration === 'not-imported')
    .map((o) => ({ row: o.row, companyName: o.companyName, ...(o.externalId ? { externalId: o.externalId } : {}), reasons: o.reasons }));
  const report = plan.report
    ? { verdict: reportJson(plan, planPath, new Date()).verdict, markdown: plan.report.files[0]!, html: plan.report.files[1]!, json: plan.report.files[2]! }
    : null;
  const pilot = plan.outcomes.find((o) => o.pilot && o.companyId);
  const summary: ManagedDemoSummary = {
    dataDir: run.dataDir, kept: run.kept, interactive: r.interactive, ...made,
    companies: r.options.companies, companiesFile: r.companiesFile, plan: planPath,
    steps: plan.steps.map(({ step, title, state, at, by, notes }) => ({ step, title, state, at, by, notes })),
    ...(stoppedAfter !== undefined ? { stoppedAfter } : {}),
    passed: plan.outcomes.length - failures.length, failed: failures.length, heldBack, report, stages: run.stages, seconds: run.seconds(),
    next: nextCommands(r, made.client.id, stoppedAfter, pilot),
  };
  return { summary, failures };
}

/** What to try next: where a stopped plan goes on, what a kept one shows, or how to keep one. */
function nextCommands(r: Rehearsal, clientId: string, stoppedAfter: number | undefined, pilot: CompanyOutcome | undefined): string[] {
  // The plan's own flags: its file and the data dir it was made against.
  const fileFlag = planFlag(r.planPath, r.cwd, readPlan(r.planPath));
  const { dirFlag } = r;
  if (r.run.kept && stoppedAfter !== undefined) {
    return [
      `ferry managed status ${fileFlag}   # where the plan is`,
      `ferry managed run ${fileFlag}   # go on from step ${stoppedAfter + 1}${stoppedAfter < 3 ? ' (the embedded service\'s callback URL changes each run: step 3 says what to add to the app)' : ''}`,
    ];
  }
  if (r.run.kept) {
    return [
      `ferry managed status ${fileFlag}   # the six steps: step 6 failed, and why`,
      `ferry managed report ${fileFlag}   # rewrites the handover report and prints its paths: open report.html`,
      `ferry managed step 6 --confirm ${fileFlag}   # the held-back company again (the others passed and are not checked again); it stays held back until the client authorizes it again`,
      ...(pilot ? [`ferry ${dirFlag} --client ${clientId} check ${pilot.companyId}   # the end-to-end check of the pilot on its own`] : []),
      'ferry managed init --platform KEY --client CLIENT_ID --name NAME --companies FILE.csv   # a real one, against ferry serve or the service',
    ];
  }
  return [
    'ferry demo --managed --data-dir ./rehearsal   # keep the plan and the report this time, then:',
    'ferry managed status --file rehearsal/managed/plan.json',
    'ferry managed report --file rehearsal/managed/plan.json   # prints the handover report\'s paths: open report.html',
    `ferry integrations list --route managed   # the platforms migrated this way`,
  ];
}

function printRehearsal(r: Rehearsal, summary: ManagedDemoSummary, platformName: string): void {
  const { io } = r.ctx;
  const { say, bold } = r.run;
  const { kept, stoppedAfter, heldBack, report } = summary;
  printResult(io, summary, () => {
    say('');
    if (stoppedAfter !== undefined) {
      say(bold(stoppedAfter === 0 ? `Stopped before step 1 in ${summary.seconds}s.` : `Stopped after step ${stoppedAfter} in ${summary.seconds}s.`));
    } else {
      say(bold(`Done in ${summary.seconds}s: ${summary.companies} ${platformName} companies through the six steps; ${summary.passed} passed the end-to-end check, ${summary.failed} failed.`));
      for (const o of heldBack) say(`  Held back: ${o.companyName} (row ${o.row}): ${o.reasons.join('; ')}`);
      if (heldBack.length) say('  Its legacy application refreshed its token after step 4, so its tokens in the file are spent: importing it would only break it.');
    }
    printRecord(io, summary, [
      ['client', `${CLIENT_NAME} (${summary.client.id})`], ['companies', summary.companies], ['passed', summary.passed], ['failed', summary.failed],
      ['held back', heldBack.map((o) => o.companyName).join(', ')],
      ['plan', kept ? summary.plan : `${summary.plan} (removed)`],
      ['report', report ? `${report.html}${kept ? '' : ' (removed)'}` : 'not written'],
      ['seconds', summary.seconds], ['data dir', kept ? summary.dataDir : `${summary.dataDir} (removed)`],
    ]);
    say('');
    say(bold('Try next:'));
    for (const line of summary.next) say(`  ${line}`);
  });
}

/** Throws unless the one failure was the one shown on purpose: the spoiled company, held back. */
function checkRehearsal(r: Rehearsal, summary: ManagedDemoSummary, failures: CompanyOutcome[], spoiled: SpoiledCompany, stepSixFailed: boolean): void {
  const { heldBack } = summary;
  const unexpected = failures.filter((o) => o.externalId !== spoiled.externalId || o.migration !== 'not-imported');
  const wrong = unexpected.length > 0
    ? `${unexpected.length} other compan${unexpected.length === 1 ? 'y' : 'ies'} failed (first: ${unexpected[0]!.companyName}: ${unexpected[0]!.reasons.join('; ')})`
    : heldBack.length !== 1 ? `${spoiled.companyName} was not held back${stepSixFailed ? '' : ' and step 6 passed'}` : '';
  if (wrong) {
    throw new CliError(`The rehearsal did not go as planned: ${wrong}.`, undefined,
      summary.kept ? `See ${summary.report?.html ?? r.planPath}.` : 'Run it again with --data-dir DIR to keep the plan and the report.');
  }
}
