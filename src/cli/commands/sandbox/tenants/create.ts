// `ferry sandbox tenants create`: emulated organisations on a platform, and a CSV of their
// fresh tokens that `ferry migrate tokens` takes as it is. Any number up to MAX_TENANTS:
// made in calls the sandbox accepts, each batch's rows appended to a temp file as it
// arrives (memory stays flat), which becomes --out only once every tenant is in it.
import { randomInt } from 'node:crypto';
import { wholeNumber } from '../../../flags.js';
import { printResult } from '../../../io.js';
import * as api from '../../../../client/api.js';
import type { Command } from 'commander';
import type { CommandContext } from '../../../context.js';
import { CliError, EXIT, exitCodeFor, isWorded } from '../../../errors.js';
import { assertWritable, openFileAtomic } from '../../../files.js';
import { MAX_TENANTS, TENANTS_PER_CALL, TenantsStoppedError, createTenants } from '../../../../ops/sandbox/engine.js';
import { formatCount, formatDuration, rateLine, silentProgress } from '../../../../ops/progress.js';
import { examples, group, type Registrar } from '../../../command.js';

export interface TenantsCreateOptions {
  platform: string;
  count: number;
  invoices?: number;
  seed?: number;
  out: string;
  force?: boolean;
}

export function register(program: Command, registrar: Registrar): void {
  group(group(program, 'sandbox', 'The emulated third-party platforms (admin key)'), 'tenants', 'Emulated organisations and their tokens')
    .command('create')
    .description('Create sandbox tenants and write a ready-to-migrate CSV of their tokens')
    .requiredOption('--platform <key>', 'integration key, e.g. gbol (Xero); see ferry integrations list')
    .option('--count <n>', `how many tenants, 1-${formatCount(MAX_TENANTS)} (made ${formatCount(TENANTS_PER_CALL)} per call to the sandbox)`, wholeNumber('--count', 1, MAX_TENANTS), 1)
    .option('--invoices <n>', 'invoices per tenant (default 100, up to 10,000,000)', wholeNumber('--invoices', 0))
    .option('--seed <n>', 'seed of the first tenant; tenant k gets seed+k (the same seed gives the same data)', wholeNumber('--seed', 0, 2 ** 32 - 1))
    .option('--out <file>', 'CSV to write (mode 0600: it holds tokens); appears only once complete', 'tokens.csv')
    .option('--force', 'replace --out if it exists (the old file stays until the new one is complete)')
    .addHelpText('after', examples(
      'ferry sandbox tenants create --platform gbol --count 50 --out tokens.csv',
      'ferry sandbox tenants create --platform gbol --count 2500 --invoices 10 --out tokens.csv --force',
      'ferry sandbox tenants create --platform gbol --count 1 --invoices 200000 --out big.csv',
      'ferry migrate tokens tokens.csv        # then migrate them',
    ))
    .action(registrar.action(runTenantsCreate));
}

export async function runTenantsCreate(options: TenantsCreateOptions, ctx: CommandContext): Promise<void> {
  const { io } = ctx;
  const overwrite = options.force ?? false;
  assertWritable(options.out, overwrite);
  const connection = await ctx.connect();
  const integration = await api.integration(connection.client, options.platform);
  const { sandboxApi } = await import('../../../../client/sandbox-api.js');
  const sandbox = await sandboxApi(connection);
  // Chosen here, not by the sandbox per call, so the batches' seeds run on from one another.
  const seed = options.seed ?? randomInt(2 ** 32);

  const { stringify } = await import('csv-stringify/sync');
  const tokenColumns = integration.tokenFields.map((f) => f.name);
  const file = await openFileAtomic(options.out, { mode: 0o600, overwrite });
  const s = options.count === 1 ? '' : 's';
  // A bar only where someone watches it; a pipe gets the final lines alone.
  const { startProgress } = await import('../../../progress.js');
  const title = `Creating ${formatCount(options.count)} ${integration.name} sandbox tenant${s}…`;
  const progress = io.stderrIsTTY ? await startProgress(io, title) : await silentProgress(title);
  const started = Date.now();
  let first: { id: string; name: string } | undefined;
  let last: { id: string; name: string } | undefined;
  let invoices = 0;
  // The calls under way finish (their tenants exist either way) so the count is exact; say why nothing stops yet.
  const stopping = 'Stopping once the calls under way to the sandbox have answered (Ctrl-C again to quit at once)…';
  const onStop = () => (io.stderrIsTTY ? progress.update(stopping) : io.err(stopping));
  ctx.signal.addEventListener('abort', onStop, { once: true });
  try {
    await file.write(stringify([['companyName', 'externalId', 'platformKey', ...tokenColumns]]));
    await createTenants(sandbox, {
      platform: integration.key, count: options.count, seed, signal: ctx.signal,
      ...(options.invoices !== undefined ? { invoices: options.invoices } : {}),
    }, async (tenants, done) => {
      await file.write(stringify(tenants.map((t) => [t.name, t.id, integration.key, ...tokenColumns.map((c) => t.tokens[c] ?? '')])));
      first ??= tenants[0] && { id: tenants[0].id, name: tenants[0].name };
      const end = tenants.at(-1);
      if (end) last = { id: end.id, name: end.name };
      invoices = end?.invoices ?? invoices;
      if (!ctx.signal.aborted) progress.update(`${bar(done, options.count)} ${rateLine(done, options.count, started, 'tenants')}`);
    });
    await file.commit();
  } catch (err) {
    await file.discard();
    progress.fail('Stopped.');
    throw err instanceof TenantsStoppedError ? stoppedMidway(err, options.out, integration.key) : err;
  } finally {
    ctx.signal.removeEventListener('abort', onStop);
  }
  progress.done(`${bar(options.count, options.count)} ${formatCount(options.count)} tenants in ${formatDuration((Date.now() - started) / 1000)}.`);

  // --json: a summary, never the tenants (100,000 of them would be the memory the CSV saves).
  printResult(io, { platform: integration.key, out: options.out, count: options.count, invoices, seed, first, last }, () => {
    io.err(`Created ${formatCount(options.count)} ${integration.name} sandbox tenant${s} (${formatCount(invoices)} invoice${invoices === 1 ? '' : 's'} each).`);
    io.out(options.out);
    io.err(`Tokens written to ${options.out} (mode 0600). Next: ferry migrate tokens ${options.out}`);
  });
}

/** What exists after a stop, and what to do: the created tenants stay in the sandbox, --out is as it was. */
function stoppedMidway(err: TenantsStoppedError, out: string, platform: string): CliError {
  const made = err.created === 0 ? 'No tenant was created' : `${formatCount(err.created)} of ${formatCount(err.total)} tenants were created (they exist in the sandbox, unused)`;
  const what = `${made}; ${out} was not written.`;
  const hint = `Run the same command again for a complete set${err.created === 0 ? '' : `; ferry sandbox tenants list --platform ${platform} shows the ones already made`}.`;
  if (err.interrupted) return new CliError(`Interrupted: ${what}`, EXIT.interrupted, hint);
  const causeHint = isWorded(err.cause) ? err.cause.hint : undefined;
  const said = /[.!?]$/.test(err.message) ? err.message : `${err.message}.`;
  return new CliError(`${said} ${what}`, exitCodeFor(err.cause), causeHint ? `${causeHint} ${hint}` : hint);
}

/** A 20-cell bar for the terminal line: [██████░░░░…]. */
function bar(done: number, total: number): string {
  const filled = Math.round((20 * done) / Math.max(1, total));
  return `[${'█'.repeat(filled)}${'░'.repeat(20 - filled)}]`;
}
