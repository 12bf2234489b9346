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

/** The service could not be reached, or the connection broke before a response arrived. */
export class ConnectionError extends Error {
  constructor(readonly method: string, readonly path: string, readonly baseUrl: string, cause: unknown) {
    super(`Could not reach ${baseUrl} (${(cause as { code?: string })?.code ?? (cause as Error)?.message ?? 'connection failed'}).`, { cause });
    this.name = 'ConnectionError';
  }
}
