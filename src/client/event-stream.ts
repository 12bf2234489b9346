// The account's live events from ferry's service (GET /events/stream, server-sent
// events), read as an async generator that reconnects by itself after a dropped
// connection, resuming after the last event it yielded (Last-Event-ID).
import { setTimeout as sleep } from 'node:timers/promises';
import { eventTypes, openEventStream, EVENT_STREAM_PATH } from './api.js';
import type { ApiClient } from './client.js';
import { ApiRequestError, StreamUnavailableError, UnexpectedAnswerError } from './errors.js';
import { SseParser } from './sse.js';
import type { EventRecord } from './wire.js';

export interface StreamedEvent {
  /** The event's number within the account (1, 2, 3 …, its own events only): pass it as `after` to resume after it. */
  sequence: number;
  event: EventRecord;
}

export interface StreamEventsOptions {
  /** Only these event types (each must be one GET /events/types lists: a 400 otherwise). */
  types?: string[];
  /** Only this company's events (it must be the caller's: 404 or 403 otherwise). */
  companyId?: string;
  /** Start after this number of the account's; without it the stream starts with the next event. */
  after?: number;
  /** Ends the stream: the generator then returns (it does not throw). */
  signal: AbortSignal;
}

/** Reconnection attempts after a drop, all failing, before the generator gives up and throws the last error. */
export const MAX_RECONNECTS = 8;
/** The service sends a comment every 15 s: this long without a byte means the connection is dead. */
const IDLE_MS = 45_000;
/** A connection that stayed up this long was healthy: its drop starts the count of failures anew. */
const HEALTHY_MS = 10_000;
const RETRY_STATUSES = new Set([429, 500, 502, 503, 504]);

/**
 * The account's events as they are committed, oldest first:
 *
 *   for await (const { sequence, event } of streamEvents(client, { types: ['read.completed'], signal })) { … }
 *
 * - Without `after`, the stream starts with the next event. A caller that must miss nothing
 *   from a point on (say, before it queues a sync) reads `await latestEventSequence(client)`
 *   (api.ts) first and passes it as `after`.
 * - A dropped connection (network error, the service restarting, 45 s of silence, a
 *   429/5xx) is opened again after a jittered backoff (250 ms doubling to 5 s), resuming
 *   after the last event yielded; after MAX_RECONNECTS failures in a row it throws the last
 *   error. A failure before the first connection was ever established is thrown at once.
 * - Throws StreamUnavailableError when the target has no stream (404: the public API),
 *   ApiRequestError for a refused request (400 unknown type, 401/403, 404/403 company).
 * - Returns when `signal` aborts; breaking out of the loop closes the connection.
 */
export async function* streamEvents(client: ApiClient, options: StreamEventsOptions): AsyncGenerator<StreamedEvent> {
  const { signal } = options;
  const query = {
    ...(options.types && options.types.length > 0 ? { types: options.types.join(',') } : {}),
    ...(options.companyId !== undefined ? { companyId: options.companyId } : {}),
  };
  let lastEventId = options.after !== undefined ? String(options.after) : undefined;
  let everOpened = false;
  let failures = 0;
  for (;;) {
    let waitMs: number | undefined;
    let openedAt: number | undefined;
    try {
      const response = await openEventStream(client, query, lastEventId, IDLE_MS, signal);
      everOpened = true;
      openedAt = Date.now();
      const parser = new SseParser();
      if (lastEventId !== undefined) parser.lastEventId = lastEventId;
      for await (const chunk of response.body as AsyncIterable<Buffer>) {
        for (const message of parser.push(chunk)) {
          const event = parseEvent(client, message.data, message.lastEventId);
          lastEventId = message.lastEventId;
          failures = 0;
          yield event;
        }
        // An `id` without data (the stream's starting point) moves the resume point too.
        if (parser.lastEventId !== '') lastEventId = parser.lastEventId;
      }
      // The service ended the stream (it is closing): open it again.
    } catch (err) {
      if (signal.aborted) return;
      if (err instanceof ApiRequestError && err.status === 404) throw await notFound(client, options, err);
      if (err instanceof UnexpectedAnswerError && err.status === 404) throw new StreamUnavailableError(client.baseUrl);
      const retryable = err instanceof ApiRequestError ? RETRY_STATUSES.has(err.status) : !(err instanceof UnexpectedAnswerError || err instanceof ParseError);
      if (!retryable || !everOpened) throw err;
      if (failures >= MAX_RECONNECTS) throw err;
      if (err instanceof ApiRequestError && err.retryAfterSeconds !== undefined) waitMs = Math.min(err.retryAfterSeconds, 30) * 1000;
    }
    if (signal.aborted) return;
    if (openedAt !== undefined && Date.now() - openedAt >= HEALTHY_MS) failures = 0;
    failures += 1;
    try {
      await sleep(waitMs ?? reconnectDelayMs(failures), undefined, { signal });
    } catch {
      return; // aborted while waiting
    }
  }
}

/** 250 ms, 500 ms, 1 s … capped at 5 s, each between half and all of it. */
export function reconnectDelayMs(failures: number): number {
  const base = Math.min(5000, 250 * 2 ** (failures - 1));
  return base / 2 + Math.random() * (base / 2);
}

class ParseError extends UnexpectedAnswerError {}

function parseEvent(client: ApiClient, data: string, id: string): StreamedEvent {
  const sequence = /^\d+$/.test(id) ? Number(id) : Number.NaN;
  let event: EventRecord | undefined;
  try {
    event = JSON.parse(data) as EventRecord;
  } catch {
    event = undefined;
  }
  if (!Number.isSafeInteger(sequence) || !event || typeof event !== 'object' || typeof event.eventType !== 'string') {
    throw new ParseError('GET', EVENT_STREAM_PATH, client.baseUrl, 'an event');
  }
  return { sequence, event };
}

/**
 * A 404: no stream at all (the public API), or no such company of the caller's. The
 * catalogue route tells them apart without reading the service's wording.
 */
async function notFound(client: ApiClient, options: StreamEventsOptions, err: ApiRequestError): Promise<Error> {
  if (options.companyId === undefined) return new StreamUnavailableError(client.baseUrl);
  try {
    await eventTypes(client, options.signal);
    return err;
  } catch {
    return new StreamUnavailableError(client.baseUrl);
  }
}
