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
import type { ApiClient } from '../../client/client.js';
import type { CommandContext, Connection } from '../context.js';
import { CliError, UsageError } from '../errors.js';
import { printResult } from '../io.js';
import type { StepFlags } from '../managed/runner.js';
import type { StageTiming } from './stage-io.js';

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

/** A path as a shell word: relative to the current directory when inside it, quoted when it needs to be. */
function shellPath(path: string, relativeTo: (path: string) => string): string {
  const rel = relativeTo(path);
  const shown = rel === '' ? '.' : rel.startsWith('..') || rel.startsWith('/') ? path : rel;
  return /[\s"'$`\\]/.test(shown) ? `'${shown.replace(/'/g, "'\\''")}'` : shown;
}

export async function runManagedDemo(options: ManagedDemoOptions, ctx: CommandContext): Promise<void> {
  const { io, signal } = ctx;
  if (options.companies < 2) throw new UsageError('ferry demo --managed needs at least 2 companies: a pilot, and one that the legacy application spoils.', 'Leave --companies out (20), or give 2 or more.');
  const { existsSync, mkdtempSync, mkdirSync, readFileSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join, relative, resolve } = await import('node:path');
  const { parse } = await import('csv-parse/sync');
  const { default: chalk } = await import('chalk');
  const api = await import('../../client/api.js');
  const { sandboxApi } = await import('../../client/sandbox-api.js');
  const { callbackUrlFor } = await import('../../ops/check/platform-lookups.js');
  const { planFlag, readPlan, stepOf, STEP_NUMBERS } = await import('../../ops/managed/plan.js');
  const { STEP_ACTIONS } = await import('../../ops/managed/view.js');
  const { OpError } = await import('../../ops/errors.js');
  const { createContext } = await import('../context.js');
  const { stageIO } = await import('./stage-io.js');
  const { privateDataDir } = await import('../../lib/private-files.js');

  const started = Date.now();
  const kept = ctx.flags.dataDir !== undefined;
  const dataDir = kept ? resolve(ctx.flags.dataDir!) : mkdtempSync(join(tmpdir(), 'ferry-demo-'));
  const work = join(dataDir, 'managed');
  const again = existsSync(work);
  const planPath = join(work, 'plan.json');
  const companiesFile = join(work, 'companies.csv');
  // Only the embedded service: no remote target, profile or client from the environment.
  const env: NodeJS.ProcessEnv = { ...io.env, XDG_CONFIG_HOME: join(dataDir, 'config') };
  for (const name of ['FERRY_BASE_URL', 'FERRY_PROFILE', 'FERRY_API_KEY', 'FERRY_CLIENT_ID', 'FERRY_DATA_DIR']) delete env[name];
  const sub = stageIO(io, env);
  // A person answers on a terminal; --json, --no-input, CI and a pipe make it `step N --confirm`.
  const interactive = io.canPrompt;
  const say = (line: string) => {
    if (io.mode !== 'json') io.err(line);
  };
  const bold = (text: string) => (io.color ? chalk.bold(text) : text);
  const ok = (text: string) => (io.color ? `${chalk.green('✓')} ${text}` : `  ${text}`);
  const STAGES = 10;
  const stages: ManagedDemoSummary['stages'] = [];
  const failedMark = (text: string) => (io.color ? `${chalk.red('✗')} ${text}` : `  ${text}`);
  /** A stage: its title, what it stands for, its work, and how it ended (`failed` marks an expected failure). */
  const stage = async <T>(n: number, title: string, work: () => Promise<T>, done: (value: T) => { text: string; failed?: boolean }, lines: string[] = []): Promise<T> => {
    say('');
    say(bold(`[${n}/${STAGES}] ${title}`));
    for (const line of lines) say(`  ${line}`);
    const at = Date.now();
    const value = await work();
    const seconds = Math.round((Date.now() - at) / 100) / 10;
    stages.push({ stage: title, seconds });
    const end = done(value);
    say((end.failed ? failedMark : ok)(`${end.text} (${seconds}s)`));
    return value;
  };
  const cwd = process.cwd();
  const fileFlag = planFlag(planPath, cwd);
  const dirFlag = `--data-dir ${shellPath(dataDir, (p) => relative(cwd, p))}`;

  const admin = createContext(sub, { dataDir }, signal);
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

    const account = await stage(1, `A client: ${CLIENT_NAME}`, () => api.createClientAccount(adminConnection.client, { name: CLIENT_NAME, plan: 'Paid' }),
      (created) => ({ text: `client ${created.id} (Paid plan)` }), [`$ ferry admin clients create --name "${CLIENT_NAME}" --plan Paid`]);
    // The support team acts for the client with the admin key (X-Client-Id), as `ferry managed` does.
    clientApi = adminConnection.client.actingFor(account.id);
    const clientConnection: Connection = { client: clientApi, baseUrl: adminConnection.baseUrl, embedded: true };

    const callbackUrl = callbackUrlFor(adminConnection.baseUrl, integration.key);
    // Its secret is the client's: the rehearsal never needs it, so it is not shown.
    const app = await stage(2, `The client's OAuth app at ${integration.name}, with the service's callback URL`,
      () => sandbox.createApp({ platform: integration.key, name: `${CLIENT_NAME} app`, callbackUrls: [callbackUrl] }),
      (created) => ({ text: `app ${created.clientId}; callback URL ${callbackUrl}` }),
      [`$ ferry sandbox apps create --platform ${integration.key} --name "${CLIENT_NAME} app" --callback-url ${callbackUrl}`]);

    const { writeTenantsFile } = await import('../sandbox/tenants-file.js');
    // Without its lines, which would suggest ferry migrate tokens, a route a managed-only platform refuses.
    const quiet = { ...sub, quiet: true, err: () => {} };
    await stage(3, `Sandbox: ${options.companies} ${integration.name} companies and a CSV of their tokens`,
      () => writeTenantsFile(quiet, signal, sandbox, integration, { count: options.companies, invoices: options.invoices, out: companiesFile, force: true }),
      () => ({ text: `${options.companies} companies; their tokens in ${companiesFile} (mode 0600)` }),
    [`$ ferry sandbox tenants create --platform ${integration.key} --count ${options.companies} --invoices ${options.invoices} --out ${shellPath(companiesFile, (p) => relative(cwd, p))}`]);

    const asClient: CommandContext = { io: sub, flags: { dataDir, client: account.id }, signal, connect: async () => clientConnection };
    const { startPlan } = await import('../../ops/managed/plan.js');
    const { printPlanStarted } = await import('../managed/print-status.js');
    await stage(4, 'ferry managed init: the plan', async () => printPlanStarted(sub, planPath, startPlan(planPath, {
      client: { id: account.id, name: CLIENT_NAME }, platform: integration.key, appClientId: app.clientId, companies: companiesFile,
    })), () => ({ text: `plan ${planPath}` }),
    [`$ ferry managed init --platform ${integration.key} --client ${account.id} --name "${CLIENT_NAME}" --companies ${shellPath(companiesFile, (p) => relative(cwd, p))} --app-client-id ${app.clientId} ${fileFlag}`.trimEnd()]);

    // The company the client's old application is still syncing: the last row (the first is the pilot).
    const rows = parse(readFileSync(companiesFile), { columns: true }) as Array<Record<string, string>>;
    const spoiled = rows[rows.length - 1]!;
    const schedule = new Date(Date.now() + 7 * 86_400_000).toISOString().slice(0, 10);
    const flagsFor = (n: number): StepFlags => ({
      file: planPath,
      ...(interactive ? {} : { by: DEMO_BY }),
      ...(n === 2 ? { date: schedule, contact: [CONTACT] } : {}),
    });
    const { runStep } = await import('../managed/runner.js');
    const stepCtx: CommandContext = { ...asClient, io: interactive ? { ...sub, canPrompt: true } : sub };
    let stepSix: InstanceType<typeof OpError> | undefined;
    let stoppedAfter: number | undefined;
    if (interactive) {
      say('');
      say(`Now the six steps, as ferry managed run ${fileFlag} asks them: you answer (Enter takes the default; step 4 needs a yes).`);
    }
    for (const n of STEP_NUMBERS) {
      const title = stepOf(readPlan(planPath), n).title;
      const extra = n === 2 ? ` --date ${schedule} --contact "${CONTACT}"` : '';
      const command = `$ ferry managed step ${n} --confirm${extra} ${fileFlag}`.trimEnd();
      const declined = await stage(4 + n, `Step ${n} of 6: ${title}`, async () => {
        try {
          // runStep is `ferry managed run`'s and `ferry managed step N`'s runner: the same questions, checks and output.
          await runStep(n, { ...flagsFor(n), ...(interactive ? {} : { confirm: true }) }, stepCtx, interactive);
        } catch (err) {
          // Step 6 fails by design (one company held back); a person may say no (nothing changed); anything else stops the rehearsal.
          if (n === 6 && err instanceof OpError && (err.kind === 'partial' || err.kind === 'failed')) stepSix = err;
          else if (interactive && err instanceof OpError && err.kind === 'input') return err.message;
          else throw err;
        }
        return undefined;
      }, (no) => {
        if (no) return { text: no, failed: true };
        const step = stepOf(readPlan(planPath), n);
        return { text: `${step.state}: ${step.notes}`, failed: step.state !== 'done' };
      }, interactive ? [STEP_ACTIONS[n], ...(extra ? [`What the client agreed is given as flags:${extra}`] : [])] : [STEP_ACTIONS[n], command]);
      if (declined) {
        stoppedAfter = n - 1;
        break;
      }
      if (n === 4) {
        // What `ferry sandbox tenants legacy-refresh ID` does: after syncing was confirmed disabled.
        const { outcome } = await sandbox.legacyRefresh(spoiled.externalId!);
        say('');
        say(`Meanwhile, the client's old application still syncs ${spoiled.companyName}: it refreshes that company's token after step 4 (ferry sandbox tenants legacy-refresh ${spoiled.externalId}): ${outcome}.`);
      }
      if (interactive && n < 6) {
        const { confirm } = await import('@inquirer/prompts');
        if (!(await confirm({ message: `Go on to step ${n + 1}?`, default: true }, { input: io.stdin, output: io.stderr, signal }))) {
          stoppedAfter = n;
          break;
        }
      }
    }

    const plan = readPlan(planPath);
    const failures = plan.outcomes.filter((o) => o.verdict === 'fail');
    const heldBack = failures.filter((o) => o.migration === 'not-imported')
      .map((o) => ({ row: o.row, companyName: o.companyName, ...(o.externalId ? { externalId: o.externalId } : {}), reasons: o.reasons }));
    const passed = plan.outcomes.length - failures.length;
    const { reportJson } = await import('../../ops/managed/report.js');
    const report = plan.report
      ? { verdict: reportJson(plan, planPath, new Date()).verdict, markdown: plan.report.files[0]!, html: plan.report.files[1]!, json: plan.report.files[2]! }
      : null;
    const pilot = plan.outcomes.find((o) => o.pilot && o.companyId);
    const next = kept && stoppedAfter !== undefined
      ? [
        `ferry managed status ${fileFlag}   # where the plan is`,
        `ferry ${dirFlag} managed run ${fileFlag}   # go on from step ${stoppedAfter + 1}${stoppedAfter < 3 ? ' (the embedded service\'s callback URL changes each run: step 3 says what to add to the app)' : ''}`,
      ]
      : kept
      ? [
        `ferry managed status ${fileFlag}   # the six steps: step 6 failed, and why`,
        `ferry managed report ${fileFlag}   # rewrites the handover report and prints its paths: open report.html`,
        `ferry ${dirFlag} managed step 6 --confirm ${fileFlag}   # the held-back company again (the others passed and are not checked again); it stays held back until the client authorizes it again`,
        ...(pilot ? [`ferry ${dirFlag} --client ${account.id} check ${pilot.companyId}   # the end-to-end check of the pilot on its own`] : []),
        'ferry managed init --platform KEY --client CLIENT_ID --name NAME --companies FILE.csv   # a real one, against ferry serve or the service',
      ]
      : [
        'ferry demo --managed --data-dir ./rehearsal   # keep the plan and the report this time, then:',
        'ferry managed status --file rehearsal/managed/plan.json',
        'ferry managed report --file rehearsal/managed/plan.json   # prints the handover report\'s paths: open report.html',
        `ferry integrations list --route managed   # the platforms migrated this way`,
      ];
    const summary: ManagedDemoSummary = {
      dataDir, kept, interactive, platform: integration.key, client: { id: account.id, name: CLIENT_NAME }, appClientId: app.clientId, callbackUrl,
      companies: options.companies, companiesFile, plan: planPath,
      steps: plan.steps.map(({ step, title, state, at, by, notes }) => ({ step, title, state, at, by, notes })),
      ...(stoppedAfter !== undefined ? { stoppedAfter } : {}),
      passed, failed: failures.length, heldBack, report, stages, seconds: Math.round((Date.now() - started) / 100) / 10, next,
    };
    const { printRecord } = await import('../output.js');
    printResult(io, summary, () => {
      say('');
      if (stoppedAfter !== undefined) {
        say(bold(stoppedAfter === 0 ? `Stopped before step 1 in ${summary.seconds}s.` : `Stopped after step ${stoppedAfter} in ${summary.seconds}s.`));
      } else {
        say(bold(`Done in ${summary.seconds}s: ${options.companies} ${integration.name} companies through the six steps; ${passed} passed the end-to-end check, ${failures.length} failed.`));
        for (const o of heldBack) say(`  Held back: ${o.companyName} (row ${o.row}): ${o.reasons.join('; ')}`);
        if (heldBack.length) say('  Its legacy application refreshed its token after step 4, so its tokens in the file are spent: importing it would only break it.');
      }
      printRecord(io, summary, [
        ['client', `${CLIENT_NAME} (${account.id})`], ['companies', options.companies], ['passed', passed], ['failed', failures.length],
        ['held back', heldBack.map((o) => o.companyName).join(', ')],
        ['plan', kept ? planPath : `${planPath} (removed)`],
        ['report', report ? `${report.html}${kept ? '' : ' (removed)'}` : 'not written'],
        ['seconds', summary.seconds], ['data dir', kept ? dataDir : `${dataDir} (removed)`],
      ]);
      say('');
      say(bold('Try next:'));
      for (const line of next) say(`  ${line}`);
    });
    // The rehearsal shows one failure on purpose; any other means it did not go as shown.
    if (stoppedAfter === undefined) {
      const unexpected = failures.filter((o) => o.externalId !== spoiled.externalId || o.migration !== 'not-imported');
      const wrong = unexpected.length > 0
        ? `${unexpected.length} other compan${unexpected.length === 1 ? 'y' : 'ies'} failed (first: ${unexpected[0]!.companyName}: ${unexpected[0]!.reasons.join('; ')})`
        : heldBack.length !== 1 ? `${spoiled.companyName} was not held back${stepSix ? '' : ' and step 6 passed'}` : '';
      if (wrong) {
        throw new CliError(`The rehearsal did not go as planned: ${wrong}.`, undefined,
          kept ? `See ${report?.html ?? planPath}.` : 'Run it again with --data-dir DIR to keep the plan and the report.');
      }
    }
  } finally {
    await clientApi?.close();
    await admin.dispose();
    if (!kept) rmSync(dataDir, { recursive: true, force: true });
    // The plan and the report are written with the umask's modes; the data dir is owner-only,
    // so they are made so now rather than the next command saying it had to.
    else privateDataDir(dataDir);
  }
}
