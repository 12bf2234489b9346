// `ferry webhooks test ID [--wait]`: sends the consumer alone a `ferry.webhook.test` event
// and, with --wait, follows its delivery until the receiver took it (Delivered) or the
// service gave up (Failed), then shows every attempt.
import { Option, type Command } from 'commander';
import * as api from '../../../client/api.js';
import type { ApiClient } from '../../../client/client.js';
import { pollUntil } from '../../../client/poll.js';
import type { WebhookDeliveryDetail, WebhookDeliveryRecord } from '../../../client/wire.js';
import { durationText } from '../../../lib/duration.js';
import type { CommandContext } from '../../context.js';
import { CliError, EXIT, InterruptedError, UsageError } from '../../errors.js';
import { durationArg } from '../../flags.js';
import { printResult } from '../../io.js';
import { printRecord, type Section } from '../../output.js';
import type { WebhookAttemptRecord } from '../../../client/wire.js';
import { examples, type Registrar } from '../../command.js';
import { ferryCommand, targetArgs } from '../../command-line.js';
import { attemptOutcome, webhooksGroup } from '../../webhooks/common.js';

export interface WebhooksTestOptions {
  wait?: boolean;
  timeout?: number;
  pollMs?: number;
}

/** A test delivery that is not settled within a minute is retrying: the attempts say why. */
const DEFAULT_TEST_TIMEOUT_MS = 60_000;

export function register(program: Command, registrar: Registrar): void {
  webhooksGroup(program)
    .command('test')
    .description('Send the consumer a test event (ferry.webhook.test) and optionally wait for its delivery')
    .argument('<consumerId>', 'the consumer id (ferry webhooks list)')
    .option('--wait', 'wait until the delivery is Delivered or Failed, then show its attempts')
    .option('--timeout <duration>', `with --wait: stop waiting after this long (default ${durationText(DEFAULT_TEST_TIMEOUT_MS)})`, durationArg('--timeout'))
    .addOption(new Option('--poll-ms <ms>', 'first poll delay in ms').hideHelp().argParser((v) => Math.max(10, Number(v) || 200)))
    .addHelpText('after', `${examples(
      'ferry webhooks test CONSUMER_ID',
      'ferry webhooks test CONSUMER_ID --wait',
      'ferry webhooks test CONSUMER_ID --wait --json | jq .status',
    )}
With --wait the exit code is 0 when the receiver answered 2xx, 1 when the delivery failed or
was still being retried at --timeout (the service keeps retrying it).
`)
    .action(registrar.action(runWebhooksTest));
}

export async function runWebhooksTest(options: WebhooksTestOptions, ctx: CommandContext, [consumerId]: string[]): Promise<void> {
  if (options.timeout !== undefined && !options.wait) throw new UsageError('--timeout only applies with --wait.', 'Add --wait, or drop --timeout.');
  const { client } = await ctx.connect();
  const { io, signal } = ctx;
  const sent = await api.testWebhook(client, consumerId!, signal);
  const follow = ferryCommand(['webhooks', 'deliveries', consumerId!], targetArgs(ctx.flags));
  if (!options.wait) {
    printResult(io, sent, () => {
      io.out(sent.id);
      io.err(`Sent a ${sent.eventType} event (webhook-id ${sent.eventId}); delivery ${sent.id} is ${sent.status}. Follow it: ${follow}, or test again with --wait.`);
    });
    return;
  }
  const timeoutMs = options.timeout ?? DEFAULT_TEST_TIMEOUT_MS;
  const delivery = await settled(client, consumerId!, sent, { signal, deadline: Date.now() + timeoutMs, firstDelayMs: options.pollMs ?? 200 });
  printDelivery(ctx, delivery);
  if (signal.aborted) throw new InterruptedError('Stopped waiting (interrupted); the delivery goes on in the service.');
  const last = attemptOutcome(delivery.lastAttempt);
  if (delivery.status === 'Failed') throw new CliError(`The test delivery failed after ${delivery.attempts} attempt${delivery.attempts === 1 ? '' : 's'}${last ? ` (last: ${last})` : ''}.`, EXIT.error);
  if (delivery.status === 'Pending') {
    throw new CliError(
      `The test delivery was still Pending after ${durationText(timeoutMs)}: ${delivery.attempts} attempt${delivery.attempts === 1 ? '' : 's'}${last ? `, last: ${last}` : ''}.`,
      EXIT.error,
      `The service keeps retrying it; follow it with ${follow} --status Pending`,
    );
  }
}

/** Reads the delivery until it is no longer Pending, the deadline passes or the person stops. */
async function settled(client: ApiClient, consumerId: string, sent: WebhookDeliveryRecord, poll: { signal: AbortSignal; deadline: number; firstDelayMs: number }): Promise<WebhookDeliveryDetail> {
  let delivery: WebhookDeliveryDetail = await api.webhookDelivery(client, consumerId, sent.id, poll.signal);
  await pollUntil({
    ...poll,
    done: () => delivery.status !== 'Pending',
    round: async () => {
      delivery = await api.webhookDelivery(client, consumerId, sent.id, poll.signal);
    },
  });
  return delivery;
}

function printDelivery(ctx: CommandContext, delivery: WebhookDeliveryDetail): void {
  const { io } = ctx;
  const tty = io.mode === 'tty';
  const attempts: Section<WebhookAttemptRecord & { n: number }> = {
    kind: 'attempt',
    title: 'Attempts',
    rows: (delivery.attemptLog ?? []).map((a, i) => ({ ...a, n: i + 1 })),
    columns: [
      { header: '#', value: (a) => a.n },
      { header: 'at', value: (a) => a.at },
      { header: 'answer', value: (a) => attemptOutcome(a) },
      { header: 'latency', value: (a) => (tty ? `${a.latencyMs} ms` : a.latencyMs) },
    ],
  };
  printRecord(io, delivery, [
    ['id', delivery.id],
    ['event', delivery.eventType],
    ['eventId', delivery.eventId],
    ['status', delivery.status],
    ['attempts', delivery.attempts],
    ['last', attemptOutcome(delivery.lastAttempt)],
    ['latency', delivery.lastAttempt ? (tty ? `${delivery.lastAttempt.latencyMs} ms` : delivery.lastAttempt.latencyMs) : ''],
  ], [attempts]);
}
