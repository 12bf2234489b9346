// The event types a command was given, checked against the target's catalogue (GET
// /events/types) before anything is created: a mistyped one gets one "did you mean" and a
// pointer to `ferry webhooks events`, not the whole list. A target without the catalogue
// (the public API alone) leaves the check to the service.
import * as api from '../../client/api.js';
import type { ApiClient } from '../../client/client.js';
import { ApiRequestError, UnexpectedAnswerError } from '../../client/errors.js';
import { UsageError } from '../errors.js';
import { closeMatches } from '../suggest.js';

/** Every event type the target records; undefined when it does not say (404). */
export async function knownEventTypes(client: ApiClient, signal?: AbortSignal): Promise<string[] | undefined> {
  try {
    return await api.eventTypes(client, signal);
  } catch (err) {
    const status = err instanceof ApiRequestError || err instanceof UnexpectedAnswerError ? err.status : undefined;
    if (status === 404) return undefined;
    throw err;
  }
}

/** Refuses a type the target does not know, suggesting the nearest one. */
export async function checkEventTypes(client: ApiClient, types: readonly string[], signal?: AbortSignal): Promise<void> {
  const known = await knownEventTypes(client, signal);
  if (!known) return;
  const unknown = types.filter((t) => !known.includes(t));
  if (unknown.length === 0) return;
  const nearest = closeMatches(unknown[0]!, known.map((key) => ({ key })), 1)[0]?.key ?? nearestByWords(unknown[0]!, known);
  throw new UsageError(
    `Unknown event type${unknown.length === 1 ? '' : 's'}: ${unknown.join(', ')}.`,
    `${nearest ? `Did you mean ${nearest}? ` : ''}ferry webhooks events lists every event type.`,
  );
}

/** Past two edits: the known type sharing the most dot-separated words (invoice.write.success → invoices.write.successful). */
function nearestByWords(input: string, known: readonly string[]): string | undefined {
  const words = new Set(input.toLowerCase().split('.'));
  let best: { type: string; shared: number } | undefined;
  for (const type of known) {
    const shared = type.toLowerCase().split('.').filter((w) => words.has(w) || [...words].some((x) => x.length >= 4 && (w.startsWith(x) || x.startsWith(w)))).length;
    if (shared > 0 && (!best || shared > best.shared)) best = { type, shared };
  }
  return best?.type;
}
