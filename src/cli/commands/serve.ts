// `ferry serve`: the bundled service in the foreground until SIGINT/SIGTERM, then a
// graceful stop (no new connections, in-flight requests finish) and exit 0.
import { byteSize, durationArg, wholeNumber } from '../flags.js';
import { printResult } from '../io.js';
import type { Command } from 'commander';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CommandContext } from '../context.js';
import { CliError, EXIT, UsageError } from '../errors.js';
import { resolveDataDir } from '../globals.js';
import { examples, type Registrar } from '../command.js';
import { httpUrlFlag, WEBHOOK_TARGETS_HELP, webhookTargetOptions, webhookTargetsOf } from '../serve/flags.js';
import { untilStopped } from '../serve/until-stopped.js';
import { logFormatOf, OBSERVE_HELP, observeOptions, operatorLines, type ObserveFlags } from '../serve/observe.js';

/**
 * How long a stop waits for the requests in flight before it closes the listener (fastify's
 * close then waits for what is left): /readyz answers 503 meanwhile.
 */
const DRAIN_DEADLINE_MS = 30_000;

export interface ServeOptions extends ObserveFlags {
  host: string;
  port: number;
  sandboxHost?: string;
  sandboxUrl?: string;
  publicUrl?: string;
  trustProxy?: boolean;
  rateLimit?: number;
  maxStreamsPerKey?: number;
  maxStreamsPerAccount?: number;
  maxStreams?: number;
  maintenance?: boolean;
  secretKeyFile?: string;
  database?: string;
  /** Milliseconds a request may take to arrive in full (--request-timeout). */
  requestTimeout?: number;
  /** false with --no-worker: the API only, syncs, pushes and webhook deliveries left to `ferry worker`. */
  worker: boolean;
  webhookAllowPrivate?: boolean;
  webhookAllow: string[];
  /** Bytes of attachments per account. */
  attachmentQuota?: number;
  /** Milliseconds a stop keeps serving with /readyz answering 503, at least (--drain-delay). */
  drainDelay?: number;
}

export function register(program: Command, registrar: Registrar): void {
  observeOptions(webhookTargetOptions(program.command('serve')
    .description('Run the bundled service in the foreground')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--port <port>', 'port to listen on (0 picks a free one)', wholeNumber('--port'), 8080)
    .option('--rate-limit <n>', 'requests per second per API key (0 = no limit; default 2000)', wholeNumber('--rate-limit'))
    .option('--max-streams-per-key <n>', 'open event streams per API key, then 429 (default 10)', wholeNumber('--max-streams-per-key', 1))
    .option('--max-streams-per-account <n>', 'open event streams per account, all its keys together, then 429 (default 50)', wholeNumber('--max-streams-per-account', 1))
    .option('--max-streams <n>', 'open event streams in this process, then 503 (default: half the open-file limit, or 1000)', wholeNumber('--max-streams', 1))
    .option('--request-timeout <duration>', 'time a request may take to arrive in full, headers and body, before 408 and a closed connection (default 60s)', durationArg('--request-timeout'))
    .option('--maintenance', 'answer every request with 503 (offline for maintenance)')
    .option('--attachment-quota <size>', 'bytes of attachments each account may hold, e.g. 500MiB or 2GiB (default 1GiB; beyond it uploads get 413)', byteSize('--attachment-quota'))
    .option('--public-url <url>', 'base of the links in responses (default: the listening address)', httpUrlFlag('--public-url', 'https://ferry.example.com'))
    .option('--trust-proxy', 'build links from X-Forwarded-Proto/X-Forwarded-Host (only behind a proxy that sets them)')
    .option('--database <url>', 'run on this PostgreSQL database (postgres://user@host:5432/db), shared by any number of instances and workers; default FERRY_DATABASE_URL, else SQLite in the data dir')
    .option('--no-worker', 'serve the API only: syncs, pushes and webhook deliveries run in `ferry worker` processes')
    .option('--secret-key-file <path>', 'file holding the token-encryption key (64 hex characters or base64 of 32 bytes); ahead of FERRY_SECRET_KEY and <data-dir>/secret.key')
    .option('--sandbox-host <host>', 'address of the sandbox platforms (their admin routes need the admin key; default 127.0.0.1)')
    .option('--sandbox-url <url>', 'use the sandbox platforms of a `ferry sandbox serve` at URL instead of starting them here', httpUrlFlag('--sandbox-url', 'http://127.0.0.1:9090'))
    .option('--drain-delay <duration>', 'on SIGTERM, keep serving this long with /readyz answering 503 before closing, so a load balancer takes the instance out first (default: only while requests are in flight)', durationArg('--drain-delay'))))
    .addHelpText('after', examples(
      'ferry serve --port 8080 --data-dir ./ferry-data',
      'ferry serve --port 0 --json          # picks a free port, prints {"event":"listening",...}',
      'ferry serve --rate-limit 10          # 10 requests/second per key, then 429',
      'ferry serve --max-streams-per-key 2 --max-streams-per-account 5   # fewer open `GET /events/stream` per client',
      'ferry serve --request-timeout 2m     # clients on slow links get 2 minutes to send a 10 MiB upload',
      'ferry serve --attachment-quota 5GiB  # each account may keep 5 GiB of attachments',
      'ferry serve --host 0.0.0.0 --public-url https://ferry.example.com   # behind a load balancer',
      'ferry serve --secret-key-file /etc/ferry/secret.key   # every instance shares the token-encryption key',
      'ferry serve --database postgres://ferry@db:5432/ferry --no-worker --sandbox-url http://127.0.0.1:9090   # one of several API instances',
      'ferry sandbox serve --port 9090 --service-url http://127.0.0.1:8080 --data-dir ./sandbox-data &',
      'ferry serve --port 8080 --sandbox-url http://127.0.0.1:9090 --data-dir ./ferry-data   # the sandbox as its own process',
      'ferry serve --webhook-allow-private   # local development: webhooks may go to 127.0.0.1 and the LAN',
      'ferry serve --webhook-allow hooks.internal --webhook-allow 10.0.0.5:8080   # these private receivers only',
      'ferry serve --metrics-port 9464      # Prometheus scrapes http://127.0.0.1:9464/metrics; /readyz for the balancer',
      'ferry serve --log-format json --log-level warn 2>>/var/log/ferry.jsonl   # failures only, a JSON object a line',
      'ferry serve --host 0.0.0.0 --drain-delay 15s   # on SIGTERM, 15 s of 503 on /readyz before the listener closes',
    ))
    .addHelpText('after', `State lives in --data-dir (global; default $XDG_DATA_HOME/ferry). The first start writes the
admin key to <data-dir>/admin.key (mode 0600). Ctrl-C or SIGTERM turns /readyz to 503, lets
in-flight requests finish (and waits --drain-delay), stops accepting connections and exits 0.

OAuth tokens are encrypted at rest with the key of --secret-key-file, else FERRY_SECRET_KEY,
else <data-dir>/secret.key (written on the first start). The start is refused when the key
file and FERRY_SECRET_KEY hold different keys, or when the data dir has a secret.key whose
key differs from the file's (its sealed tokens would not open).

GET /healthz (200 while the process serves) and GET /readyz (200 when the database answers
with every migration applied and the background work runs; 503 with the reasons otherwise,
and from SIGTERM until exit) need no key. ${OBSERVE_HELP}
With --database (or FERRY_DATABASE_URL) the service runs on PostgreSQL: the schema is brought
up to date at start (under a lock, so instances starting together migrate once), and every
instance and \`ferry worker\` on that database serves the same accounts and data. Give them
all the same token-encryption key and the same --sandbox-url; see docs/scaling.md.

Open event streams (GET /events/stream) are capped per API key, per account and in all by
--max-streams-per-key, --max-streams-per-account and --max-streams; the caps count the streams
of this process, so behind a load balancer each instance allows that many.

The sandbox platforms run in a thread of this process over the same data dir, unless
--sandbox-url names a \`ferry sandbox serve\` process; that sandbox asks this service
(its --service-url) whether a key is an admin key. Either may start first.

${WEBHOOK_TARGETS_HELP}`)
    .action(registrar.action(runServe));
}

export async function runServe(options: ServeOptions, ctx: CommandContext): Promise<void> {
  const { io, signal } = ctx;
  if (options.sandboxUrl && options.sandboxHost) {
    throw new UsageError('--sandbox-host and --sandbox-url do not go together.', '--sandbox-host places the sandbox this process starts; with --sandbox-url it starts none.');
  }
  const dataDir = resolveDataDir(ctx.flags, io.env);
  const { webhookTargets, note: targetsNote } = webhookTargetsOf(options);
  // Loaded here, not at the top: `ferry --help` stays free of the service's modules.
  const database = options.database ?? (io.env.FERRY_DATABASE_URL || undefined);
  if (!options.worker && !database) {
    throw new UsageError('--no-worker needs a PostgreSQL database (--database or FERRY_DATABASE_URL).',
      'On SQLite no other process can run the syncs, pushes and webhook deliveries: leave --no-worker out.');
  }
  const { startStack, createLogger, SecretKeyError, DATABASE_UNAVAILABLE, describeTarget, parseTarget } = await import('../../stack.js');
  const format = logFormatOf(options, io);
  const logger = format === 'off' ? undefined : createLogger({ format, level: options.logLevel ?? 'info', stream: io.stderr, name: 'ferry-serve' });
  const say = operatorLines(io, logger);
  let stack;
  try {
    stack = await startStack({
      dataDir,
      host: options.host,
      port: options.port,
      ...(options.sandboxUrl ? { sandboxUrl: options.sandboxUrl } : { sandboxHost: options.sandboxHost ?? '127.0.0.1' }),
      ...(options.publicUrl ? { publicUrl: options.publicUrl } : {}),
      trustProxy: options.trustProxy ?? false,
      rateLimit: options.rateLimit,
      streamLimits: {
        ...(options.maxStreamsPerKey !== undefined ? { perKey: options.maxStreamsPerKey } : {}),
        ...(options.maxStreamsPerAccount !== undefined ? { perAccount: options.maxStreamsPerAccount } : {}),
        ...(options.maxStreams !== undefined ? { total: options.maxStreams } : {}),
      },
      ...(options.requestTimeout !== undefined ? { requestTimeoutMs: options.requestTimeout } : {}),
      ...(options.attachmentQuota !== undefined ? { attachmentQuota: options.attachmentQuota } : {}),
      maintenance: options.maintenance ?? false,
      secretKeyFile: options.secretKeyFile,
      ...(database ? { database } : {}),
      ...(options.worker ? {} : { startWorker: false, startWebhooks: false }),
      webhookTargets,
      env: io.env,
      ...(options.metricsPort !== undefined ? { metricsPort: options.metricsPort, metricsHost: options.metricsHost ?? '127.0.0.1' } : {}),
      ...(logger ? { logger } : {}),
      onNotice: say.notice,
      onInternalError: (err, correlationId) => say.internalError(err, correlationId, { correlationId }),
    });
  } catch (err) {
    if ((err as { code?: unknown }).code === DATABASE_UNAVAILABLE) throw new CliError((err as Error).message, EXIT.error, (err as { hint?: string }).hint);
    if (err instanceof SecretKeyError) throw new CliError(err.message, err.kind === 'conflict' ? EXIT.usage : EXIT.error);
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      // The API's port or the metrics port: the error names the one it could not take.
      const metrics = options.metricsPort !== undefined && (err as { port?: number }).port === options.metricsPort && options.metricsPort !== options.port;
      throw new CliError(`Port ${metrics ? options.metricsPort : options.port} on ${metrics ? options.metricsHost ?? '127.0.0.1' : options.host} is already in use.`, EXIT.error,
        metrics ? 'Pick another with --metrics-port, or --metrics-port 0 for a free one.' : 'Pick another with --port, or --port 0 for a free one.');
    }
    throw err;
  }
  const { baseUrl, sandboxUrl, metricsUrl } = stack;
  // Where, never the URL itself: it may hold a password.
  const store = database ? describeTarget(parseTarget(database, io.env)) : undefined;
  printResult(io, { event: 'listening', baseUrl, sandboxUrl, ...(metricsUrl ? { metricsUrl } : {}), dataDir, ...(store ? { database: store } : {}), worker: options.worker }, () => {
    io.out(`listening ${baseUrl}`);
    const notes = [
      `sandbox platforms ${sandboxUrl}${options.sandboxUrl ? ' (--sandbox-url)' : ''}`,
      ...(metricsUrl ? [`metrics ${metricsUrl}`] : []),
      `data dir ${dataDir}`,
      ...(store ? [`database ${store}`] : []),
      `admin key in ${dataDir}/admin.key`,
      ...(options.worker ? [] : ['no worker (syncs, pushes and webhook deliveries run in `ferry worker`)']),
      ...(options.maintenance ? ['maintenance mode (every request gets 503)'] : []),
      ...(targetsNote ? [targetsNote] : []),
    ];
    say.info(notes.join('; '), { event: 'listening', baseUrl, ...(metricsUrl ? { metricsUrl } : {}) });
  });
  await untilStopped(io, signal, 'stopping: /readyz answers 503; finishing in-flight requests…', async () => {
    // A balancer polling /readyz takes the instance out while the requests in flight finish.
    await Promise.all([stack.drain(DRAIN_DEADLINE_MS), options.drainDelay ? sleep(options.drainDelay) : undefined]);
    await stack.close();
  }, (line) => say.info(line, { event: line === 'stopped' ? 'stopped' : 'stopping' }));
}
