// What the `ferry webhooks` commands share: their group, the checks made before any request
// (the service checks everything again and its 400 names the rest), and how a delivery of
// the log is shown.
import type { Command } from 'commander';
import { UsageError } from '../errors.js';
import type { Column } from '../output.js';
import type { WebhookAttemptRecord, WebhookDeliveryRecord, WebhookDeliveryStatus } from '../../client/wire.js';
import { group } from '../command.js';

export function webhooksGroup(program: Command): Command {
  return group(program, 'webhooks', 'Webhook consumers: signed deliveries of the account\'s events, and their log');
}

/** The service's limit on a consumer's URL. */
const MAX_URL_LENGTH = 2048;

/**
 * An absolute http(s) URL without credentials. The URL is never echoed back: one with a
 * user and password in it would put them in the terminal's scrollback and in CI logs.
 */
export function consumerUrl(text: string): string {
  const hint = 'Give the receiver\'s absolute http(s) URL, e.g. --url https://example.com/hooks.';
  if (text.length > MAX_URL_LENGTH) throw new UsageError(`--url is ${text.length} characters long; at most ${MAX_URL_LENGTH} are allowed.`, hint);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError('--url is not an absolute URL.', hint);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`--url must be http or https, not ${url.protocol.replace(/:$/, '')}.`, hint);
  if (url.username !== '' || url.password !== '') {
    throw new UsageError('--url must not carry credentials (user:password@).', 'Receivers check the webhook-signature header instead (the consumer\'s signing secret).');
  }
  return text;
}

/** An event type's shape: dot-separated words (`read.completed`, `invoices.write.successful`). */
const EVENT_NAME = /^[A-Za-z][A-Za-z0-9]*(\.[A-Za-z][A-Za-z0-9]*)+$/;

/** `--events a,b` (repeatable) into a list without repeats; which names exist is the service's to say. */
export function eventTypes(values: readonly string[]): string[] {
  const names = [...new Set(values.flatMap((v) => v.split(',')).map((v) => v.trim()).filter((v) => v !== ''))];
  if (names.length === 0) throw new UsageError('--events names no event type.', 'Give one or more, comma-separated, e.g. --events read.completed,connection.disconnected.');
  const bad = names.find((name) => !EVENT_NAME.test(name));
  if (bad !== undefined) {
    throw new UsageError(`--events ${JSON.stringify(bad)} is not an event type.`, 'Event types are dot-separated names such as read.completed or invoices.write.successful (ferry webhooks events lists them).');
  }
  return names;
}

/** `--company-tag key:value` (repeatable), sent as the public API spells them. */
export function companyTags(values: readonly string[]): string[] {
  for (const tag of values) {
    if (tag.indexOf(':') < 1) throw new UsageError(`--company-tag ${JSON.stringify(tag)} is not key:value.`, 'Give each tag as --company-tag key:value, e.g. --company-tag region:eu (repeat for more).');
  }
  return [...new Set(values)];
}

export const STATUSES: readonly WebhookDeliveryStatus[] = ['Pending', 'Delivered', 'Failed'];

/** --status, in any case. */
export function deliveryStatus(text: string): WebhookDeliveryStatus {
  const found = STATUSES.find((s) => s.toLowerCase() === text.trim().toLowerCase());
  if (!found) throw new UsageError(`--status ${JSON.stringify(text)} is not a delivery status.`, `One of: ${STATUSES.join(', ')}.`);
  return found;
}

/** The receiver's answer to an attempt: its status code, or why there was none. */
export function attemptOutcome(attempt: WebhookAttemptRecord | null | undefined): string {
  if (!attempt) return '';
  if (attempt.statusCode !== undefined && attempt.statusCode !== null) return attempt.error ? `HTTP ${attempt.statusCode}: ${attempt.error}` : `HTTP ${attempt.statusCode}`;
  return attempt.error ?? '';
}

/** The delivery log's columns; `tty` words blanks and units for a person. */
export function deliveryColumns(tty: boolean): Column<WebhookDeliveryRecord>[] {
  return [
    { header: 'id', value: (d) => d.id },
    { header: 'time', value: (d) => d.lastAttempt?.at ?? d.created },
    { header: 'event', value: (d) => d.eventType },
    { header: 'status', value: (d) => d.status },
    { header: 'attempts', value: (d) => d.attempts },
    { header: 'last', value: (d) => attemptOutcome(d.lastAttempt) || (tty ? '-' : '') },
    { header: 'latency', value: (d) => (d.lastAttempt ? (tty ? `${d.lastAttempt.latencyMs} ms` : d.lastAttempt.latencyMs) : tty ? '-' : '') },
  ];
}
