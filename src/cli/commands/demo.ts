// `ferry demo`: the whole main job on the embedded service, stage by stage, by calling the
// same run functions the commands use: sandbox tenants → `migrate tokens` → `sync --wait`
// → `export invoices` → a summary, then what to try next. A fresh temp data dir by
// default (removed at the end); --data-dir keeps everything. --managed rehearses the
// support team's managed migration instead (cli/demo/managed.ts).
import { wholeNumber } from '../flags.js';
import * as api from '../../client/api.js';
import type { Command } from 'commander';
import type { Connection, CommandContext } from '../context.js';
import { UsageError } from '../errors.js';
import { printResult, type IO } from '../io.js';
import { examples, type Registrar } from '../command.js';

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
  stages: Array<{ stage: string; seconds: number }>;
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

/** An IO for the stages: their data output is the demo's business, their progress shows as it goes. */
export function stageIO(io: IO, env: NodeJS.ProcessEnv): IO {
  const silent = io.quiet || io.mode === 'json';
  return {
    ...io,
    env,
    quiet: silent,
    mode: io.mode === 'json' ? 'plain' : io.mode,
    canPrompt: false,
    out: () => {},
    json: () => {},
    err: (line) => {
      if (!silent) io.stderr.write(`${line}\n`);
    },
  };
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
    const clientConnection: Connection = { client: clientApi, baseUrl: adminConnection.baseUrl, embedded: true };
    const asClient: CommandContext = { io: sub, flags: { dataDir }, signal, connect: async () => clientConnection };

    const tokens = join(work, 'tokens.csv');
    const { runTenantsCreate } = await import('./sandbox/tenants/create.js');
    await stage(1, `Sandbox: ${options.companies} ${integration.name} organisations and a CSV of their tokens`, () => runTenantsCreate({
      platform: integration.key, count: options.companies, invoices: options.invoices, out: tokens, force: true,
    }, admin), () => `${options.companies} organisations; their tokens in ${tokens} (mode 0600)`);

    const results = join(work, 'tokens.results.csv');
    const { runMigrateTokens } = await import('./migrate/tokens.js');
    await stage(2, `ferry migrate tokens ${tokens}`, () => runMigrateTokens({
      sync: false, delimiter: ',', yes: true, results,
    }, asClient, [tokens]), () => `${options.companies} companies created, connected and authorized for ${account.name}; results in ${results}`);

    const { runSync } = await import('./sync.js');
    const { companyIdsFromResults } = await import('../../ops/migrate/read-results.js');
    const { ids } = await companyIdsFromResults(results);
    await stage(3, `ferry sync --from-results ${results} --wait`, () => runSync({ fromResults: results, wait: true, timeout: 5 * 60_000 }, asClient, []),
      () => `${ids.length} companies synced: every data type Complete`);

    const exportFile = join(work, 'invoices.ndjson');
    const { runExport } = await import('./export.js');
    const invoices = await stage(4, `ferry export invoices --all-companies --out ${exportFile}`, async () => {
      await runExport({ allCompanies: true, pageSize: 5000, format: 'ndjson', out: exportFile, force: true }, asClient, ['invoices']);
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
