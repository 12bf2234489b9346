// `ferry sandbox serve`: the sandbox platforms as a process of their own, for a service
// split across processes (every `ferry serve --sandbox-url URL` points at this one). In the
// foreground until SIGINT/SIGTERM, then a graceful stop and exit 0. Admin keys are judged
// by the ferry service at --service-url; without it the admin routes stay shut.
import type { Command } from 'commander';
import type { CommandContext } from '../../context.js';
import { CliError, EXIT } from '../../errors.js';
import { wholeNumber } from '../../flags.js';
import { resolveDataDir } from '../../globals.js';
import { printResult } from '../../io.js';
import { examples, group, type Registrar } from '../../command.js';
import { httpUrlFlag } from '../../serve/flags.js';
import { untilStopped } from '../../serve/until-stopped.js';

export interface SandboxServeOptions {
  host: string;
  port: number;
  serviceUrl?: string;
}

export function register(program: Command, registrar: Registrar): void {
  group(program, 'sandbox', 'The emulated third-party platforms (admin key)')
    .command('serve')
    .description('Run the sandbox platforms as their own process, in the foreground')
    .option('--host <host>', 'address to listen on (its admin routes mint tokens: keep it private)', '127.0.0.1')
    .option('--port <port>', 'port to listen on (0 picks a free one)', wholeNumber('--port'), 0)
    .option('--service-url <url>', 'the ferry service whose admin keys may use the admin routes (without it they stay shut)', httpUrlFlag('--service-url', 'http://127.0.0.1:8080'))
    .addHelpText('after', examples(
      'ferry sandbox serve --port 9090 --service-url http://127.0.0.1:8080 --data-dir ./sandbox-data',
      'ferry serve --port 8080 --sandbox-url http://127.0.0.1:9090 --data-dir ./ferry-data   # the service using it',
      'ferry sandbox serve --port 0 --json  # picks a free port, prints {"event":"listening","baseUrl":...}',
    ))
    .addHelpText('after', `State lives in <data-dir>/sandbox.db (global --data-dir; default $XDG_DATA_HOME/ferry):
apps, tenants and tokens survive a restart (settings start over). An admin request
(\`ferry sandbox tenants …\`, \`settings\`) is let in only if the service at --service-url says
its key is an admin key (GET /admin/sandbox); 503 while that service cannot be asked.
Either process may start first: neither contacts the other until it is used. Ctrl-C or
SIGTERM stops it, exit 0.
`)
    .action(registrar.action(runSandboxServe));
}

export async function runSandboxServe(options: SandboxServeOptions, ctx: CommandContext): Promise<void> {
  const { io, signal } = ctx;
  const dataDir = resolveDataDir(ctx.flags, io.env);
  const [{ startSandbox }, { privateDataDir }] = await Promise.all([import('../../../stack.js'), import('../../../lib/private-files.js')]);
  const notice = (message: string) => io.err(message, { force: true });
  // The sandbox keeps minted tokens: the data dir is private, as the service's is.
  privateDataDir(dataDir, notice);
  if (!options.serviceUrl) {
    notice('the sandbox admin routes are shut (every admin request gets 401): pass --service-url URL of the ferry service whose admin keys may use them');
  }
  let sandbox;
  try {
    sandbox = await startSandbox({ dataDir, host: options.host, port: options.port, ...(options.serviceUrl ? { serviceUrl: options.serviceUrl } : {}), onNotice: notice });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      throw new CliError(`Port ${options.port} on ${options.host} is already in use.`, EXIT.error, 'Pick another with --port, or --port 0 for a free one.');
    }
    throw err;
  }
  const { url } = sandbox;
  // The same name as ferry serve's listening line, so one script reads both.
  printResult(io, { event: 'listening', baseUrl: url, dataDir }, () => {
    io.out(`listening ${url}`);
    io.err(`sandbox platforms; data dir ${dataDir}${options.serviceUrl ? `; admin keys checked by ${options.serviceUrl}` : ''}`);
  });
  await untilStopped(io, signal, 'stopping: finishing in-flight requests…', () => sandbox.close());
}
