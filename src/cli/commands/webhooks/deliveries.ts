// `ferry webhooks deliveries ID [--status S] [--all]`: a consumer's delivery log, one line
// per delivery: when, which event, its status, the attempts so far and the receiver's last
// answer (status code or error) with its latency.
import type { Command } from 'commander';
import * as api from '../../../client/api.js';
import type { Page } from '../../../client/client.js';
import type { WebhookDeliveryRecord, WebhookDeliveryStatus } from '../../../client/wire.js';
import type { CommandContext } from '../../context.js';
import { UsageError } from '../../errors.js';
import { wholeNumber } from '../../flags.js';
import { printResult } from '../../io.js';
import { printTable } from '../../output.js';
import { examples, type Registrar } from '../../command.js';
import { ferryCommand, targetArgs } from '../../command-line.js';
import { deliveryColumns, deliveryStatus, STATUSES, webhooksGroup } from '../../webhooks/common.js';
import { formatCount } from '../../../ops/progress.js';

export interface WebhooksDeliveriesOptions {
  status?: WebhookDeliveryStatus;
  page?: number;
  all?: boolean;
}

export function register(program: Command, registrar: Registrar): void {
  webhooksGroup(program)
    .command('deliveries')
    .description('Show a consumer\'s delivery log: time, event, status, attempts, the receiver\'s last answer and its latency')
    .argument('<consumerId>', 'the consumer id (ferry webhooks list)')
    .option('--status <status>', `only deliveries in this state: ${STATUSES.join(', ')}`, deliveryStatus)
    .option('--page <n>', 'page number (default 1)', wholeNumber('--page', 1))
    .option('--all', 'every page')
    .addHelpText('after', examples(
      'ferry webhooks deliveries CONSUMER_ID',
      'ferry webhooks deliveries CONSUMER_ID --status Failed --all',
      'ferry webhooks deliveries CONSUMER_ID --json | jq .results',
    ))
    .action(registrar.action(runWebhooksDeliveries));
}

export async function runWebhooksDeliveries(options: WebhooksDeliveriesOptions, ctx: CommandContext, [consumerId]: string[]): Promise<void> {
  if (options.all && options.page !== undefined) throw new UsageError('--page and --all do not go together.', '--all starts at page 1 and follows every next page; drop --page.');
  const { client } = await ctx.connect();
  const { io, signal } = ctx;
  const query = { page: options.page, status: options.status };
  const columns = deliveryColumns(io.mode === 'tty');
  if (!options.all) {
    const page = await api.webhookDeliveriesPage(client, consumerId!, query, signal);
    printResult(io, page, () => {
      printTable(io, page.results, columns);
      footer(ctx, page, options.status, consumerId!);
    });
    return;
  }
  const kept: WebhookDeliveryRecord[] = [];
  for await (const page of api.webhookDeliveryPages(client, consumerId!, { status: options.status }, signal)) {
    // Piped output streams page by page; a table and a JSON array need every row first.
    if (io.mode === 'plain') printTable(io, page.results, columns);
    else kept.push(...page.results);
  }
  if (io.mode === 'json') io.json(kept);
  else if (io.mode === 'tty') {
    printTable(io, kept, columns);
    if (kept.length === 0) io.err(nothing(ctx, options.status, consumerId!));
  }
}

function nothing(ctx: CommandContext, status: WebhookDeliveryStatus | undefined, consumerId: string): string {
  const test = ferryCommand(['webhooks', 'test', consumerId], targetArgs(ctx.flags));
  return status ? `No ${status} deliveries.` : `No deliveries yet: events the consumer wants are delivered as they happen (${test} sends one).`;
}

function footer(ctx: CommandContext, page: Page<WebhookDeliveryRecord>, status: WebhookDeliveryStatus | undefined, consumerId: string): void {
  const { io } = ctx;
  if (page.results.length === 0 && page.pageNumber <= 1) {
    io.err(nothing(ctx, status, consumerId));
    return;
  }
  const pages = Math.max(1, Math.ceil(page.totalResults / page.pageSize));
  const noun = page.totalResults === 1 ? 'delivery' : 'deliveries';
  if (page.results.length === 0) {
    io.err(`Page ${page.pageNumber} is past the end: ${formatCount(page.totalResults)} ${noun} make ${pages} page${pages === 1 ? '' : 's'}.`);
    return;
  }
  const next = page._links?.next ? ` Next: --page ${page.pageNumber + 1}, or --all for every page.` : '';
  io.err(`Page ${page.pageNumber} of ${pages} (${formatCount(page.totalResults)} ${noun}).${next}`);
}
