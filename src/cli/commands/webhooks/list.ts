// `ferry webhooks list`: the account's webhook consumers (never their secrets).
import type { Command } from 'commander';
import * as api from '../../../client/api.js';
import type { WebhookConsumerRecord } from '../../../client/wire.js';
import type { CommandContext } from '../../context.js';
import { printList, type Column } from '../../output.js';
import { examples, type Registrar } from '../../command.js';
import { ferryCommand, targetArgs } from '../../command-line.js';
import { webhooksGroup } from '../../webhooks/common.js';

export function register(program: Command, registrar: Registrar): void {
  webhooksGroup(program)
    .command('list')
    .description('List webhook consumers')
    .addHelpText('after', examples(
      'ferry webhooks list',
      'ferry webhooks list | cut -f1                  # every id, one per line',
      "ferry webhooks list --json | jq -r '.[] | select(.disabled) | .id'",
    ))
    .action(registrar.action(runWebhooksList));
}

export async function runWebhooksList(_options: object, ctx: CommandContext): Promise<void> {
  const { client } = await ctx.connect();
  const consumers = await api.webhooks(client, ctx.signal);
  const { io } = ctx;
  const columns: Column<WebhookConsumerRecord>[] = [
    { header: 'id', value: (c) => c.id },
    { header: 'url', value: (c) => c.url },
    { header: 'events', value: (c) => c.eventTypes.join(',') },
    { header: 'companyTags', value: (c) => (c.companyTags ?? []).join(',') },
    { header: 'state', value: (c) => (c.disabled ? `disabled${c.disabledReason ? `: ${c.disabledReason}` : ''}` : 'enabled') },
    { header: 'created', value: (c) => c.created },
  ];
  printList(io, consumers, columns);
  if (consumers.length === 0 && io.mode === 'tty') io.err(`No webhook consumers yet. Add one: ${ferryCommand(['webhooks', 'create'], targetArgs(ctx.flags))} --url URL --events TYPES   # types: ferry webhooks events`);
}
