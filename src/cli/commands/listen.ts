// `ferry listen [--forward-to URL] [--events a,b] [--company ID]`: the account's events as
// they happen, each printed (a coloured line on a terminal, a tab-separated line piped,
// one JSON object a line with --json) and, with --forward-to, POSTed to a local receiver
// signed with a signing secret made for this session. Runs until Ctrl-C (exit 130).
import type { Command } from 'commander';
import chalk from 'chalk';
import type { CommandContext } from '../context.js';
import { InterruptedError, UsageError } from '../errors.js';
import type { IO } from '../io.js';
import type { StreamedEvent } from '../../client/event-stream.js';
import type { ForwardResult } from '../../ops/listen/engine.js';
import { examples, type Registrar } from '../command.js';

export interface ListenCommandOptions {
  forwardTo?: string;
  events?: string[];
  company?: string;
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

export function register(program: Command, registrar: Registrar): void {
  program.command('listen')
    .description('Follow the account\'s events live and forward each, signed, to a local URL (ferry\'s service only)')
    .option('--forward-to <url>', 'POST each event to this http(s) URL, signed per Standard Webhooks with this session\'s secret')
    .option('--events <types>', 'only these event types, comma-separated (repeatable); ferry webhooks events lists them', collect)
    .option('--company <id>', 'only this company\'s events')
    .addHelpText('after', `${examples(
      'ferry listen --forward-to http://localhost:3000/hooks',
      'ferry listen --forward-to http://localhost:3000/hooks --events read.completed,connection.disconnected',
      'ferry listen --company COMPANY_ID --json | jq -c \'select(.type == "event") | .event.eventType\'',
    )}
At start it prints a signing secret (whsec_…) made for this session: a receiver verifies the
webhook-id, webhook-timestamp and webhook-signature headers of each forwarded event with it,
as it would a webhook consumer's. Only events committed after the start are shown. A receiver
that is down or answers with an error is reported on the event's line; listening goes on.
Ctrl-C stops it (exit 130). Against a target without the live stream (the public API) it
says so and exits 2.
`)
    .action(registrar.action(runListen));
}

/** An absolute http(s) URL without credentials; never echoed back (it might carry some). */
function forwardUrl(text: string): URL {
  const hint = 'Give the receiver\'s absolute http(s) URL, e.g. --forward-to http://localhost:3000/hooks.';
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError('--forward-to is not an absolute URL.', hint);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`--forward-to must be an http(s) URL, not ${url.protocol.replace(/:$/, '')}.`, hint);
  if (url.username !== '' || url.password !== '') throw new UsageError('--forward-to must not carry credentials (user:password@).', 'The receiver checks the webhook-signature header instead.');
  return url;
}

function eventTypeList(values: string[] | undefined): string[] | undefined {
  if (values === undefined) return undefined;
  const names = [...new Set(values.flatMap((v) => v.split(',')).map((v) => v.trim()).filter((v) => v !== ''))];
  if (names.length === 0) throw new UsageError('--events names no event type.', 'Give one or more, comma-separated, e.g. --events read.completed.');
  return names;
}

export async function runListen(options: ListenCommandOptions, ctx: CommandContext): Promise<void> {
  const { io, signal } = ctx;
  const forwardTo = options.forwardTo === undefined ? undefined : forwardUrl(options.forwardTo);
  const types = eventTypeList(options.events);
  const companyId = options.company?.trim() || undefined;
  const { listen } = await import('../../ops/listen/engine.js');
  const { newSigningSecret } = await import('../../lib/webhook-signature.js');
  const secret = newSigningSecret();
  const connection = await ctx.connect();
  if (types) await (await import('../webhooks/event-types.js')).checkEventTypes(connection.client, types, signal);
  const shownUrl = forwardTo?.href;

  const summary = await listen(connection.client, {
    ...(forwardTo ? { forwardTo } : {}), secret, ...(types ? { types } : {}), ...(companyId ? { companyId } : {}), signal,
  }, {
    ready({ after }) {
      if (io.mode === 'json') {
        io.json({ type: 'ready', ...(forwardTo ? { forwardTo: shownUrl, secret } : {}), eventTypes: types ?? null, companyId: companyId ?? null, after });
        return;
      }
      const what = `${types ? types.join(', ') : 'every event'} of ${companyId ? `company ${companyId}` : 'the account'}`;
      // Forced past --quiet: without the secret the forwarded events cannot be verified.
      io.err(`Ready! Listening for ${what} on ${connection.baseUrl}${forwardTo ? `, forwarding to ${shownUrl}` : ''}.`, { force: true });
      if (forwardTo) io.err(`Session signing secret: ${secret} (new for each session; receivers verify webhook-signature with it)`, { force: true });
      io.err('Press Ctrl-C to stop.');
    },
    event(streamed, result) {
      printEvent(io, streamed, forwardTo ? result : undefined);
    },
  });

  const forwarded = forwardTo ? `: ${summary.forwarded} forwarded, ${summary.failed} not accepted by the receiver` : '';
  throw new InterruptedError(`Stopped listening after ${summary.received} event${summary.received === 1 ? '' : 's'}${forwarded}; rerun the same command to listen again.`);
}

/** The company an event is about: its reference company, or the company itself for company events. */
function companyOf(event: StreamedEvent['event']): { id?: string; name?: string } | undefined {
  const payload = event.payload as { referenceCompany?: { id?: string; name?: string }; id?: string; name?: string };
  if (payload.referenceCompany) return payload.referenceCompany;
  if (event.eventType.startsWith('company.')) return { id: payload.id, name: payload.name };
  return undefined;
}

function printEvent(io: IO, streamed: StreamedEvent, result: ForwardResult | undefined): void {
  const { event, sequence } = streamed;
  if (io.mode === 'json') {
    io.json({ type: 'event', sequence, event, ...(result ? { forward: result } : {}) });
    return;
  }
  const company = companyOf(event);
  const answer = result === undefined ? undefined : result.status !== undefined ? String(result.status) : `failed (${result.error})`;
  if (io.mode === 'plain') {
    io.out([sequence, event.generatedDate, event.eventType, company?.id ?? '', answer ?? '', result ? result.latencyMs : '', event.id].join('\t'));
    return;
  }
  const paint = (style: (s: string) => string, text: string) => (io.color ? style(text) : text);
  const time = paint(chalk.dim, new Date().toLocaleTimeString('en-GB', { hour12: false }));
  const who = company ? ` ${company.name ?? ''}${company.id ? paint(chalk.dim, ` (${company.id})`) : ''}` : '';
  let forward = '';
  if (result) {
    const ok = result.status !== undefined && result.status >= 200 && result.status < 300;
    const style = ok ? chalk.green : result.status !== undefined && result.status < 500 ? chalk.yellow : chalk.red;
    forward = ` → ${paint(style, answer!)} ${paint(chalk.dim, `${result.latencyMs} ms`)}`;
  }
  io.out(`${time}  ${paint(chalk.bold, event.eventType)}${who}${forward}`);
}
