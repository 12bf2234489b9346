// `ferry sandbox apps callbacks add|remove APP_ID URL`: the callback (redirect) URLs of a
// sandbox app, which managed step 3 checks for the service's callback URL.
import type { Command } from 'commander';
import { printResult } from '../../../../io.js';
import type { CommandContext } from '../../../../context.js';
import { examples, group, type Registrar } from '../../../../command.js';
import { appFor, callbackUrlArg } from '../../../../sandbox/apps-lookups.js';

type Change = 'add' | 'remove';

export function register(program: Command, registrar: Registrar): void {
  const callbacks = group(
    group(group(program, 'sandbox', 'The emulated third-party platforms (admin key)'), 'apps', "OAuth apps on the sandbox platforms (a client's app)"),
    'callbacks', "A sandbox app's callback (redirect) URLs",
  );
  callbacks
    .command('add')
    .description('Register a callback URL on a sandbox app (already there: nothing changes)')
    .argument('<appId>', 'the app\'s client id (ferry sandbox apps list)')
    .argument('<url>', 'an absolute http(s) URL, e.g. the service\'s callback URL that managed step 3 shows')
    .addHelpText('after', examples(
      'ferry sandbox apps callbacks add 9F2C… http://127.0.0.1:8080/callback/qhyg',
      'ferry managed step 3 --confirm     # then step 3 finds it',
    ))
    .action(registrar.action((_options: object, ctx, args) => runAppsCallbacks('add', ctx, args)));
  callbacks
    .command('remove')
    .description('Remove a callback URL from a sandbox app')
    .argument('<appId>', 'the app\'s client id (ferry sandbox apps list)')
    .argument('<url>', 'one of the app\'s callback URLs')
    .addHelpText('after', examples('ferry sandbox apps callbacks remove 9F2C… http://127.0.0.1:8080/callback/qhyg'))
    .action(registrar.action((_options: object, ctx, args) => runAppsCallbacks('remove', ctx, args)));
}

export async function runAppsCallbacks(change: Change, ctx: CommandContext, [appId, given]: string[]): Promise<void> {
  const url = callbackUrlArg(given ?? '');
  const clientId = (appId ?? '').trim();
  const { sandboxApi } = await import('../../../../../client/sandbox-api.js');
  const sandbox = await sandboxApi(await ctx.connect());
  const app = await appFor(sandbox, clientId, ctx.signal);
  const had = app.callbackUrls.includes(url);
  if (change === 'remove' && !had) {
    const { CliError } = await import('../../../../errors.js');
    throw new CliError(`App ${app.clientId} has no callback URL ${url}.`, 1,
      app.callbackUrls.length ? `Its callback URLs: ${app.callbackUrls.join(', ')}` : 'It has no callback URLs.');
  }
  const changed = change === 'add' ? !had : true;
  const callbackUrls = !changed ? app.callbackUrls
    : change === 'add' ? await sandbox.addCallback(app.clientId, url) : await sandbox.removeCallback(app.clientId, url);

  const { io } = ctx;
  printResult(io, { clientId: app.clientId, platform: app.platform, url, changed, callbackUrls }, () => {
    const said = !changed ? `${url} is already a callback URL of app ${app.clientId}; nothing changed.`
      : change === 'add' ? `Added ${url} to app ${app.clientId}.` : `Removed ${url} from app ${app.clientId}.`;
    io.err(`${said} Its callback URLs (${callbackUrls.length}):`);
    for (const u of callbackUrls) io.out(u);
  });
}
