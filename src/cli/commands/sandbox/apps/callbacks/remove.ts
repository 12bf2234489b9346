// `ferry sandbox apps callbacks remove APP_ID URL`: removes a callback URL from a sandbox app.
import type { Command } from 'commander';
import { examples, type Registrar } from '../../../../command.js';
import type { CommandContext } from '../../../../context.js';
import { callbacksGroup, changeCallback } from '../../../../sandbox/callbacks.js';

export function register(program: Command, registrar: Registrar): void {
  callbacksGroup(program)
    .command('remove')
    .description('Remove a callback URL from a sandbox app')
    .argument('<appId>', 'the app\'s client id (ferry sandbox apps list)')
    .argument('<url>', 'one of the app\'s callback URLs')
    .addHelpText('after', examples('ferry sandbox apps callbacks remove APP_CLIENT_ID http://127.0.0.1:8080/callback/qhyg'))
    .action(registrar.action(runCallbacksRemove));
}

export function runCallbacksRemove(_options: object, ctx: CommandContext, args: string[]): Promise<void> {
  return changeCallback('remove', ctx, args);
}
