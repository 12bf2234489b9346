// `ferry demo` (without --managed): the whole main job on the embedded service, stage by
// stage, through the same engines the commands drive and shown as they show them: sandbox
// tenants → `migrate tokens` → `sync --wait` → `export invoices` → a summary, then what to
// try next. Loaded by the command only when it runs.
import { createReadStream, existsSync, mkdirSync, rmSync } from 'node:fs';
import { isAbsolute, join, relative } from 'node:path';
import { createInterface } from 'node:readline';
import * as api from '../../client/api.js';
import type { IntegrationRecord } from '../../client/wire.js';
import { ApiClient } from '../../client/client.js';
import { sandboxApi } from '../../client/sandbox-api.js';
import { privateDataDir } from '../../lib/private-files.js';
import { SYNC_EVENTS } from '../../client/wait-for-change.js';
import { runExportPlan } from '../../ops/export/engine.js';
import { accountOf } from '../../ops/migrate/account.js';
import { runMigration } from '../../ops/migrate/engine.js';
import { companyIdsFromResults } from '../../ops/migrate/read-results.js';
import { targetIntegrations } from '../../ops/platform-knowledge.js';
import { runSyncs } from '../../ops/sync/engine.js';
import { dataTypeByKey } from '../../platforms/data-types.js';
import { createContext, type CommandContext, type Connection } from '../context.js';
import { UsageError } from '../errors.js';
import { openFeed } from '../event-waits.js';
import * as exportReport from '../export/report.js';
import { printResult, type IO } from '../io.js';
import * as migrateReport from '../migrate/report.js';
import { printRecord } from '../output.js';
import { startProgress } from '../progress.js';
import { printTenantsFile, writeTenantsFile } from '../sandbox/tenants-file.js';
import * as syncReport from '../sync/report.js';
import { logTo } from '../waiting.js';
import { startDemoRun, type DemoRun, type StageTiming } from './stage-io.js';
import { ferryCommand, targetArgs } from '../command-line.js';
import { formatCount } from '../../ops/progress.js';

export interface SelfServiceDemoOptions {
  companies: number;
  invoices: number;
  platform: string;
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

/** What the five stages made and found. */
interface StagesDone {
  ids: string[];
  invoices: number;
  paid: number;
  exportFile: string;
}

export async function runSelfServiceDemo(options: SelfServiceDemoOptions, ctx: CommandContext): Promise<void> {
  const { io, signal } = ctx;
  const run = startDemoRun(io, ctx.flags.dataDir, 5);
  const { dataDir, kept, say } = run;
  const work = join(dataDir, 'demo');
  // A demo run again in the same data dir starts afresh (a new client, new companies): the
  // earlier run's files would not fit the new tokens. Owner-only, as the data dir is.
  const again = existsSync(work);
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true, mode: 0o700 });
  const admin = createContext(run.sub, { dataDir }, signal);
  let clientApi: ApiClient | undefined;
  try {
    say(`ferry demo: ${options.companies} ${options.platform} organisations, ${options.invoices} invoices each, on the embedded service in ${dataDir}${kept ? '' : ' (temporary)'}`);
    if (again) say(`(the earlier demo's files in ${work} are replaced; its companies stay, under their own client)`);
    const adminConnection = await admin.connect();
    const integration = await api.integration(adminConnection.client, options.platform);
    if (integration.migrationRoute !== 'self-service') {
      throw new UsageError(`${integration.name} is migrated by the support team (ferry managed), not by ferry migrate tokens.`, 'Pick a self-service platform, e.g. --platform gbol (Xero).');
    }
    // The client whose companies these become, with its own API key, as a real client would migrate.
    const account = await api.createClientAccount(adminConnection.client, { name: 'Demo Accounting Ltd', plan: 'Paid' });
    clientApi = new ApiClient({ baseUrl: adminConnection.baseUrl, apiKey: account.apiKey });
    const client = clientApi;
    // Its flags are what the commands its stages print need to reach this service as this client.
    const asClient: CommandContext = { io: run.sub, flags: { dataDir: shownDir(dataDir), client: account.id }, signal, connect: async () => ({ client, baseUrl: adminConnection.baseUrl, embedded: true }) };
    const done = await runStages(run, options, { adminConnection, asClient, client, integration, accountName: account.name, work });
    const next = nextCommands(run, integration.key, account.id, done.ids[0] ?? 'COMPANY_ID');
    printDemoSummary(io, run, { platform: integration.key, platformName: integration.name, companies: options.companies }, done, next);
  } catch (err) {
    throw run.ended(err, signal);
  } finally {
    await clientApi?.close();
    await admin.dispose();
    if (!kept) rmSync(dataDir, { recursive: true, force: true });
    // The results and the export are written with the umask's modes: made owner-only now, as
    // the data dir is, rather than the next command saying it had to.
    else privateDataDir(dataDir);
  }
}

interface StagesOn {
  adminConnection: Connection;
  asClient: CommandContext;
  /** The client's own API client (asClient connects with it). */
  client: ApiClient;
  integration: IntegrationRecord;
  accountName: string;
  /** The folder the stages' files go in. */
  work: string;
}

/** The five stages, each as its command runs and shows it. */
async function runStages(run: DemoRun, options: SelfServiceDemoOptions, on: StagesOn): Promise<StagesDone> {
  const { asClient, integration, work } = on;
  const { signal } = asClient;
  const tokens = join(work, 'tokens.csv');
  await run.stage(1, `Sandbox: ${options.companies} ${integration.name} organisations and a CSV of their tokens`, async () => {
    const made = await writeTenantsFile(run.sub, signal, await sandboxApi(on.adminConnection), integration, { count: options.companies, invoices: options.invoices, out: tokens, force: true });
    printTenantsFile(run.sub, integration, made, targetArgs(asClient.flags));
  }, () => `${options.companies} organisations; their tokens in ${tokens} (mode 0600)`);

  const results = join(work, 'tokens.results.csv');
  await run.stage(2, `ferry migrate tokens ${tokens}`, () => migrate(asClient, tokens, results),
    () => `${options.companies} companies created, connected and authorized for ${on.accountName}; results in ${results}`);

  const read = await companyIdsFromResults(results);
  const { ids } = read;
  await run.stage(3, `ferry sync --from-results ${results} --wait`, () => sync(asClient, results, read),
    () => `${formatCount(ids.length)} companies synced: every data type Complete`);

  const exportFile = join(work, 'invoices.ndjson');
  const invoices = await run.stage(4, `ferry export invoices --all-companies --out ${exportFile}`, async () => {
    await exportInvoices(asClient, exportFile);
    return countLines(exportFile);
  }, (n) => `${formatCount(n)} invoices in ${exportFile}`);

  const { client } = on;
  const paid = await run.stage(5, 'Summary: paid invoices per company (query status=paid)', async () => {
    let total = 0;
    for (const id of ids) total += (await api.dataPage(client, id, 'invoices', { query: 'status=paid', pageSize: 1 }, signal)).totalResults;
    return total;
  }, (n) => `${formatCount(n)} of ${formatCount(invoices)} invoices are paid`);
  return { ids, invoices, paid, exportFile };
}

/** Lines of the file that hold something: the records of an ndjson export. */
async function countLines(file: string): Promise<number> {
  let lines = 0;
  for await (const line of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) if (line.trim()) lines += 1;
  return lines;
}

/** What to try next, each runnable as printed: on the data kept (with this demo's client id), or (a temp run) how to keep it. */
function nextCommands(run: DemoRun, platform: string, clientId: string, first: string): string[] {
  const dir = ['--data-dir', run.kept ? shownDir(run.dataDir) : './ferry-demo'];
  return run.kept
    ? [
      ferryCommand([...dir, '--client', clientId, 'companies', 'list']),
      ferryCommand([...dir, 'status', first]),
      ferryCommand([...dir, 'export', 'invoices', '--company', first, '--query', 'status=paid', '--format', 'csv']),
      `${ferryCommand([...dir, 'serve'])}            # the same service over HTTP, for your own code`,
      `${ferryCommand(['templates', 'show', platform])} > tokens.csv   # the CSV your own tokens go in`,
    ]
    : [
      `${ferryCommand(['demo', ...dir])}      # keep the data this time; it prints what to explore next`,
      `${ferryCommand(['templates', 'show', platform])} > tokens.csv   # the CSV your own tokens go in`,
      'ferry migrate tokens tokens.csv --dry-run   # check your file first',
    ];
}

/** The data dir as typed from here: relative below the working directory, else absolute. */
function shownDir(dir: string): string {
  const rel = relative(process.cwd(), dir);
  return rel === '' ? '.' : rel.startsWith('..') || isAbsolute(rel) ? dir : rel;
}

function printDemoSummary(io: IO, run: DemoRun, demo: { platform: string; platformName: string; companies: number }, done: StagesDone, next: string[]): void {
  const { dataDir, kept, say, bold } = run;
  const { ids, invoices, paid } = done;
  const summary: DemoSummary = {
    dataDir, kept, platform: demo.platform, companies: demo.companies, migrated: ids.length, synced: ids.length,
    invoices, paidInvoices: paid, ...(kept ? { exportFile: done.exportFile } : {}), stages: run.stages, seconds: run.seconds(), next,
  };
  printResult(io, summary, () => {
    say('');
    say(bold(`Done in ${summary.seconds}s: ${formatCount(ids.length)} companies migrated from ${demo.platformName}, synced, and ${formatCount(invoices)} invoices exported.`));
    printRecord(io, summary, [
      ['companies', ids.length], ['invoices', invoices], ['paid invoices', paid], ['seconds', summary.seconds],
      ['data dir', kept ? dataDir : `${dataDir} (removed)`],
    ]);
    say('');
    say(bold('Try next:'));
    for (const line of next) say(`  ${line}`);
  });
}

/** Stage 2, as `ferry migrate tokens FILE --no-sync --yes --results RESULTS` runs and shows it. */
async function migrate(ctx: CommandContext, file: string, resultsPath: string): Promise<void> {
  const { io, signal } = ctx;
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
    }, { client, onProgress: (p, limit) => progress.update(migrateReport.rowsProgress(p, limit, started)), account: () => accountOf(client) });
  } catch (err) {
    const worded = migrateReport.wordMigrationError(err, journalPath, signal);
    progress.fail(migrateReport.stoppedLine(worded));
    throw worded;
  }
  progress.done(summary.stoppedBy ? 'Stopped.' : 'Done.');
  const rerun = { args: ['migrate', 'tokens', file, '--no-sync', '--results', resultsPath], target: targetArgs(ctx.flags) };
  printResult(io, migrateReport.summaryJson(summary, rerun), () => migrateReport.printSummary(io, summary, rerun));
  const failure = migrateReport.migrationFailure(summary, rerun.target);
  if (failure) throw failure;
}

/** Stage 3, as `ferry sync --from-results RESULTS --wait --timeout 5m` runs and shows it. */
async function sync(ctx: CommandContext, resultsPath: string, read: { ids: string[]; skipped: Record<string, number> }): Promise<void> {
  const { io, signal } = ctx;
  const timeoutMs = 5 * 60_000;
  logTo(io)(syncReport.readFromResults(resultsPath, read));
  const companyIds = [...new Set(read.ids)];
  const deadline = Date.now() + timeoutMs;
  const { client, embedded } = await ctx.connect();
  const shown = await syncReport.syncShown(io, companyIds.length);
  // Opened before anything is queued, so that no pull can end unseen.
  const changes = await openFeed(ctx, client, {}, { types: SYNC_EVENTS, ...(companyIds.length === 1 ? { companyId: companyIds[0] } : {}) });
  const outcome = await runSyncs(client, { companyIds, wait: true, deadline, firstDelayMs: 500 }, { signal, ...shown, ...(changes ? { changes } : {}) })
    .finally(() => changes?.close());
  syncReport.printSyncSummary(io, outcome.summary);
  const failure = syncReport.syncFailure(outcome, { wait: true, timeoutMs, embedded, target: targetArgs(ctx.flags) });
  if (failure) throw failure;
}

/** Stage 4, as `ferry export invoices --all-companies --format ndjson --out FILE --force` runs and shows it. */
async function exportInvoices(ctx: CommandContext, out: string): Promise<void> {
  const { io, signal } = ctx;
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
      progress: (info) => progress.update(exportReport.exportProgress(info, started, true)),
    });
  } catch (err) {
    progress.fail(`Export of ${dataType} stopped.`);
    throw err;
  }
  progress.done(exportReport.exportDone(summary, dataType, 'ndjson', true));
  exportReport.exportNotes(io, summary);
  printResult(io, summary, () => io.out(summary.out!));
  const skipped = exportReport.exportSkipped(io, summary, dataType, { listPath: exportReport.notSyncedPath(out, dataType), target: targetArgs(ctx.flags) });
  if (skipped) throw skipped;
}
