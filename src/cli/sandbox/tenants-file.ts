// Sandbox tenants and a ready-to-migrate CSV of their fresh tokens, as `ferry sandbox
// tenants create` makes them (and both demos): the engine (ops/sandbox/engine.ts) creates
// them batch by batch, each batch's rows are appended to a temp file as it arrives (memory
// stays flat), and the file becomes `out` only once every tenant is in it.
import { ferryCommand } from '../command-line.js';
import { randomInt } from 'node:crypto';
import type { SandboxApi } from '../../client/sandbox-api.js';
import type { IntegrationRecord } from '../../client/wire.js';
import { createTenants, TenantsStoppedError } from '../../ops/sandbox/engine.js';
import { formatCount, formatDuration, rateLine, silentProgress } from '../../ops/progress.js';
import { CliError, EXIT, exitCodeFor, isWorded } from '../errors.js';
import { openFileAtomic } from '../files.js';
import { printResult, type IO } from '../io.js';

export interface TenantsFileOptions {
  count: number;
  invoices?: number;
  /** The first tenant's seed (default: a random one). */
  seed?: number;
  out: string;
  force?: boolean;
  /** The flags that reach this service, for the commands a stop suggests (targetArgs). */
  target?: string[];
}

/** What was written (the --json summary: never the tenants themselves). */
export interface TenantsFile {
  platform: string;
  out: string;
  count: number;
  invoices: number;
  seed: number;
  first?: { id: string; name: string };
  last?: { id: string; name: string };
}

export async function writeTenantsFile(io: IO, signal: AbortSignal, sandbox: SandboxApi, integration: IntegrationRecord, options: TenantsFileOptions): Promise<TenantsFile> {
  // Chosen here, not by the sandbox per call, so the batches' seeds run on from one another.
  const seed = options.seed ?? randomInt(2 ** 32);
  const { stringify } = await import('csv-stringify/sync');
  const tokenColumns = integration.tokenFields.map((f) => f.name);
  const file = await openFileAtomic(options.out, { mode: 0o600, overwrite: options.force ?? false });
  const s = options.count === 1 ? '' : 's';
  // A bar only where someone watches it; a pipe gets the final lines alone.
  const { startProgress } = await import('../progress.js');
  const title = `Creating ${formatCount(options.count)} ${integration.name} sandbox tenant${s}…`;
  const progress = io.stderrIsTTY ? await startProgress(io, title) : await silentProgress(title);
  const started = Date.now();
  let first: TenantsFile['first'];
  let last: TenantsFile['last'];
  let invoices = 0;
  // The calls under way finish (their tenants exist either way) so the count is exact; say why nothing stops yet.
  const stopping = 'Stopping once the calls under way to the sandbox have answered (Ctrl-C again to quit at once)…';
  const onStop = () => (io.stderrIsTTY ? progress.update(stopping) : io.err(stopping));
  signal.addEventListener('abort', onStop, { once: true });
  try {
    await file.write(stringify([['companyName', 'externalId', 'platformKey', ...tokenColumns]]));
    await createTenants(sandbox, {
      platform: integration.key, count: options.count, seed, signal,
      ...(options.invoices !== undefined ? { invoices: options.invoices } : {}),
    }, async (tenants, done) => {
      await file.write(stringify(tenants.map((t) => [t.name, t.id, integration.key, ...tokenColumns.map((c) => t.tokens[c] ?? '')])));
      first ??= tenants[0] && { id: tenants[0].id, name: tenants[0].name };
      const end = tenants.at(-1);
      if (end) last = { id: end.id, name: end.name };
      invoices = end?.invoices ?? invoices;
      if (!signal.aborted) progress.update(`${bar(done, options.count)} ${rateLine(done, options.count, started, 'tenants')}`);
    });
    await file.commit();
  } catch (err) {
    await file.discard();
    progress.fail('Stopped.');
    throw err instanceof TenantsStoppedError ? stoppedMidway(err, options.out, ferryCommand(['sandbox', 'tenants', 'list', '--platform', integration.key], options.target)) : err;
  } finally {
    signal.removeEventListener('abort', onStop);
  }
  progress.done(`${bar(options.count, options.count)} ${formatCount(options.count)} tenants in ${formatDuration((Date.now() - started) / 1000)}.`);
  return { platform: integration.key, out: options.out, count: options.count, invoices, seed, first, last };
}

/** The file's path on stdout, what was made and what to run next on stderr, against the same `target` (--json: the summary). */
export function printTenantsFile(io: IO, integration: IntegrationRecord, made: TenantsFile, target: string[] = []): void {
  const s = made.count === 1 ? '' : 's';
  printResult(io, made, () => {
    io.err(`Created ${formatCount(made.count)} ${integration.name} sandbox tenant${s} (${formatCount(made.invoices)} invoice${made.invoices === 1 ? '' : 's'} each).`);
    io.out(made.out);
    if (integration.migrationRoute !== 'managed') {
      io.err(`Tokens written to ${made.out} (mode 0600). Next: ${ferryCommand(['migrate', 'tokens', made.out, '--dry-run'], target)}`);
      return;
    }
    // ferry migrate tokens refuses a managed platform's rows: the file is a managed migration's company file.
    io.err(`Tokens written to ${made.out} (mode 0600). Next: ${ferryCommand(['managed', 'init', '--platform', integration.key, '--client', 'CLIENT_ID', '--companies', made.out], target)}`);
    io.err(`  with CLIENT_ID the id of the account whose companies move (${ferryCommand(['admin', 'clients', 'list'], target)} lists them).`);
  });
}

/** What exists after a stop, and what to do: the created tenants stay in the sandbox, --out is as it was. */
function stoppedMidway(err: TenantsStoppedError, out: string, list: string): CliError {
  const made = err.created === 0 ? 'No tenant was created' : `${formatCount(err.created)} of ${formatCount(err.total)} tenants were created (they exist in the sandbox, unused)`;
  const what = `${made}; ${out} was not written.`;
  const hint = `Run the same command again for a complete set${err.created === 0 ? '' : `; ${list} shows the ones already made`}.`;
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
