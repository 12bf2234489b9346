// The sandbox platforms' error answers. Data and admin routes answer
// `{ error, message, errors? }`; the token endpoint answers as RFC 6749 says
// (`{ error, error_description }`), as real OAuth servers do.

export interface FieldError {
  field: string;
  message: string;
}

export type AuthErrorCode = 'invalid_token' | 'token_expired' | 'token_revoked';

export class SandboxError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: string,
    message: string,
    readonly options: { headers?: Record<string, string>; errors?: FieldError[]; oauth?: boolean } = {},
  ) {
    super(message);
    this.name = 'SandboxError';
  }

  body(): Record<string, unknown> {
    if (this.options.oauth) return { error: this.code, error_description: this.message };
    return this.options.errors ? { error: this.code, message: this.message, errors: this.options.errors } : { error: this.code, message: this.message };
  }
}

export const fail = {
  badRequest: (message: string, errors?: FieldError[]) => new SandboxError(400, 'invalid_request', message, errors ? { errors } : {}),
  validation: (errors: FieldError[]) => new SandboxError(400, 'validation_failed', 'The record is not valid.', { errors }),
  /** 401 with the reason in the body and in WWW-Authenticate (RFC 6750). */
  unauthorized: (code: AuthErrorCode, message: string) =>
    new SandboxError(401, code, message, { headers: { 'WWW-Authenticate': `Bearer error="invalid_token", error_description="${code}"` } }),
  forbidden: (message: string) => new SandboxError(403, 'forbidden', message),
  adminUnauthenticated: () => new SandboxError(401, 'unauthorized', 'The sandbox admin routes need ferry\'s admin key: Authorization: Basic base64(key).', {
    headers: { 'WWW-Authenticate': 'Basic realm="ferry sandbox admin"' },
  }),
  /** Run on its own, the sandbox asks a ferry service to judge admin keys; it gave no verdict. */
  judgeUnavailable: () => new SandboxError(503, 'unavailable', 'The ferry service that checks the sandbox\'s admin keys (--service-url) could not be asked. Retry shortly.', {
    headers: { 'Retry-After': '1' },
  }),
  notFound: (message: string) => new SandboxError(404, 'not_found', message),
  notPushable: (dataType: string) => new SandboxError(405, 'method_not_allowed', `${dataType} records cannot be created on this platform.`, {
    headers: { Allow: 'GET' },
  }),
  rateLimited: (retryAfterSeconds: number) => new SandboxError(429, 'rate_limited', 'Too many requests for this organisation. Retry later.', {
    headers: { 'Retry-After': String(retryAfterSeconds) },
  }),
  fault: (status: 500 | 503) => status === 503
    ? new SandboxError(503, 'unavailable', 'The platform is temporarily unavailable.', { headers: { 'Retry-After': '1' } })
    : new SandboxError(500, 'internal_error', 'The platform failed to answer.'),
  internal: () => new SandboxError(500, 'internal_error', 'The sandbox failed unexpectedly.'),
  oauth: (status: number, code: string, description: string) => new SandboxError(status, code, description, {
    oauth: true, headers: { 'Cache-Control': 'no-store' },
  }),
} as const;
