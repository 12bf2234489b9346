// `ferry sandbox apps callbacks add APP_ID URL`: registers a callback (redirect) URL on a
// sandbox app, which managed step 3 checks for the service's callback URL.
import type { Command } from 'commander';
import { examples, type Registrar } from '../../../../command.js';
import type { CommandContext } from '../../../../context.js';
import { callbacksGroup, changeCallback } from '../../../../sandbox/callbacks.js';

export function register(program: Command, registrar: Registrar): void {
  callbacksGroup(program)
    .command('add')
    .description('Register a callback URL on a sandbox app (already there: nothing changes)')
    .argument('<appId>', 'the app\'s client id (ferry sandbox apps list)')
    .argument('<url>', 'an absolute http(s) URL, e.g. the service\'s callback URL that managed step 3 shows')
    .addHelpText('after', examples(
      'ferry sandbox apps callbacks add APP_CLIENT_ID http://127.0.0.1:8080/callback/qhyg',
      'ferry managed step 3 --confirm     # then step 3 finds it',
    ))
    .action(registrar.action(runCallbacksAdd));
}

export function runCallbacksAdd(_options: object, ctx: CommandContext, args: string[]): Promise<void> {
  return changeCallback('add', ctx, args);
}
