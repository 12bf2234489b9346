// `ferry worker`: syncs, pushes, schedules and webhook deliveries for a PostgreSQL database
// shared with API instances (`ferry serve --database … --no-worker`) and other workers, in
// the foreground until SIGINT/SIGTERM; then the work in flight reaches a safe point and it
// exits 0. A worker killed outright loses its leases, and the others take its work over.
import type { Command } from 'commander';
import { wholeNumber } from '../flags.js';
import { printResult } from '../io.js';
import type { CommandContext } from '../context.js';
import { CliError, EXIT, UsageError } from '../errors.js';
import { resolveDataDir } from '../globals.js';
import { examples, type Registrar } from '../command.js';
import { httpUrlFlag, WEBHOOK_TARGETS_HELP, webhookTargetOptions, webhookTargetsOf } from '../serve/flags.js';
import { untilStopped } from '../serve/until-stopped.js';
import { logFormatOf, OBSERVE_HELP, observeOptions, operatorLines, type ObserveFlags } from '../serve/observe.js';

/** As sync/pull-lease.ts: below it a lease could run out between two heartbeats. */
const MIN_LEASE_SECONDS = 3;

export interface WorkerOptions extends ObserveFlags {
  database?: string;
  sandboxUrl?: string;
  publicUrl?: string;
  secretKeyFile?: string;
  lease?: number;
  concurrency?: number;
  webhookAllowPrivate?: boolean;
  webhookAllow: string[];
}

export function register(program: Command, registrar: Registrar): void {
  observeOptions(webhookTargetOptions(program.command('worker')
    .description('Run syncs, pushes and webhook deliveries for a PostgreSQL database, beside `ferry serve --no-worker` instances')
    .option('--database <url>', 'the PostgreSQL database the API instances use (default FERRY_DATABASE_URL)')
    .option('--sandbox-url <url>', 'the `ferry sandbox serve` the API instances use', httpUrlFlag('--sandbox-url', 'http://127.0.0.1:9090'))
    .option('--public-url <url>', 'base of the links in event payloads (the API instances\' --public-url)', httpUrlFlag('--public-url', 'https://ferry.example.com'))
    .option('--secret-key-file <path>', 'file holding the token-encryption key, the same as every API instance\'s; ahead of FERRY_SECRET_KEY and <data-dir>/secret.key')
    .option('--lease <seconds>', 'how long a pull stays claimed without renewal: how soon another worker takes over a killed one\'s pulls (default 30)', wholeNumber('--lease', MIN_LEASE_SECONDS))
    .option('--concurrency <n>', 'pulls this worker runs at once (default 16)', wholeNumber('--concurrency', 1, 256))))
    .addHelpText('after', examples(
      'ferry worker --database postgres://ferry@db:5432/ferry --sandbox-url http://127.0.0.1:9090 --secret-key-file /etc/ferry/secret.key',
      'ferry worker --sandbox-url http://sandbox:9090 --webhook-allow hooks.internal:8443   # as the API instances: deliveries may reach that private host',
      'FERRY_DATABASE_URL=postgres://ferry@db/ferry ferry worker --sandbox-url http://sandbox:9090 --secret-key-file ./secret.key --json',
      'ferry worker --sandbox-url http://sandbox:9090 --metrics-port 9465 --metrics-host 0.0.0.0   # scraped and probed (/readyz) from another machine',
    ))
    .addHelpText('after', `Run as many workers as the sync load needs: each claims pulls, pushes and webhook deliveries
with leases, renewed while it works, so no two run the same job. Ctrl-C or SIGTERM lets the
pulls in flight reach a page boundary and exits 0. A worker killed outright (kill -9, a lost
machine) leaves its leases to run out (--lease), and another worker resumes its pulls from
their last written page: no record is lost or written twice.

Every process on the database needs the same token-encryption key; a worker with another
one is refused at start. With SQLite (no --database), \`ferry serve\` runs this work itself.
See docs/scaling.md.

A worker serves no API: its /healthz and /readyz (the database answers with every migration
applied, and its sync thread and delivery loop run; 503 from SIGTERM until exit) are on
its metrics port. ${OBSERVE_HELP}
${WEBHOOK_TARGETS_HELP}`)
    .action(registrar.action(runWorker));
}

export async function runWorker(options: WorkerOptions, ctx: CommandContext): Promise<void> {
  const { io, signal } = ctx;
  const database = options.database ?? (io.env.FERRY_DATABASE_URL || undefined);
  if (!database) {
    throw new UsageError('ferry worker needs the PostgreSQL database the API instances use.',
      'Give --database postgres://user@host:5432/db or set FERRY_DATABASE_URL. With SQLite, `ferry serve` runs the workers itself.');
  }
  if (!options.sandboxUrl) {
    throw new UsageError('ferry worker needs the platforms to sync from: give --sandbox-url URL, the same as the API instances\'.',
      'Start them with `ferry sandbox serve --port 9090 --service-url URL`, URL being an API instance\'s (e.g. http://127.0.0.1:8080, as its listening line says).');
  }
  const dataDir = resolveDataDir(ctx.flags, io.env);
  const { webhookTargets, note: targetsNote } = webhookTargetsOf(options);
  // Loaded here, not at the top: `ferry --help` stays free of the service's modules.
  const { startWorker, createLogger, SecretKeyError, DATABASE_UNAVAILABLE, describeTarget, parseTarget } = await import('../../stack.js');
  const format = logFormatOf(options, io);
  const logger = format === 'off' ? undefined : createLogger({ format, level: options.logLevel ?? 'info', stream: io.stderr, name: 'ferry-worker' });
  const say = operatorLines(io, logger);
  let worker;
  try {
    worker = await startWorker({
      dataDir, database, platformUrl: options.sandboxUrl, env: io.env,
      ...(options.publicUrl ? { publicUrl: options.publicUrl } : {}),
      ...(options.secretKeyFile ? { secretKeyFile: options.secretKeyFile } : {}),
      ...(options.lease ? { leaseSeconds: options.lease } : {}),
      ...(options.concurrency ? { concurrency: options.concurrency } : {}),
      webhookTargets,
      ...(options.metricsPort !== undefined ? { metricsPort: options.metricsPort, metricsHost: options.metricsHost ?? '127.0.0.1' } : {}),
      ...(logger ? { logger } : {}),
      onNotice: say.notice,
      onInternalError: (err, context) => say.internalError(err, `(${context})`, { where: context }),
    });
  } catch (err) {
    if ((err as { code?: unknown }).code === DATABASE_UNAVAILABLE) throw new CliError((err as Error).message, EXIT.error, (err as { hint?: string }).hint);
    if (err instanceof SecretKeyError) throw new CliError(err.message, err.kind === 'conflict' ? EXIT.usage : EXIT.error);
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      throw new CliError(`Port ${options.metricsPort} on ${options.metricsHost ?? '127.0.0.1'} is already in use.`, EXIT.error, 'Pick another with --metrics-port, or --metrics-port 0 for a free one.');
    }
    throw err;
  }
  const { metricsUrl } = worker;
  const where = describeTarget(parseTarget(database, io.env));
  printResult(io, { event: 'working', database: where, sandboxUrl: options.sandboxUrl, ...(metricsUrl ? { metricsUrl } : {}), dataDir, pid: process.pid }, () => {
    io.out(`working on ${where}`);
    const notes = [`sandbox platforms ${options.sandboxUrl}`, ...(metricsUrl ? [`metrics ${metricsUrl}`] : []), `data dir ${dataDir}`, ...(targetsNote ? [targetsNote] : []), 'Ctrl-C stops after the work in flight'];
    say.info(notes.join('; '), { event: 'working', ...(metricsUrl ? { metricsUrl } : {}) });
  });
  await untilStopped(io, signal, 'stopping: letting the work in flight reach a safe point…', () => worker.stop(),
    (line) => say.info(line, { event: line === 'stopped' ? 'stopped' : 'stopping' }));
}
