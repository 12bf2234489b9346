// Errors the API client raises. An HTTP error keeps everything the service said
// (status, error text, validation items, correlation id) so the CLI can show it.

export interface ValidationItem {
  itemId?: string;
  message: string;
  validatorName?: string;
}

export interface ErrorEnvelope {
  statusCode?: number;
  service?: string;
  error?: string;
  correlationId?: string;
  validation?: { errors?: ValidationItem[]; warnings?: ValidationItem[] };
}

export class ApiRequestError extends Error {
  readonly status: number;
  readonly correlationId?: string;
  readonly validation: ValidationItem[];
  readonly method: string;
  readonly path: string;
  readonly retryAfterSeconds?: number;

  constructor(method: string, path: string, status: number, body: ErrorEnvelope | undefined, retryAfterSeconds?: number) {
    super(body?.error ?? `HTTP ${status}`);
    this.name = 'ApiRequestError';
    this.method = method;
    this.path = path;
    this.status = status;
    if (body?.correlationId) this.correlationId = body.correlationId;
    this.validation = body?.validation?.errors ?? [];
    if (retryAfterSeconds !== undefined) this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** The service could not be reached, did not answer in time, or the connection broke before a response arrived. */
export class ConnectionError extends Error {
  /** The network error code (ECONNREFUSED, ECONNRESET, HEADERS_TIMEOUT, BODY_TIMEOUT, … see transport.ts), when there is one. */
  readonly code?: string;
  /** No answer within the client's timeout. */
  readonly timedOut: boolean;

  constructor(readonly method: string, readonly path: string, readonly baseUrl: string, cause: unknown, timeoutMs?: number) {
    const code = (cause as { code?: string } | undefined)?.code;
    const reason = code ?? (cause as Error | undefined)?.message ?? 'connection failed';
    const request = `${method} ${path.split('?')[0]}`;
    super(
      timeoutMs !== undefined
        ? `No response from ${baseUrl} within ${timeoutMs / 1000} s (${request}).`
        : code === undefined || NOT_CONNECTED.has(code)
          ? `Could not reach ${baseUrl} (${reason}).`
          : `The connection to ${baseUrl} broke during ${request} (${reason}).`,
      { cause },
    );
    this.name = 'ConnectionError';
    if (code) this.code = code;
    this.timedOut = timeoutMs !== undefined;
  }
}

const NOT_CONNECTED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'CONNECT_TIMEOUT']);

/** The target answered, but not as the service does (an HTML page, a proxy's error page, text): it is not the API. */
export class UnexpectedAnswerError extends Error {
  readonly hint: string;
  /** The HTTP status, when it is worth telling apart (a 404). */
  readonly status?: number;

  constructor(readonly method: string, readonly path: string, readonly baseUrl: string, contentType: string | undefined, status?: number) {
    super(`${baseUrl} answered ${method} ${path.split('?')[0]} with ${status ? `${status} and ` : ''}${contentType ? contentType.split(';')[0] : 'a body'} that is not the service's JSON.`);
    this.name = 'UnexpectedAnswerError';
    if (status !== undefined) this.status = status;
    this.hint = 'Is --base-url (or FERRY_BASE_URL) the API\'s own address, not a web page, a login page or a proxy in front of it? Nothing was written.';
  }
}

/** Errors that end a whole batch: the key is wrong or revoked, the plan expired, the service is gone or is not the service. */
export function isFatal(err: unknown): boolean {
  if (err instanceof ConnectionError || err instanceof UnexpectedAnswerError) return true;
  return err instanceof ApiRequestError && (err.status === 401 || err.status === 402 || err.status === 403);
}

/** One line for an item's failure: the service's message, its HTTP status and correlation id. */
export function describeError(err: unknown): string {
  if (err instanceof ApiRequestError) {
    const items = err.validation.map((v) => `${v.itemId ? `${v.itemId}: ` : ''}${v.message}`);
    return `${err.message}${items.length ? ` (${items.join('; ')})` : ''} [HTTP ${err.status}${err.correlationId ? `, correlation id ${err.correlationId}` : ''}]`;
  }
  return (err as Error)?.message ?? String(err);
}

/** The sandbox platforms could not be reached, or refused a call; the hint says where to look. */
export class SandboxError extends Error {
  constructor(message: string, readonly hint?: string) {
    super(message);
    this.name = 'SandboxError';
  }
}

/** The target has no event stream (GET /events/stream answered 404): only ferry's own service has one; the public API sends webhooks. */
export class StreamUnavailableError extends Error {
  readonly hint = 'Point --base-url at a ferry service (ferry serve), or have the API send webhooks to a public URL instead.';

  constructor(readonly baseUrl: string) {
    super(`${baseUrl} has no live event stream (GET /events/stream answered 404): only ferry's own service offers one.`);
    this.name = 'StreamUnavailableError';
  }
}
