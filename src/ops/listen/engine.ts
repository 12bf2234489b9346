// `ferry listen`: follow the account's live events and forward each to a local receiver,
// signed per Standard Webhooks with a secret of this session, as webhook deliveries are
// (same body, same headers), so a receiver under development checks signatures the way
// it will in production. A receiver that is down or failing is reported per event, never
// fatal; the stream ends when the signal aborts.
import { Pool } from 'undici';
import * as api from '../../client/api.js';
import type { ApiClient } from '../../client/client.js';
import { ApiRequestError, StreamUnavailableError, UnexpectedAnswerError } from '../../client/errors.js';
import { streamEvents, type StreamedEvent } from '../../client/event-stream.js';
import { signatureHeaders } from '../../lib/webhook-signature.js';
import { inputError } from '../errors.js';

/** As webhook deliveries: a receiver gets 10 s to answer, and at most 64 KiB of its answer is read. */
export const FORWARD_TIMEOUT_MS = 10_000;
const MAX_ANSWER_BYTES = 64 * 1024;

export interface ListenOptions {
  /** The local receiver; without it events are only reported. */
  forwardTo?: URL;
  /** The session's signing secret (`whsec_…`). */
  secret: string;
  types?: string[];
  companyId?: string;
  signal: AbortSignal;
  timeoutMs?: number;
}

export interface ForwardResult {
  /** The receiver's status code, when it answered. */
  status?: number;
  /** Why there was no answer (connection refused, timeout…). */
  error?: string;
  /** From sending to the receiver's status line (or the failure). */
  latencyMs: number;
}

export interface ListenCallbacks {
  /** The stream is set up: every event committed from now on is reported. */
  ready(info: { after: number; eventTypes: string[] }): void;
  /** One event, with what the receiver answered (no forward without a receiver). */
  event(streamed: StreamedEvent, forward: ForwardResult | undefined): void;
}

export interface ListenSummary {
  received: number;
  forwarded: number;
  failed: number;
}

const NO_STREAM_HINT = 'ferry listen needs ferry\'s own service (ferry serve, or no --base-url for the embedded one); against the public API, create a webhook consumer with a public URL instead.';

export async function listen(client: ApiClient, options: ListenOptions, callbacks: ListenCallbacks): Promise<ListenSummary> {
  const { signal } = options;
  const known = await catalogue(client, signal);
  const unknown = (options.types ?? []).filter((t) => !known.includes(t));
  if (unknown.length > 0) throw inputError(`Unknown event type${unknown.length === 1 ? '' : 's'}: ${unknown.join(', ')}.`, 'ferry webhooks events lists every event type.');
  if (options.companyId !== undefined) await api.company(client, options.companyId, signal);
  // Where the stream is now: everything committed after this point is reported.
  const lastSequence = await api.latestEventSequence(client, signal);
  callbacks.ready({ after: lastSequence, eventTypes: options.types ?? [] });

  const summary: ListenSummary = { received: 0, forwarded: 0, failed: 0 };
  const receiver = options.forwardTo ? new Pool(options.forwardTo.origin, { connections: 1 }) : undefined;
  try {
    const stream = streamEvents(client, {
      ...(options.types ? { types: options.types } : {}), ...(options.companyId !== undefined ? { companyId: options.companyId } : {}), after: lastSequence, signal,
    });
    for await (const streamed of stream) {
      summary.received += 1;
      let result: ForwardResult | undefined;
      if (receiver && options.forwardTo) {
        result = await forward(receiver, options.forwardTo, options.secret, streamed, options.timeoutMs ?? FORWARD_TIMEOUT_MS, signal);
        if (signal.aborted) break;
        if (result.status !== undefined && result.status >= 200 && result.status < 300) summary.forwarded += 1;
        else summary.failed += 1;
      }
      callbacks.event(streamed, result);
    }
  } catch (err) {
    if (err instanceof StreamUnavailableError) throw inputError(err.message, NO_STREAM_HINT);
    throw err;
  } finally {
    await receiver?.close();
  }
  return summary;
}

/** The service's event types; a target without them (404) has no stream either. */
async function catalogue(client: ApiClient, signal: AbortSignal): Promise<string[]> {
  try {
    return await api.eventTypes(client, signal);
  } catch (err) {
    const status = err instanceof ApiRequestError || err instanceof UnexpectedAnswerError ? err.status : undefined;
    if (status === 404) throw inputError(new StreamUnavailableError(client.baseUrl).message, NO_STREAM_HINT);
    throw err;
  }
}

/** POSTs the event as a webhook delivery would be: the same body and Standard Webhooks headers. */
export async function forward(receiver: Pool, url: URL, secret: string, streamed: StreamedEvent, timeoutMs: number, signal: AbortSignal): Promise<ForwardResult> {
  const body = JSON.stringify(streamed.event);
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  try {
    const response = await receiver.request({
      method: 'POST',
      path: url.pathname + url.search,
      headers: { 'content-type': 'application/json', 'user-agent': 'ferry-listen', ...signatureHeaders(secret, streamed.event.id, body) },
      body,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal,
    });
    const latencyMs = elapsed();
    await drain(response.body);
    return { status: response.statusCode, latencyMs };
  } catch (err) {
    const code = (err as { code?: string }).code;
    const error = code === 'UND_ERR_HEADERS_TIMEOUT' ? `no answer within ${timeoutMs / 1000} s` : code === 'ECONNREFUSED' ? 'connection refused' : code ?? (err as Error).message;
    return { error, latencyMs: elapsed() };
  }
}

/** Reads (and drops) at most 64 KiB of the receiver's answer, so the connection can be reused or closed. */
async function drain(body: AsyncIterable<Buffer> & { destroy(): void }): Promise<void> {
  let read = 0;
  try {
    for await (const chunk of body) {
      read += chunk.length;
      if (read > MAX_ANSWER_BYTES) break;
    }
  } catch {
    // the answer's status is what counts
  } finally {
    body.destroy();
  }
}
