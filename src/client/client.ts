// The API client: one keep-alive pool per target, Basic auth, typed errors, retries with
// jittered exponential backoff that honour Retry-After, and pacing by the rate-limit
// headers. A POST is retried only when the service cannot have acted on it (connection
// refused, 429, 503); anything else is the caller's decision.
import { Pool } from 'undici';
import { ApiRequestError, ConnectionError, type ErrorEnvelope } from './errors.js';
import { Pacer, sleep } from './pacer.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export type QueryValue = string | number | boolean | undefined;

export interface ClientOptions {
  baseUrl: string;
  apiKey: string;
  /** Admin key acting for a client (X-Client-Id). */
  clientId?: string;
  timeoutMs?: number;
  maxRetries?: number;
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
}

const RETRY_STATUSES = new Set([429, 500, 502, 503, 504]);
const SAFE_POST_RETRY_STATUSES = new Set([429, 503]);
const CONNECT_ERRORS = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT']);

export class ApiClient {
  readonly baseUrl: string;
  private readonly pool: Pool;
  private readonly pacer = new Pacer();
  private readonly authorization: string;
  private readonly basePath: string;

  constructor(private readonly options: ClientOptions) {
    const url = new URL(options.baseUrl);
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.basePath = url.pathname.replace(/\/+$/, '');
    this.pool = new Pool(url.origin, { connections: options.connections ?? 16, keepAliveTimeout: 30_000 });
    this.authorization = `Basic ${Buffer.from(options.apiKey).toString('base64')}`;
  }

  async close(): Promise<void> {
    await this.pool.close();
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
    for (let attempt = 0; ; attempt += 1) {
      await this.pacer.acquire(options.signal);
      const started = Date.now();
      let response: Awaited<ReturnType<Pool['request']>>;
      try {
        response = await this.pool.request({
          method,
          path: target,
          headers: this.headers(options),
          body: options.body === undefined ? null : JSON.stringify(options.body),
          headersTimeout: this.options.timeoutMs ?? 60_000,
          bodyTimeout: this.options.timeoutMs ?? 60_000,
          signal: options.signal ?? null,
        });
      } catch (err) {
        if (options.signal?.aborted) throw err;
        const code = (err as { code?: string }).code ?? '';
        const neverSent = CONNECT_ERRORS.has(code);
        const retryable = method !== 'POST' || options.idempotent || neverSent;
        this.log(`${method} ${path} failed: ${code || (err as Error).message}`);
        if (!retryable || attempt >= maxRetries) throw new ConnectionError(method, path, this.baseUrl, err);
        await sleep(backoffMs(attempt), options.signal);
        continue;
      }
      const { statusCode, headers } = response;
      this.pacer.observe(rateHeaders(headers));
      const correlationId = header(headers, 'x-correlation-id');
      this.log(`${method} ${path} → ${statusCode} ${Date.now() - started}ms${correlationId ? ` ${correlationId}` : ''}`);
      if (statusCode < 400) {
        const text = await response.body.text();
        return { status: statusCode, headers, ms: Date.now() - started, body: (text === '' ? undefined : JSON.parse(text)) as T };
      }
      const body = await readErrorBody(response.body);
      const retryAfter = Number.parseFloat(header(headers, 'retry-after') ?? '');
      const retryAfterSeconds = Number.isFinite(retryAfter) ? retryAfter : undefined;
      const retryable = RETRY_STATUSES.has(statusCode) && (method !== 'POST' || options.idempotent || SAFE_POST_RETRY_STATUSES.has(statusCode));
      if (!retryable || attempt >= maxRetries) throw new ApiRequestError(method, path, statusCode, body, retryAfterSeconds);
      const waitMs = retryAfterSeconds !== undefined ? retryAfterSeconds * 1000 + jitter(250) : backoffMs(attempt);
      if (statusCode === 429) this.pacer.backOff(waitMs);
      await sleep(waitMs, options.signal);
    }
  }

  /** Every page of a list, following `_links.next` until the last page. */
  async *pages<T>(path: string, options: RequestOptions = {}): AsyncGenerator<Page<T>> {
    let page = await this.get<Page<T>>(path, options);
    yield page;
    while (page._links?.next?.href) {
      page = await this.get<Page<T>>(page._links.next.href, { signal: options.signal });
      yield page;
    }
  }

  /** Every record of a list, page by page. */
  async *records<T>(path: string, options: RequestOptions = {}): AsyncGenerator<T> {
    for await (const page of this.pages<T>(path, options)) yield* page.results;
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

function rateHeaders(headers: Record<string, string | string[] | undefined>) {
  const limit = Number(header(headers, 'x-rate-limit-limit'));
  const remaining = Number(header(headers, 'x-rate-limit-remaining'));
  return Number.isFinite(limit) && Number.isFinite(remaining) && header(headers, 'x-rate-limit-limit') !== undefined
    ? { limit, remaining }
    : undefined;
}

async function readErrorBody(body: { text(): Promise<string> }): Promise<ErrorEnvelope | undefined> {
  try {
    return JSON.parse(await body.text()) as ErrorEnvelope;
  } catch {
    return undefined;
  }
}

function jitter(maxMs: number): number {
  return Math.random() * maxMs;
}

/** 200 ms, 400 ms, 800 ms … capped at 10 s, with full jitter on the upper half. */
export function backoffMs(attempt: number): number {
  const base = Math.min(10_000, 200 * 2 ** attempt);
  return base / 2 + jitter(base / 2);
}
