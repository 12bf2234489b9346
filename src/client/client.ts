// The API client: one keep-alive pool per target, Basic auth, typed errors, retries with
// jittered exponential backoff that honour Retry-After, and pacing by the rate-limit
// headers. A POST is retried only when the service cannot have acted on it (connection
// refused, 429, 503); anything else is the caller's decision. A timeout is never retried:
// `timeoutMs` is how long the caller is prepared to wait for an answer.
import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { readChunks, readText, Transport, type Answer } from './transport.js';
import { ApiRequestError, ConnectionError, UnexpectedAnswerError, type ErrorEnvelope } from './errors.js';
import { Pacer } from './pacer.js';
import type { RequestGate } from './request-gate.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export type QueryValue = string | number | boolean | undefined;

export interface ClientOptions {
  baseUrl: string;
  apiKey: string;
  /** Admin key acting for a client (X-Client-Id). */
  clientId?: string;
  timeoutMs?: number;
  maxRetries?: number;
  /** A 429/503 asking to wait longer than this (seconds, default 120) fails at once instead of sleeping. */
  maxRetryAfterSeconds?: number;
  connections?: number;
  /** Request log lines (method, path, status, time, correlation id); never bodies or keys. */
  log?: (line: string) => void;
  userAgent?: string;
}

export interface RequestOptions {
  query?: Record<string, QueryValue>;
  body?: unknown;
  signal?: AbortSignal;
  /** Let a POST be retried after a 500 or a broken connection (the caller knows it is safe). */
  idempotent?: boolean;
  headers?: Record<string, string>;
  /** Resolve a successful response's body as its raw bytes, the chunks as they arrived (Buffer[]), not parsed or joined (`ferry export` streams records through). */
  raw?: boolean;
}

/**
 * Sockets per target. The adaptive limit, not the socket count, decides how many requests
 * are in flight; with fewer sockets than it allows, requests queue for a socket and a
 * remote target's latency caps the run (16 sockets at 50 ms: ~77 migration rows a second).
 * Sockets open only as requests need them.
 */
const DEFAULT_CONNECTIONS = 64;

const RETRY_STATUSES = new Set([429, 500, 502, 503, 504]);
const SAFE_POST_RETRY_STATUSES = new Set([429, 503]);
/** Failures before the request went out: even a POST can be sent again. */
const CONNECT_ERRORS = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'CONNECT_TIMEOUT']);
/** No answer (or no more of it) within timeoutMs: never retried (transport.ts names them). */
const TIMEOUT_ERRORS = new Set(['HEADERS_TIMEOUT', 'BODY_TIMEOUT']);

export class ApiClient {
  readonly baseUrl: string;
  private readonly transport: Transport;
  private readonly pacer = new Pacer();
  private gate: RequestGate | undefined;
  /** `Basic …` for this client's key; also what the sandbox's admin routes accept. */
  readonly authorization: string;
  private readonly basePath: string;

  constructor(private readonly options: ClientOptions) {
    const url = new URL(options.baseUrl);
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.basePath = url.pathname.replace(/\/+$/, '');
    this.transport = new Transport(url.origin, { connections: options.connections ?? DEFAULT_CONNECTIONS, keepAliveMs: 30_000 });
    this.authorization = `Basic ${Buffer.from(options.apiKey).toString('base64')}`;
  }

  async close(): Promise<void> {
    await this.transport.close();
  }

  /** Another client on this one's target and key, acting for `clientId` (X-Client-Id: an admin key acting for a client). Close it on its own. */
  actingFor(clientId: string): ApiClient {
    return new ApiClient({ ...this.options, clientId });
  }

  /** Sends every request through `gate` from now on (undefined: none); returns the one it replaces. */
  useGate(gate: RequestGate | undefined): RequestGate | undefined {
    const previous = this.gate;
    this.gate = gate;
    return previous;
  }

  get<T>(path: string, options: RequestOptions = {}): Promise<T> {
    return this.request<T>('GET', path, options);
  }

  post<T>(path: string, body?: unknown, options: RequestOptions = {}): Promise<T> {
    return this.request<T>('POST', path, { ...options, body });
  }

  put<T>(path: string, body?: unknown, options: RequestOptions = {}): Promise<T> {
    return this.request<T>('PUT', path, { ...options, body });
  }

  patch<T>(path: string, body?: unknown, options: RequestOptions = {}): Promise<T> {
    return this.request<T>('PATCH', path, { ...options, body });
  }

  delete<T>(path: string, options: RequestOptions = {}): Promise<T> {
    return this.request<T>('DELETE', path, options);
  }

  /** `path` may carry its own query string (e.g. a `_links.next.href`). */
  async request<T>(method: Method, path: string, options: RequestOptions = {}): Promise<T> {
    return (await this.exchange<T>(method, path, options)).body;
  }

  /** Like request(), with the response's status, headers and time (for `ferry doctor`). */
  async exchange<T>(method: Method, path: string, options: RequestOptions = {}): Promise<Exchange<T>> {
    const target = this.basePath + path + queryString(options.query, path.includes('?'));
    const maxRetries = this.options.maxRetries ?? 5;
    const timeoutMs = this.options.timeoutMs ?? 60_000;
    const maxRetryAfter = this.options.maxRetryAfterSeconds ?? 120;
    const request = {};
    for (let attempt = 0; ; attempt += 1) {
      const gate = this.gate;
      const ticket = gate ? await gate.admit(options.signal) : undefined;
      const permit = await this.pacer.acquire(options.signal);
      let told = false;
      const started = Date.now();
      let statusCode: number;
      let headers: Record<string, string | string[] | undefined>;
      let text: string;
      let chunks: Buffer[] | undefined;
      let retryAfterSeconds: number | undefined;
      try {
        const response = await this.transport.send({
          method,
          path: target,
          headers: this.headers(options),
          body: options.body === undefined ? undefined : JSON.stringify(options.body),
          headersTimeoutMs: timeoutMs,
          bodyTimeoutMs: timeoutMs,
          signal: options.signal,
        });
        ({ status: statusCode, headers } = response);
        this.pacer.observe(permit, rateHeaders(headers));
        retryAfterSeconds = retryAfter(headers);
        if (ticket) {
          gate!.answered(ticket, request, { status: statusCode, ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {}) });
          told = true;
        }
        // Hold every request of this client now, before reading the body, so that no
        // concurrent caller slips through in between.
        if (statusCode === 429) this.pacer.backOff(Math.min(retryAfterSeconds ?? backoffMs(attempt) / 1000, maxRetryAfter) * 1000);
        // Inside the try: a connection that breaks in the middle of the body is a
        // connection error like any other (and retried the same way).
        if (options.raw && statusCode < 400) {
          chunks = await readChunks(response.body);
          text = '';
        } else text = await readText(response.body);
      } catch (err) {
        this.pacer.settle(permit);
        if (options.signal?.aborted) throw err;
        const code = (err as { code?: string }).code ?? '';
        const timedOut = TIMEOUT_ERRORS.has(code);
        // An answer that broke off in its body was already told; a timeout or no answer is told now.
        if (ticket && (!told || timedOut)) gate!.answered(ticket, request, { timedOut });
        const neverSent = CONNECT_ERRORS.has(code);
        const retryable = !timedOut && (method !== 'POST' || options.idempotent || neverSent);
        this.log(`${method} ${path} failed: ${code || (err as Error).message}`);
        if (!retryable || attempt >= maxRetries) throw new ConnectionError(method, path, this.baseUrl, err, timedOut ? timeoutMs : undefined);
        await sleep(backoffMs(attempt), undefined, { signal: options.signal }).catch(() => options.signal?.throwIfAborted());
        continue;
      }
      const correlationId = header(headers, 'x-correlation-id');
      this.log(`${method} ${path} → ${statusCode} ${Date.now() - started}ms${correlationId ? ` ${correlationId}` : ''}`);
      if (statusCode < 400) {
        return { status: statusCode, headers, ms: Date.now() - started, body: (chunks ?? this.parse(text, method, path, headers)) as T };
      }
      const body = parseErrorBody(text, correlationId);
      const stranger = notTheService(statusCode, body, text, headers);
      if (stranger) throw new UnexpectedAnswerError(method, path, this.baseUrl, stranger, statusCode);
      const retryable = RETRY_STATUSES.has(statusCode) && (method !== 'POST' || options.idempotent || SAFE_POST_RETRY_STATUSES.has(statusCode));
      const tooLong = retryAfterSeconds !== undefined && retryAfterSeconds > maxRetryAfter;
      if (!retryable || attempt >= maxRetries || tooLong) throw new ApiRequestError(method, path, statusCode, body, retryAfterSeconds);
      // An abort rejects with the signal's reason, as one during the request does.
      await sleep(retryAfterSeconds !== undefined ? retryAfterSeconds * 1000 + jitter(250) : backoffMs(attempt), undefined, { signal: options.signal })
        .catch(() => options.signal?.throwIfAborted());
    }
  }

  /**
   * A GET whose body is read as it arrives (a server-sent event stream). Sent once: the
   * caller reconnects as it sees fit. No answer within the client's timeout, or no byte
   * for `idleMs` once the body flows, is a connection error; an error status throws as
   * request() does.
   */
  async stream(path: string, options: StreamOptions = {}): Promise<StreamResponse> {
    const target = this.basePath + path + queryString(options.query, path.includes('?'));
    const permit = await this.pacer.acquire(options.signal);
    let response: Answer;
    try {
      response = await this.transport.send({
        method: 'GET',
        path: target,
        headers: { ...this.headers(options), accept: 'text/event-stream' },
        headersTimeoutMs: this.options.timeoutMs ?? 60_000,
        bodyTimeoutMs: options.idleMs ?? 0,
        signal: options.signal,
      });
    } catch (err) {
      this.pacer.settle(permit);
      if (options.signal?.aborted) throw err;
      this.log(`GET ${path} failed: ${(err as { code?: string }).code || (err as Error).message}`);
      throw new ConnectionError('GET', path, this.baseUrl, err);
    }
    const { status: statusCode, headers } = response;
    this.pacer.observe(permit, rateHeaders(headers));
    const correlationId = header(headers, 'x-correlation-id');
    this.log(`GET ${path} → ${statusCode} (stream)${correlationId ? ` ${correlationId}` : ''}`);
    if (statusCode < 400) return { status: statusCode, headers, body: response.body };
    const text = await readText(response.body);
    const body = parseErrorBody(text, correlationId);
    const stranger = notTheService(statusCode, body, text, headers);
    if (stranger) throw new UnexpectedAnswerError('GET', path, this.baseUrl, stranger, statusCode);
    throw new ApiRequestError('GET', path, statusCode, body, retryAfter(headers));
  }

  /** A success body as JSON; anything else means the target is not the service. */
  private parse(text: string, method: Method, path: string, headers: Record<string, string | string[] | undefined>): unknown {
    if (text === '') return undefined;
    try {
      return JSON.parse(text);
    } catch {
      throw new UnexpectedAnswerError(method, path, this.baseUrl, header(headers, 'content-type'));
    }
  }

  /** Every page of a list, following `_links.next` until the last page (or an empty one). */
  async *pages<T>(path: string, options: RequestOptions = {}): AsyncGenerator<Page<T>> {
    const follow: RequestOptions = { ...(options.signal ? { signal: options.signal } : {}), ...(options.headers ? { headers: options.headers } : {}) };
    const seen = new Set<string>();
    let page = await this.get<Page<T>>(path, options);
    for (;;) {
      yield page;
      const next = page._links?.next?.href;
      // An empty page ends the list even if it links further; so does a link already followed.
      if (!next || !page.results?.length || seen.has(next)) return;
      seen.add(next);
      page = await this.get<Page<T>>(this.relative(next), follow);
    }
  }

  /** Every record of a list, page by page. */
  async *records<T>(path: string, options: RequestOptions = {}): AsyncGenerator<T> {
    for await (const page of this.pages<T>(path, options)) yield* page.results ?? [];
  }

  /** A link href is relative to the base URL; an absolute one on the same base works too. */
  private relative(href: string): string {
    if (!/^https?:\/\//i.test(href)) return href;
    const url = new URL(href);
    const base = new URL(this.baseUrl);
    if (url.origin !== base.origin || !url.pathname.startsWith(this.basePath)) throw new Error(`Refusing to follow a link off the service: ${url.origin}${url.pathname}`);
    return url.pathname.slice(this.basePath.length) + url.search;
  }

  private headers(options: RequestOptions): Record<string, string> {
    const headers: Record<string, string> = {
      authorization: this.authorization,
      accept: 'application/json',
      'user-agent': this.options.userAgent ?? 'ferry',
      ...options.headers,
    };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    if (this.options.clientId) headers['x-client-id'] = this.options.clientId;
    return headers;
  }

  private log(line: string): void {
    this.options.log?.(line);
  }
}

export interface StreamOptions {
  query?: Record<string, QueryValue>;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** Milliseconds without a byte of the body after which the stream counts as broken (default: none). */
  idleMs?: number;
}

export interface StreamResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The body as it arrives, chunk by chunk. */
  body: Readable;
}

export interface Exchange<T> {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  ms: number;
  body: T;
}

export interface Page<T> {
  results: T[];
  pageNumber: number;
  pageSize: number;
  totalResults: number;
  _links: { self: { href: string }; current: { href: string }; next?: { href: string }; previous?: { href: string } };
}

function queryString(query: Record<string, QueryValue> | undefined, hasQuery: boolean): string {
  if (!query) return '';
  const pairs = Object.entries(query).filter(([, v]) => v !== undefined && v !== '');
  if (pairs.length === 0) return '';
  const text = pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`).join('&');
  return (hasQuery ? '&' : '?') + text;
}

function header(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Retry-After in seconds (the service sends seconds; an HTTP date is accepted too). */
function retryAfter(headers: Record<string, string | string[] | undefined>): number | undefined {
  const value = header(headers, 'retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Number.parseFloat(value);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, (date - Date.now()) / 1000);
}

function rateHeaders(headers: Record<string, string | string[] | undefined>) {
  const limit = Number(header(headers, 'x-rate-limit-limit'));
  const remaining = Number(header(headers, 'x-rate-limit-remaining'));
  return Number.isFinite(limit) && Number.isFinite(remaining) && header(headers, 'x-rate-limit-limit') !== undefined
    ? { limit, remaining }
    : undefined;
}

/** The service's error envelope; the X-Correlation-Id header stands in when the body has none. */
/**
 * An error answer the service would never give, so the base URL points at something else
 * (a web site, a plain HTTP server, a proxy, another JSON server such as the sandbox
 * platforms): what it sent instead, or undefined. The service words its 404s, 405s and
 * 501s in its JSON envelope, which always names its statusCode; a page, nothing, or JSON
 * of another shape instead is a stranger's (retrying cannot help: none of the three is retried).
 */
function notTheService(status: number, body: ErrorEnvelope | undefined, text: string, headers: Record<string, string | string[] | undefined>): string | undefined {
  if (status !== 404 && status !== 405 && status !== 501) return undefined;
  if (body?.error !== undefined && typeof body.statusCode === 'number') return undefined;
  // An empty 404 is the answer of a route without a body to say more: not reason enough.
  if (text.trim() === '') return status === 404 ? undefined : 'an empty body';
  return header(headers, 'content-type') ?? 'a body';
}

function parseErrorBody(text: string, correlationId: string | undefined): ErrorEnvelope | undefined {
  let body: ErrorEnvelope | undefined;
  try {
    const parsed = JSON.parse(text) as unknown;
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) body = parsed as ErrorEnvelope;
  } catch {
    // not JSON (a proxy's HTML page, say): keep the status only
  }
  if (correlationId && !body?.correlationId) body = { ...body, correlationId };
  return body;
}

function jitter(maxMs: number): number {
  return Math.random() * maxMs;
}

/** 200 ms, 400 ms, 800 ms … capped at 10 s, with full jitter on the upper half. */
export function backoffMs(attempt: number): number {
  const base = Math.min(10_000, 200 * 2 ** attempt);
  return base / 2 + jitter(base / 2);
}
