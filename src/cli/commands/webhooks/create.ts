// `ferry webhooks create --url URL --events a,b [--company-tag key:value ...] [--disabled]`:
// a webhook consumer. Its id goes to stdout; its signing secret exists in the clear only in
// this answer, so it is shown on a terminal (or with --json) and never again.
import type { Command } from 'commander';
import * as api from '../../../client/api.js';
import type { CommandContext } from '../../context.js';
import { ferryCommand, targetArgs } from '../../command-line.js';
import { printResult } from '../../io.js';
import { printRecord } from '../../output.js';
import { examples, type Registrar } from '../../command.js';
import { companyTags, consumerUrl, eventTypes, webhooksGroup } from '../../webhooks/common.js';
import { checkEventTypes } from '../../webhooks/event-types.js';

export interface WebhooksCreateOptions {
  url: string;
  events: string[];
  companyTag?: string[];
  disabled?: boolean;
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

export function register(program: Command, registrar: Registrar): void {
  webhooksGroup(program)
    .command('create')
    .description('Create a webhook consumer: where the account\'s events are delivered, signed')
    .requiredOption('--url <url>', 'the receiver, an http(s) URL (no credentials in it)')
    .requiredOption('--events <types>', 'event types to deliver, comma-separated (repeatable), e.g. read.completed,connection.disconnected', collect)
    .option('--company-tag <key:value>', 'only events of companies with this tag (repeatable: any of them)', collect)
    .option('--disabled', 'create it disabled: nothing is delivered to it (a disabled consumer is not re-enabled; create a new one)')
    .addHelpText('after', `${examples(
      'ferry webhooks create --url https://example.com/hooks --events read.completed,connection.disconnected',
      'ferry webhooks create --url https://example.com/hooks --events invoices.write.successful --company-tag region:eu',
      "ferry webhooks create --url https://example.com/hooks --events read.completed --json | jq -r .secret   # keep it: shown only now",
    )}
The signing secret (whsec_…) verifies each delivery's webhook-signature header (Standard
Webhooks). It is shown once: on a terminal, or in the --json record. Piped, only the id is printed.
`)
    .action(registrar.action(runWebhooksCreate));
}

export async function runWebhooksCreate(options: WebhooksCreateOptions, ctx: CommandContext): Promise<void> {
  const body: api.WebhookConsumerInput = { url: consumerUrl(options.url), eventTypes: eventTypes(options.events) };
  const tags = companyTags(options.companyTag ?? []);
  if (tags.length > 0) body.companyTags = tags;
  if (options.disabled) body.disabled = true;
  const { client } = await ctx.connect();
  await checkEventTypes(client, body.eventTypes, ctx.signal);
  const created = await api.createWebhook(client, body, ctx.signal);
  const { io } = ctx;
  printResult(io, created, () => {
    if (io.mode === 'plain') {
      io.out(created.id);
      io.err(`Created webhook consumer ${created.id}${created.disabled ? ' (disabled)' : ''}.`);
      io.err('note: its signing secret is shown only at creation, on a terminal or with --json; it was not printed here. To capture it in a script, add --json to the create command and read .secret (jq -r .secret).');
      return;
    }
    printRecord(io, created, [
      ['id', created.id],
      ['url', created.url],
      ['events', created.eventTypes.join(', ')],
      ['companyTags', (created.companyTags ?? []).join(', ')],
      ['disabled', created.disabled],
      ['secret', created.secret],
    ]);
    io.err('\nThe signing secret is shown only now: keep it where the receiver can read it (it verifies the webhook-signature header).');
    io.err(`Next: ${ferryCommand(['webhooks', 'test', created.id, '--wait'], targetArgs(ctx.flags))}`);
  });
}
