// `ferry webhooks replay ID DELIVERY_ID`: queues a delivery's event to the consumer again,
// under the same webhook-id, so a receiver that deduplicates by it sees it once.
import type { Command } from 'commander';
import * as api from '../../../client/api.js';
import type { CommandContext } from '../../context.js';
import { printResult } from '../../io.js';
import { examples, type Registrar } from '../../command.js';
import { ferryCommand, targetArgs } from '../../command-line.js';
import { webhooksGroup } from '../../webhooks/common.js';

export function register(program: Command, registrar: Registrar): void {
  webhooksGroup(program)
    .command('replay')
    .description('Send a delivery\'s event to the consumer again (same webhook-id)')
    .argument('<consumerId>', 'the consumer id (ferry webhooks list)')
    .argument('<deliveryId>', 'the delivery id (ferry webhooks deliveries CONSUMER_ID)')
    .addHelpText('after', examples(
      'ferry webhooks replay CONSUMER_ID DELIVERY_ID',
      'ferry webhooks deliveries CONSUMER_ID --status Failed --all | cut -f1 | xargs -n1 ferry webhooks replay CONSUMER_ID',
    ))
    .action(registrar.action(runWebhooksReplay));
}

export async function runWebhooksReplay(_options: object, ctx: CommandContext, [consumerId, deliveryId]: string[]): Promise<void> {
  const { client } = await ctx.connect();
  const queued = await api.replayWebhookDelivery(client, consumerId!, deliveryId!, ctx.signal);
  const { io } = ctx;
  const id = queued?.id ?? deliveryId!;
  printResult(io, queued ?? { consumerId, deliveryId, replayed: true }, () => {
    io.out(id);
    io.err(`Queued ${queued?.eventType ? `the ${queued.eventType} event` : 'the event'} of delivery ${deliveryId} again${id !== deliveryId ? ` (delivery ${id})` : ''}. Follow it: ${ferryCommand(['webhooks', 'deliveries', consumerId!], targetArgs(ctx.flags))}`);
  });
}
