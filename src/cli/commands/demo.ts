// `ferry demo`: the whole main job on the embedded service, stage by stage, through the
// same engines the commands drive and shown as they show them: sandbox tenants →
// `migrate tokens` → `sync --wait` → `export invoices` → a summary, then what to try next.
// A fresh temp data dir by default (removed at the end); --data-dir keeps everything.
// --managed rehearses the support team's managed migration instead (cli/demo/managed.ts).
import { wholeNumber } from '../flags.js';
import * as api from '../../client/api.js';
import type { Command } from 'commander';
import type { CommandContext } from '../context.js';
import { UsageError } from '../errors.js';
import { printResult } from '../io.js';
import { examples, type Registrar } from '../command.js';
import type { StageTiming } from '../demo/stage-io.js';

export interface DemoOptions {
  companies: number;
  /** Default 200 (--managed: 20, as every company is synced and checked end to end). */
  invoices?: number;
  /** Default gbol (--managed: qhyg). */
  platform?: string;
  managed?: boolean;
}

export interface DemoSummary {
  dataDir: string;
  kept: boolean;
  platform: string;
  companies: number;
  migrated: number;
  synced: number;
  invoices: number;
  paidInvoices: number;
  exportFile?: string;
  stages: StageTiming[];
  seconds: number;
  next: string[];
}

export function register(program: Command, registrar: Registrar): void {
  program.command('demo')
    .description('The whole job on the embedded service in a minute: sandbox tenants → migrate tokens → sync → export invoices')
    .option('--managed', "rehearse the support team's six-step managed migration instead, with one company held back")
    .option('--companies <n>', 'sandbox organisations to migrate', wholeNumber('--companies', 1, 200), 20)
    .option('--invoices <n>', 'invoices per organisation (default 200; --managed: 20)', wholeNumber('--invoices', 1, 10_000))
    .option('--platform <key>', 'the platform to migrate from: self-service (default gbol), or with --managed managed-only (default qhyg)')
    .addHelpText('after', `${examples(
      'ferry demo',
      'ferry demo --data-dir ./ferry-demo     # keep the data, then explore it with --data-dir ./ferry-demo',
      'ferry demo --companies 50 --json | jq .seconds',
      'ferry demo --managed --data-dir ./rehearsal   # then: ferry managed status --file rehearsal/managed/plan.json',
    )}
By default everything happens in a fresh temporary data dir, removed at the end.
--managed: a client, its app at the platform with the service's callback URL, sandbox
companies, a plan and the six steps (on a terminal you answer what ferry managed run
asks; otherwise each is ferry managed step N --confirm), then the handover report.
After step 4 the client's old application refreshes one company's token, so step 6
holds it back and the report shows why. The plan, company file and report are under
DIR/managed/ with --data-dir.
`)
    .action(registrar.action(runDemo));
}

export async function runDemo(flags: DemoOptions, ctx: CommandContext): Promise<void> {
  const { io, signal } = ctx;
  if (ctx.flags.baseUrl || ctx.flags.profile) throw new UsageError('ferry demo runs on the embedded service.', 'Drop --base-url/--profile (give --data-dir to keep the demo\'s data).');
  if (flags.managed) {
    const { runManagedDemo } = await import('../demo/managed.js');
    return runManagedDemo({ companies: flags.companies, invoices: flags.invoices ?? 20, platform: flags.platform ?? 'qhyg' }, ctx);
  }
  const options = { companies: flags.companies, invoices: flags.invoices ?? 200, platform: flags.platform ?? 'gbol' };
  const { mkdtempSync, mkdirSync, rmSync, createReadStream } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join, resolve } = await import('node:path');
  const { createInterface } = await import('node:readline');
  const { createContext } = await import('../context.js');
  const { ApiClient } = await import('../../client/client.js');
  const { stageIO } = await import('../demo/stage-io.js');
  const { default: chalk } = await import('chalk');

  const started = Date.now();
  const kept = ctx.flags.dataDir !== undefined;
  const dataDir = kept ? resolve(ctx.flags.dataDir!) : mkdtempSync(join(tmpdir(), 'ferry-demo-'));
  const work = join(dataDir, 'demo');
  mkdirSync(work, { recursive: true });
  // Only the embedded service: no remote target, profile or client from the environment.
  const env: NodeJS.ProcessEnv = { ...io.env, XDG_CONFIG_HOME: join(dataDir, 'config') };
  for (const name of ['FERRY_BASE_URL', 'FERRY_PROFILE', 'FERRY_API_KEY', 'FERRY_CLIENT_ID', 'FERRY_DATA_DIR']) delete env[name];
  const sub = stageIO(io, env);
  const say = (line: string) => {
    if (io.mode !== 'json') io.err(line);
  };
  const bold = (text: string) => (io.color ? chalk.bold(text) : text);
  const ok = (text: string) => (io.color ? `${chalk.green('✓')} ${text}` : `  ${text}`);
  const stages: DemoSummary['stages'] = [];
  const stage = async <T>(n: number, title: string, work: () => Promise<T>, done: (value: T) => string): Promise<T> => {
    say('');
    say(bold(`[${n}/5] ${title}`));
    const at = Date.now();
    const value = await work();
    const seconds = Math.round((Date.now() - at) / 100) / 10;
    stages.push({ stage: title, seconds });
    say(ok(`${done(value)} (${seconds}s)`));
    return value;
  };

  const admin = createContext(sub, { dataDir }, signal);
  let clientApi: InstanceType<typeof ApiClient> | undefined;
  try {
    say(`ferry demo: ${options.companies} ${options.platform} organisations, ${options.invoices} invoices each, on the embedded service in ${dataDir}${kept ? '' : ' (temporary)'}`);
    const adminConnection = await admin.connect();
    const integration = await api.integration(adminConnection.client, options.platform);
    if (integration.migrationRoute !== 'self-service') {
      throw new UsageError(`${integration.name} is migrated by the support team (ferry managed), not by ferry migrate tokens.`, 'Pick a self-service platform, e.g. --platform gbol (Xero).');
    }
    // The client whose companies these become, with its own API key, as a real client would migrate.
    const account = await api.createClientAccount(adminConnection.client, { name: 'Demo Accounting Ltd', plan: 'Paid' });
    clientApi = new ApiClient({ baseUrl: adminConnection.baseUrl, apiKey: account.apiKey });
    const client = clientApi;
    const asClient: CommandContext = { io: sub, flags: { dataDir }, signal, connect: async () => ({ client, baseUrl: adminConnection.baseUrl, embedded: true }) };

    const tokens = join(work, 'tokens.csv');
    const { sandboxApi } = await import('../../client/sandbox-api.js');
    const { printTenantsFile, writeTenantsFile } = await import('../sandbox/tenants-file.js');
    await stage(1, `Sandbox: ${options.companies} ${integration.name} organisations and a CSV of their tokens`, async () => {
      const made = await writeTenantsFile(sub, signal, await sandboxApi(adminConnection), integration, { count: options.companies, invoices: options.invoices, out: tokens, force: true });
      printTenantsFile(sub, integration, made);
    }, () => `${options.companies} organisations; their tokens in ${tokens} (mode 0600)`);

    const results = join(work, 'tokens.results.csv');
    await stage(2, `ferry migrate tokens ${tokens}`, () => migrate(asClient, tokens, results),
      () => `${options.companies} companies created, connected and authorized for ${account.name}; results in ${results}`);

    const { companyIdsFromResults } = await import('../../ops/migrate/read-results.js');
    const read = await companyIdsFromResults(results);
    const { ids } = read;
    await stage(3, `ferry sync --from-results ${results} --wait`, () => sync(asClient, results, read),
      () => `${ids.length} companies synced: every data type Complete`);

    const exportFile = join(work, 'invoices.ndjson');
    const invoices = await stage(4, `ferry export invoices --all-companies --out ${exportFile}`, async () => {
      await exportInvoices(asClient, exportFile);
      let lines = 0;
      for await (const line of createInterface({ input: createReadStream(exportFile), crlfDelay: Infinity })) if (line.trim()) lines += 1;
      return lines;
    }, (n) => `${n.toLocaleString('en-US')} invoices in ${exportFile}`);

    const paid = await stage(5, 'Summary: paid invoices per company (query status=paid)', async () => {
      let total = 0;
      for (const id of ids) total += (await api.dataPage(clientApi!, id, 'invoices', { query: 'status=paid', pageSize: 1 }, signal)).totalResults;
      return total;
    }, (n) => `${n.toLocaleString('en-US')} of ${invoices.toLocaleString('en-US')} invoices are paid`);

    const dirFlag = kept ? `--data-dir ${dataDir}` : '--data-dir ./ferry-demo';
    const first = ids[0] ?? 'COMPANY_ID';
    const next = kept
      ? [
        `ferry ${dirFlag} --client ${account.id} companies list`,
        `ferry ${dirFlag} status ${first}`,
        `ferry ${dirFlag} export invoices --company ${first} --query "status=paid" --format csv`,
        `ferry ${dirFlag} serve            # the same service over HTTP, for your own code`,
        `ferry templates show ${integration.key}           # the CSV your own tokens go in`,
      ]
      : [
        `ferry demo ${dirFlag}      # keep the data this time, then explore it:`,
        `ferry ${dirFlag} companies list --client <the demo client id>`,
        `ferry templates show ${integration.key}          # the CSV your own tokens go in`,
        'ferry migrate tokens tokens.csv --dry-run   # check your file first',
      ];
    const summary: DemoSummary = {
      dataDir, kept, platform: integration.key, companies: options.companies, migrated: ids.length, synced: ids.length,
      invoices, paidInvoices: paid, ...(kept ? { exportFile } : {}), stages, seconds: Math.round((Date.now() - started) / 100) / 10, next,
    };
    const { printRecord } = await import('../output.js');
    printResult(io, summary, () => {
      say('');
      say(bold(`Done in ${summary.seconds}s: ${ids.length} companies migrated from ${integration.name}, synced, and ${invoices.toLocaleString('en-US')} invoices exported.`));
      printRecord(io, summary, [
        ['companies', ids.length], ['invoices', invoices], ['paid invoices', paid], ['seconds', summary.seconds],
        ['data dir', kept ? dataDir : `${dataDir} (removed)`],
      ]);
      say('');
      say(bold('Try next:'));
      for (const line of next) say(`  ${line}`);
    });
  } finally {
    await clientApi?.close();
    await admin.dispose();
    if (!kept) rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Stage 2, as `ferry migrate tokens FILE --no-sync --yes --results RESULTS` runs and shows it. */
async function migrate(ctx: CommandContext, file: string, resultsPath: string): Promise<void> {
  const { io, signal } = ctx;
  const { createReadStream, existsSync } = await import('node:fs');
  const [{ runMigration }, { accountOf }, { targetIntegrations }, report, { startProgress }] = await Promise.all([
    import('../../ops/migrate/engine.js'), import('../../ops/migrate/account.js'), import('../../ops/platform-knowledge.js'),
    import('../migrate/report.js'), import('../progress.js'),
  ]);
  const journalPath = `${resultsPath}.journal`;
  const { client } = await ctx.connect();
  const integrations = await targetIntegrations(client, signal);
  if (existsSync(journalPath)) io.err(`Resuming from ${journalPath}: finished rows are skipped, half-done ones continue.`);
  const progress = await startProgress(io, 'Validating every row before writing…');
  const started = Date.now();
  let summary;
  try {
    summary = await runMigration({
      openInput: () => createReadStream(file), inputName: file, integrations, delimiter: ',', encoding: 'utf8', csvEscape: true,
      dryRun: false, noSync: true, failFast: false, resultsPath, journalPath, signal,
    }, { client, onProgress: (p, limit) => progress.update(report.rowsProgress(p, limit, started)), account: () => accountOf(client) });
  } catch (err) {
    progress.fail('Stopped.');
    throw report.wordMigrationError(err, journalPath);
  }
  progress.done(summary.stoppedBy ? 'Stopped.' : 'Done.');
  printResult(io, report.summaryJson(summary), () => report.printSummary(io, summary));
  const failure = report.migrationFailure(summary);
  if (failure) throw failure;
}

/** Stage 3, as `ferry sync --from-results RESULTS --wait --timeout 5m` runs and shows it. */
async function sync(ctx: CommandContext, resultsPath: string, read: { ids: string[]; skipped: Record<string, number> }): Promise<void> {
  const { io, signal } = ctx;
  const timeoutMs = 5 * 60_000;
  const [{ runSyncs }, { SYNC_EVENTS }, { openFeed }, report, { logTo }] = await Promise.all([
    import('../../ops/sync/engine.js'), import('../../client/wait-for-change.js'), import('../event-waits.js'), import('../sync/report.js'), import('../waiting.js'),
  ]);
  logTo(io)(report.readFromResults(resultsPath, read));
  const companyIds = [...new Set(read.ids)];
  const deadline = Date.now() + timeoutMs;
  const { client, embedded } = await ctx.connect();
  const shown = await report.syncShown(io, companyIds.length);
  // Opened before anything is queued, so that no pull can end unseen.
  const changes = await openFeed(ctx, client, {}, { types: SYNC_EVENTS, ...(companyIds.length === 1 ? { companyId: companyIds[0] } : {}) });
  const outcome = await runSyncs(client, { companyIds, wait: true, deadline, firstDelayMs: 500 }, { signal, ...shown, ...(changes ? { changes } : {}) })
    .finally(() => changes?.close());
  report.printSyncSummary(io, outcome.summary);
  const failure = report.syncFailure(outcome, { wait: true, timeoutMs, embedded });
  if (failure) throw failure;
}

/** Stage 4, as `ferry export invoices --all-companies --format ndjson --out FILE --force` runs and shows it. */
async function exportInvoices(ctx: CommandContext, out: string): Promise<void> {
  const { io, signal } = ctx;
  const [{ runExportPlan }, { dataTypeByKey }, report, { startProgress }] = await Promise.all([
    import('../../ops/export/engine.js'), import('../../platforms/data-types.js'), import('../export/report.js'), import('../progress.js'),
  ]);
  const dataType = 'invoices';
  const { client } = await ctx.connect();
  const progress = await startProgress(io, `Exporting ${dataType}…`);
  const started = Date.now();
  let summary;
  try {
    summary = await runExportPlan({
      dataType, dataPath: dataTypeByKey(dataType)!.path, knownDataType: true, allCompanies: true, pageSize: 5000, format: 'ndjson',
      csvEscape: true, out, force: true, resume: false,
    }, {
      client, stream: io.stdout, signal,
      note: (line) => {
        if (io.mode !== 'json') io.err(line);
      },
      progress: (info) => progress.update(report.exportProgress(info, started, true)),
    });
  } catch (err) {
    progress.fail(`Export of ${dataType} stopped.`);
    throw err;
  }
  progress.done(report.exportDone(summary, dataType, 'ndjson', true));
  report.exportNotes(io, summary);
  printResult(io, summary, () => io.out(summary.out!));
  const skipped = report.exportSkipped(io, summary, dataType);
  if (skipped) throw skipped;
}
