// `ferry demo`: the whole main job on the embedded service, stage by stage, through the
// same engines the commands drive and shown as they show them: sandbox tenants →
// `migrate tokens` → `sync --wait` → `export invoices` → a summary, then what to try next
// (cli/demo/self-service.ts). A fresh temp data dir by default (removed at the end);
// --data-dir keeps everything. --managed rehearses the support team's managed migration
// instead (cli/demo/managed.ts). Both are loaded only when the command runs.
import { wholeNumber } from '../flags.js';
import type { Command } from 'commander';
import type { CommandContext } from '../context.js';
import { UsageError } from '../errors.js';
import { examples, type Registrar } from '../command.js';

export interface DemoOptions {
  companies: number;
  /** Default 200 (--managed: 20, as every company is synced and checked end to end). */
  invoices?: number;
  /** Default gbol (--managed: qhyg). */
  platform?: string;
  managed?: boolean;
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
  if (ctx.flags.baseUrl || ctx.flags.profile) throw new UsageError('ferry demo runs on the embedded service.', 'Drop --base-url/--profile (give --data-dir to keep the demo\'s data).');
  if (flags.managed) {
    const { runManagedDemo } = await import('../demo/managed.js');
    return runManagedDemo({ companies: flags.companies, invoices: flags.invoices ?? 20, platform: flags.platform ?? 'qhyg' }, ctx);
  }
  const { runSelfServiceDemo } = await import('../demo/self-service.js');
  return runSelfServiceDemo({ companies: flags.companies, invoices: flags.invoices ?? 200, platform: flags.platform ?? 'gbol' }, ctx);
}
