// What `ferry sandbox apps callbacks add|remove APP_ID URL` share: their group, and the
// change itself (the app looked up first, so an unknown one or a URL it lacks is said
// plainly), printed the same way by both.
import type { Command } from 'commander';
import { group } from '../command.js';
import type { CommandContext } from '../context.js';
import { CliError } from '../errors.js';
import { printResult } from '../io.js';
import { appFor, callbackUrlArg } from './apps-lookups.js';
import { targetArgs } from '../command-line.js';

export function callbacksGroup(program: Command): Command {
  return group(
    group(group(program, 'sandbox', 'The emulated third-party platforms (admin key)'), 'apps', "OAuth apps on the sandbox platforms (a client's app)"),
    'callbacks', "A sandbox app's callback (redirect) URLs",
  );
}

export async function changeCallback(change: 'add' | 'remove', ctx: CommandContext, [appId, given]: string[]): Promise<void> {
  const url = callbackUrlArg(given ?? '');
  const clientId = (appId ?? '').trim();
  const { sandboxApi } = await import('../../client/sandbox-api.js');
  const sandbox = await sandboxApi(await ctx.connect());
  const app = await appFor(sandbox, clientId, targetArgs(ctx.flags), ctx.signal);
  const had = app.callbackUrls.includes(url);
  if (change === 'remove' && !had) {
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
