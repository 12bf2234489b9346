// `ferry webhooks events`: the event types a consumer (or `ferry listen`) can ask for, from
// the target's catalogue (GET /events/types), one a line; --json: the list.
import type { Command } from 'commander';
import type { CommandContext } from '../../context.js';
import { printResult } from '../../io.js';
import { CliError, EXIT } from '../../errors.js';
import { examples, type Registrar } from '../../command.js';
import { webhooksGroup } from '../../webhooks/common.js';
import { knownEventTypes } from '../../webhooks/event-types.js';

export function register(program: Command, registrar: Registrar): void {
  webhooksGroup(program)
    .command('events')
    .description('List the event types a webhook consumer or ferry listen can subscribe to')
    .addHelpText('after', examples(
      'ferry webhooks events',
      'ferry webhooks events | grep write            # the write outcomes',
      'ferry webhooks events --json',
    ))
    .action(registrar.action(runWebhooksEvents));
}

export async function runWebhooksEvents(_options: object, ctx: CommandContext): Promise<void> {
  const { client } = await ctx.connect();
  const types = await knownEventTypes(client, ctx.signal);
  if (!types) {
    throw new CliError('This target does not list its event types (no GET /events/types: the public API alone).', EXIT.error,
      'docs/events.md in the ferry repository lists them.');
  }
  const { io } = ctx;
  printResult(io, types, () => {
    for (const type of types) io.out(type);
  });
}
