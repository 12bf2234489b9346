// One HTTP attempt of a delivery, and what it means. The receiver gets `timeoutMs` for
// everything (connecting, the status line, the answer); a redirect is never followed
// (undici's request() does not, and the Location is not ours to trust); at most
// `maxAnswerBytes` of the answer are read before the connection is dropped. The status
// code decides: 2xx delivered, 410 gone, anything else (and any network failure) a retry.
// Every attempt goes through a dispatcher of target-agent.ts (the strict one unless given):
// a target the policy refuses is a failed attempt like any other, retried on the backoff.
// The log says of a failure what the receiver's owner acts on and no more: "could not
// connect" whatever kept the connection from being made, "no complete answer", "TLS
// failure", or the status code; a refused target says only that, with no latency, so the
// log maps nothing of the network the service runs in.
import { request, type Dispatcher } from 'undici';
import { parseRetryAfter } from './backoff.js';
import { strictAgent, TargetRefusedError } from './target-agent.js';

export const ATTEMPT_TIMEOUT_MS = 10_000;
export const MAX_ANSWER_BYTES = 64 * 1024;

export interface AttemptOptions {
  timeoutMs?: number;
  maxAnswerBytes?: number;
  /** A target-agent.ts agent (default: the strict one, public addresses only). */
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

export const TARGET_REFUSED = 'address not allowed: this service delivers to public addresses only';

/** Failures before the request went out: the receiver could not be reached. */
const CONNECT_FAILURES = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EHOSTDOWN', 'ENETDOWN', 'ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NONAME', 'ETIMEDOUT', 'EADDRNOTAVAIL', 'UND_ERR_CONNECT_TIMEOUT']);

/** Network failures in words a receiver's owner acts on; never a message that might carry a URL or an address. */
function networkError(err: unknown, timeoutMs: number): string {
  const { code: own, syscall, cause } = (err ?? {}) as { code?: string; syscall?: string; cause?: { code?: string } };
  const code = own ?? cause?.code;
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') return `no complete answer within ${timeoutMs / 1000} s`;
  if (code && /CERT|TLS|SSL/.test(code)) return 'TLS failure';
  if ((code && CONNECT_FAILURES.has(code)) || syscall === 'connect' || syscall === 'getaddrinfo') return 'could not connect';
  // Connected, then a reset, a close or an answer that is not HTTP.
  return 'no complete answer: the connection broke off';
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
      dispatcher: options.dispatcher ?? strictAgent(),
    });
    statusCode = response.statusCode;
    const outcome = classify(statusCode);
    const retryAfter = response.headers['retry-after'];
    const retryAfterMs = parseRetryAfter(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter, attempt.now);
    let error: string | null = statusCode >= 300 && statusCode < 400 ? 'redirect not followed' : null;
    try {
      if (await readCapped(response.body, maxAnswer)) error = [error, `answer longer than ${maxAnswer / 1024} KiB, cut off`].filter(Boolean).join('; ');
    } catch {
      // The status line decides; an answer that breaks off after it is only noted.
      if (attempt.signal?.aborted) return { outcome: 'stopped', statusCode, error: null, latencyMs: elapsed() };
      error = [error, `answer cut off: ${deadline.signal.aborted ? `not complete within ${timeoutMs / 1000} s` : 'the connection broke off'}`].filter(Boolean).join('; ');
    }
    return { outcome, statusCode, error, latencyMs: elapsed(), ...(retryAfterMs !== undefined && outcome === 'retry' ? { retryAfterMs } : {}) };
  } catch (err) {
    if (attempt.signal?.aborted) return { outcome: 'stopped', statusCode, error: null, latencyMs: elapsed() };
    if (err instanceof TargetRefusedError) return { outcome: 'retry', statusCode: null, error: TARGET_REFUSED, latencyMs: 0 };
    const error = deadline.signal.aborted ? `no complete answer within ${timeoutMs / 1000} s` : networkError(err, timeoutMs);
    return { outcome: 'retry', statusCode, error, latencyMs: elapsed() };
  } finally {
    clearTimeout(timer);
  }
}
