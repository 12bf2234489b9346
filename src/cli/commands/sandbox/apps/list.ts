// `ferry sandbox apps list`: the OAuth apps on the sandbox platforms (never their secrets).
import type { Command } from 'commander';
import type { CommandContext } from '../../../context.js';
import { printList } from '../../../output.js';
import { examples, group, type Registrar } from '../../../command.js';
import { platformFor } from '../../../sandbox/apps-lookups.js';
import { ferryCommand, targetArgs } from '../../../command-line.js';

export function register(program: Command, registrar: Registrar): void {
  group(group(program, 'sandbox', 'The emulated third-party platforms (admin key)'), 'apps', "OAuth apps on the sandbox platforms (a client's app)")
    .command('list')
    .description('List the OAuth apps on the sandbox platforms and their callback URLs')
    .option('--platform <key>', 'only this platform')
    .addHelpText('after', examples(
      'ferry sandbox apps list',
      'ferry sandbox apps list --platform qhyg',
      "ferry sandbox apps list --json | jq -r '.[] | select(.callbackUrls == []) | .clientId'",
    ))
    .action(registrar.action(runAppsList));
}

export async function runAppsList(options: { platform?: string }, ctx: CommandContext): Promise<void> {
  const connection = await ctx.connect();
  // An unknown key would list nothing; say it is unknown instead.
  const platform = options.platform === undefined ? undefined : (await platformFor(connection, options.platform, ctx.signal)).key;
  const { sandboxApi } = await import('../../../../client/sandbox-api.js');
  const apps = await (await sandboxApi(connection)).apps(platform);
  const { io } = ctx;
  if (apps.length === 0 && io.mode === 'tty') {
    const create = ferryCommand(['sandbox', 'apps', 'create'], targetArgs(ctx.flags));
    io.err(`No sandbox apps${platform ? ` on ${platform}` : ''}. Create one: ${create} --platform ${platform ?? 'KEY   # keys: ferry integrations list --route managed'}`);
    return;
  }
  printList(io, apps, [
    { header: 'clientId', value: (a) => a.clientId },
    { header: 'platform', value: (a) => a.platform },
    { header: 'created', value: (a) => a.created },
    { header: 'name', value: (a) => a.name },
    { header: 'callbackUrls', value: (a) => a.callbackUrls.join(' ') },
  ]);
}
