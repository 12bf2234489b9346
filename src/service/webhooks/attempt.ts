// One HTTP attempt of a delivery, and what it means. The receiver gets `timeoutMs` for
// everything (connecting, the status line, the answer); a redirect is never followed
// (undici's request() does not, and the Location is not ours to trust); at most
// `maxAnswerBytes` of the answer are read before the connection is dropped. The status
// code decides: 2xx delivered, 410 gone, anything else (and any network failure) a retry.
import { request, type Dispatcher } from 'undici';
import { parseRetryAfter } from './backoff.js';

export const ATTEMPT_TIMEOUT_MS = 10_000;
export const MAX_ANSWER_BYTES = 64 * 1024;

export interface AttemptOptions {
  timeoutMs?: number;
  maxAnswerBytes?: number;
  dispatcher?: Dispatcher;
}

export interface AttemptResult {
  outcome: 'delivered' | 'gone' | 'retry' | 'stopped';
  statusCode: number | null;
  /** Why it failed, or what was odd about a success (an answer cut off); never the receiver's words. */
  error: string | null;
  latencyMs: number;
  retryAfterMs?: number;
}

export interface AttemptRequest {
  url: string;
  body: string;
  headers: Record<string, string>;
  /** Aborts the attempt without an outcome (the loop is stopping). */
  signal?: AbortSignal;
  now: Date;
}

/** Network failures in words; the code alone for anything unexpected, never a message that might carry a URL. */
function networkError(err: unknown, timeoutMs: number): string {
  const code = (err as { code?: string } | null)?.code ?? (err as { cause?: { code?: string } } | null)?.cause?.code;
  switch (code) {
    case 'ECONNREFUSED': return 'connection refused';
    case 'ECONNRESET':
    case 'EPIPE':
    case 'UND_ERR_SOCKET': return 'connection reset by the receiver';
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
    case 'UND_ERR_CONNECT_TIMEOUT': return `no complete answer within ${timeoutMs / 1000} s`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN': return 'host not found';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH': return 'host unreachable';
    default:
      if (code && /CERT|TLS|SSL/.test(code)) return `TLS failure (${code})`;
      return `network error (${code ?? (err as Error | null)?.name ?? 'unknown'})`;
  }
}

/** Reads at most `limit` bytes; true when the answer was longer (and the rest dropped). */
async function readCapped(body: Dispatcher.ResponseData['body'], limit: number): Promise<boolean> {
  let read = 0;
  for await (const chunk of body) {
    read += (chunk as Buffer).length;
    if (read > limit) {
      body.destroy();
      return true;
    }
  }
  return false;
}

function classify(statusCode: number): AttemptResult['outcome'] {
  if (statusCode >= 200 && statusCode < 300) return 'delivered';
  return statusCode === 410 ? 'gone' : 'retry';
}

export async function attemptDelivery(attempt: AttemptRequest, options: AttemptOptions = {}): Promise<AttemptResult> {
  const timeoutMs = options.timeoutMs ?? ATTEMPT_TIMEOUT_MS;
  const maxAnswer = options.maxAnswerBytes ?? MAX_ANSWER_BYTES;
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), timeoutMs);
  const signal = attempt.signal ? AbortSignal.any([attempt.signal, deadline.signal]) : deadline.signal;
  let statusCode: number | null = null;
  try {
    const response = await request(attempt.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'ferry-webhooks', ...attempt.headers },
      body: attempt.body,
      signal,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
    });
    statusCode = response.statusCode;
    const outcome = classify(statusCode);
    const retryAfter = response.headers['retry-after'];
    const retryAfterMs = parseRetryAfter(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter, attempt.now);
    let error: string | null = statusCode >= 300 && statusCode < 400 ? 'redirect not followed' : null;
    try {
      if (await readCapped(response.body, maxAnswer)) error = [error, `answer longer than ${maxAnswer / 1024} KiB, cut off`].filter(Boolean).join('; ');
    } catch (err) {
      // The status line decides; an answer that breaks off after it is only noted.
      if (attempt.signal?.aborted) return { outcome: 'stopped', statusCode, error: null, latencyMs: elapsed() };
      error = [error, `answer cut off: ${deadline.signal.aborted ? `not complete within ${timeoutMs / 1000} s` : networkError(err, timeoutMs)}`].filter(Boolean).join('; ');
    }
    return { outcome, statusCode, error, latencyMs: elapsed(), ...(retryAfterMs !== undefined && outcome === 'retry' ? { retryAfterMs } : {}) };
  } catch (err) {
    if (attempt.signal?.aborted) return { outcome: 'stopped', statusCode, error: null, latencyMs: elapsed() };
    const error = deadline.signal.aborted ? `no complete answer within ${timeoutMs / 1000} s` : networkError(err, timeoutMs);
    return { outcome: 'retry', statusCode, error, latencyMs: elapsed() };
  } finally {
    clearTimeout(timer);
  }
}
