// `ferry webhooks delete ID [--yes]`: removes a webhook consumer and its delivery log.
// Asks on a terminal; anywhere else --yes is required.
import type { Command } from 'commander';
import * as api from '../../../client/api.js';
import type { CommandContext } from '../../context.js';
import { printResult } from '../../io.js';
import { confirmOrYes } from '../../prompt.js';
import { examples, type Registrar } from '../../command.js';
import { webhooksGroup } from '../../webhooks/common.js';

export interface WebhooksDeleteOptions {
  yes?: boolean;
}

export function register(program: Command, registrar: Registrar): void {
  webhooksGroup(program)
    .command('delete')
    .description('Delete a webhook consumer with its delivery log; pending deliveries are dropped')
    .argument('<consumerId>', 'the consumer id (ferry webhooks list)')
    .option('--yes', 'do not ask (required without a terminal)')
    .addHelpText('after', examples(
      'ferry webhooks delete CONSUMER_ID            # asks first',
      'ferry webhooks delete CONSUMER_ID --yes      # scripts and CI',
    ))
    .action(registrar.action(runWebhooksDelete));
}

export async function runWebhooksDelete(options: WebhooksDeleteOptions, ctx: CommandContext, [consumerId]: string[]): Promise<void> {
  const { io } = ctx;
  let label = `webhook consumer ${consumerId}`;
  if (!options.yes) {
    // Refuse before any request when no one can answer; otherwise name what is at stake.
    if (!io.canPrompt) await confirmOrYes(io, false, `Delete ${label}?`);
    const { client } = await ctx.connect();
    const consumer = await api.webhook(client, consumerId!, ctx.signal);
    label = `webhook consumer ${consumer.id} (${consumer.url})`;
    await confirmOrYes(io, false, `Delete ${label}? Its delivery log goes with it, and pending deliveries are not sent.`, ctx.signal);
  }
  const { client } = await ctx.connect();
  await api.deleteWebhook(client, consumerId!, ctx.signal);
  printResult(io, { id: consumerId, deleted: true }, () => io.err(`Deleted ${label}.`));
}
