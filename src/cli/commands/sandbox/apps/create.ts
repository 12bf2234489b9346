// `ferry sandbox apps create`: an OAuth app on a sandbox platform, standing in for the
// client's own app that a managed migration needs (step 1's app id, step 3's callback URL).
import type { Command } from 'commander';
import { ferryCommand, targetArgs } from '../../../command-line.js';
import { printResult } from '../../../io.js';
import type { CommandContext } from '../../../context.js';
import { printRecord } from '../../../output.js';
import { examples, group, type Registrar } from '../../../command.js';
import { callbackUrlArg, platformFor } from '../../../sandbox/apps-lookups.js';

export interface AppsCreateOptions {
  platform: string;
  name?: string;
  callbackUrl?: string[];
}

export function register(program: Command, registrar: Registrar): void {
  group(group(program, 'sandbox', 'The emulated third-party platforms (admin key)'), 'apps', "OAuth apps on the sandbox platforms (a client's app)")
    .command('create')
    .description("Register an OAuth app on a sandbox platform; prints its client id and its secret (shown once)")
    .requiredOption('--platform <key>', 'integration key, e.g. qhyg (QuickBooks Online); see ferry integrations list')
    .option('--name <name>', 'the app\'s name (default "Sandbox app")')
    .option('--callback-url <url>', 'a callback (redirect) URL to register (repeat for more)', (value: string, previous: string[] = []) => [...previous, value])
    .addHelpText('after', examples(
      'ferry sandbox apps create --platform qhyg --name "Acme app"',
      'ferry sandbox apps create --platform qhyg --callback-url http://127.0.0.1:8080/callback/qhyg',
      "ferry sandbox apps create --platform qhyg --json | jq -r .clientId     # then: ferry managed init … --app-client-id ID",
    ))
    .action(registrar.action(runAppsCreate));
}

export async function runAppsCreate(options: AppsCreateOptions, ctx: CommandContext): Promise<void> {
  const callbackUrls = (options.callbackUrl ?? []).map((url) => callbackUrlArg(url, '--callback-url'));
  const name = options.name?.trim();
  if (options.name !== undefined && !name) {
    const { UsageError } = await import('../../../errors.js');
    throw new UsageError('--name is empty.', 'Give the app a name, or leave --name out for "Sandbox app".');
  }
  const connection = await ctx.connect();
  const integration = await platformFor(connection, options.platform, ctx.signal);
  const { sandboxApi } = await import('../../../../client/sandbox-api.js');
  const sandbox = await sandboxApi(connection);
  const app = await sandbox.createApp({ platform: integration.key, ...(name ? { name } : {}), callbackUrls });

  const { io } = ctx;
  printResult(io, app, () => {
    io.err(`Created the app "${app.name}" on ${integration.name} (${integration.key}). Its client secret is shown only this once: keep it now.`);
    printRecord(io, app, [
      ['clientId', app.clientId],
      ['clientSecret', app.clientSecret],
      ['platform', app.platform],
      ['name', app.name],
      ['callbackUrls', app.callbackUrls.join(' ')],
      ['created', app.created],
    ]);
    io.err(`Next: ${ferryCommand(['managed', 'init', '--platform', app.platform, '--client', 'CLIENT_ID', '--app-client-id', app.clientId], targetArgs(ctx.flags))}`);
    io.err(`  with CLIENT_ID the id of the account whose companies move (${ferryCommand(['admin', 'clients', 'list'], targetArgs(ctx.flags))} lists them).`);
  });
}
