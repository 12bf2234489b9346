// The service's one error catalogue. Every error that leaves the service is built here,
// so texts stay word for word as the contract says and internals never leak.

import { byteSizeText } from '../lib/byte-size.js';

export interface ValidationItem {
  /** Which rule found it (the read validation results name their rules). */
  ruleId?: string;
  itemId?: string;
  message: string;
  validatorName?: string;
}

export interface Validation {
  errors: ValidationItem[];
  warnings: ValidationItem[];
}

export class ApiError extends Error {
  readonly statusCode: number;
  readonly validation?: Validation;
  readonly headers: Record<string, string>;

  constructor(statusCode: number, message: string, options: { validation?: ValidationItem[]; headers?: Record<string, string> } = {}) {
    super(message);
    this.name = 'ApiError';
    this.statusCode = statusCode;
    if (options.validation) this.validation = { errors: options.validation, warnings: [] };
    this.headers = options.headers ?? {};
  }
}

/** Where the error reference lives; quoted in the 402 messages. */
export const ERRORS_DOC_URL = 'https://docs.ferry.dev/errors';

export const SERVICE_NAME = 'PublicApi';

export const errors = {
  badRequest: (message: string, validation?: ValidationItem[]) => new ApiError(400, message, validation ? { validation } : {}),
  malformedJson: () => new ApiError(400, 'The request body is not valid JSON.'),
  bodyTooLarge: (limit: number) => new ApiError(400, `The request body is larger than the limit of ${limit} bytes.`),
  bodyTooDeep: (limit: number) => new ApiError(400, `The request body nests objects and arrays more than ${limit} levels deep.`),
  /** Neither store can hold U+0000 in text (PostgreSQL refuses it), and no id or value needs it. */
  nulCharacter: (where: 'URL' | 'request body', itemId?: string) => new ApiError(400, `The ${where} holds the control character NUL (U+0000, %00 in a URL), which no value may contain.`,
    itemId ? { validation: [{ itemId, message: 'must not contain the control character NUL (U+0000)', validatorName: 'Request' }] } : {}),
  unsupportedMediaType: () => new ApiError(400, 'Request bodies must be JSON (Content-Type: application/json).'),
  /**
   * `counted`: the file itself or the whole multipart body that carried it; `received`: its
   * declared length, or what had arrived when reading stopped, past the limit.
   */
  attachmentTooLarge: (limit: number, received: number, counted: 'file' | 'request body') => new ApiError(400,
    `The attachment is larger than the limit of ${limit} bytes (${limit / (1024 * 1024)} MiB) per file: the ${counted} received was ${received} bytes.`, {
      validation: [{ itemId: 'file', message: `must be at most ${limit} bytes`, validatorName: 'Attachment' }],
    }),
  invalidParameter: (name: string, rule: string) => new ApiError(400, `Invalid value for parameter ${name}: ${rule}`, {
    validation: [{ itemId: name, message: rule, validatorName: 'QueryParameters' }],
  }),
  malformedQuery: () => new ApiError(400, 'Error parsing query - Malformed query.'),
  unknownProperty: (path: string) => new ApiError(400, `Error parsing query - Could not resolve property ${path}`),
  queryTooCostly: (what: string, limit: number) => new ApiError(400, `Error parsing query - At most ${limit} ${what} per request; split the search into several requests.`),

  unauthorized: () => new ApiError(401, 'Unauthorized. The API key is missing, malformed or not recognised.'),
  forbidden: () => new ApiError(403, 'You are using an outdated API key or a key not associated with that resource.'),
  adminOnly: () => new ApiError(403, 'This endpoint is restricted to administrators.'),
  clientHeaderNotAllowed: () => new ApiError(403, 'Only an administrator key may act for a client with X-Client-Id.'),
  managedOnly: (platformName: string) => new ApiError(403,
    `Tokens for ${platformName} are migrated by the support team (managed migration); self-service authorization is not available for this integration.`),

  companyLimit: () => new ApiError(402, 'CompanyValidationException: Company limit exceeded', {
    validation: [{ itemId: 'Company', message: `Company limit exceeded. Learn more at ${ERRORS_DOC_URL}`, validatorName: 'CreateCompany' }],
  }),
  syncScheduleNotAllowed: () => new ApiError(402, 'SyncSettingsValidationException: Sync schedule not allowed', {
    validation: [{ itemId: 'SyncSettings', message: 'Sync schedule is not allowed for this client.', validatorName: 'SyncSettings' }],
  }),
  accountExpired: () => new ApiError(402, 'Payment Required', {
    validation: [{ message: `Account expired. Learn more at ${ERRORS_DOC_URL}` }],
  }),

  routeNotFound: (method: string, url: string) => new ApiError(404, `No route ${method} ${url}.`),
  notFound: (what: string) => new ApiError(404, what),
  companyNotFound: (companyId: string) => new ApiError(404, `Company ${companyId} not found.`),
  connectionNotFound: (companyId: string, connectionId: string) =>
    new ApiError(404, `Data connection ${connectionId} not found for company ${companyId}.`),
  clientNotFound: (clientId: string) => new ApiError(404, `Client ${clientId} not found.`),
  keyNotFound: (keyId: string) => new ApiError(404, `API key ${keyId} not found.`),
  integrationNotFound: (key: string) => new ApiError(404, `Integration ${key} not found.`),
  dataTypeNotSupported: (dataType: string, platformNames: string) =>
    new ApiError(404, `Datatype ${dataType} not supported by platform(s) ${platformNames}`),

  /** Node's request timeout: the headers and body did not all arrive in time (http/incoming.ts). */
  requestTimeout: (limit: string) => new ApiError(408, `The request did not arrive in full within ${limit}; the connection is closed. Send the whole request, headers and body, within that time.`),
  headersTooLarge: () => new ApiError(431, 'The request headers are larger than the service accepts (16 KiB).'),
  malformedRequest: () => new ApiError(400, 'The request is not valid HTTP/1.1; the connection is closed.'),
  methodNotAllowed: (allow: string[]) => new ApiError(405, 'Method not allowed.', { headers: { Allow: allow.join(', ') } }),
  conflict: (message: string) => new ApiError(409, message),
  /** `size`: the file's, when known before it is read (a raw upload's Content-Length) or once it has been. */
  attachmentQuotaExceeded: (quota: number, used: number, size?: number) => new ApiError(413,
    `The account's attachments would pass its quota of ${quota} bytes (${byteSizeText(quota)}): ${used} bytes are in use, ${Math.max(0, quota - used)} left${
      size === undefined ? '' : `, and the file is ${size} bytes`}. Delete attachments, connections or companies to free space.`, {
      validation: [{ itemId: 'file', message: `must fit in the account's attachment quota of ${quota} bytes`, validatorName: 'Attachment' }],
    }),
  tooManyAttachments: (limit: number) => new ApiError(413,
    `The record has ${limit} attachments, the most one record may have: delete one to add another.`, {
      validation: [{ itemId: 'file', message: `at most ${limit} files per record`, validatorName: 'Attachment' }],
    }),
  tooManyRequests: (retryAfterSeconds: number) => new ApiError(429, 'Too many requests. Retry later.', {
    headers: { 'Retry-After': String(retryAfterSeconds) },
  }),
  /** `per`: `API key` or `account`. */
  tooManyStreams: (per: string, limit: number, retryAfterSeconds: number) => new ApiError(429,
    `Too many open event streams: at most ${limit} per ${per}. Close one, or retry later.`, { headers: { 'Retry-After': String(retryAfterSeconds) } }),
  streamsFull: (retryAfterSeconds: number) => new ApiError(503, 'Service unavailable: it holds as many event streams as it can. Retry later.', {
    headers: { 'Retry-After': String(retryAfterSeconds) },
  }),
  tooManyRenders: (limit: number) => new ApiError(429, `Too many PDFs being rendered for this client: at most ${limit} at once. Retry when one has been answered.`, {
    headers: { 'Retry-After': '2' },
  }),
  platformUnavailable: (platformName: string) => new ApiError(503, `${platformName} could not be reached or answered with an error. Retry later.`, { headers: { 'Retry-After': '5' } }),
  internal: () => new ApiError(500, 'Internal server error. Retry later, and quote the correlation id to support if it persists.'),
  databaseUnavailable: () => new ApiError(503, 'Service unavailable: its database cannot be reached. Retry later.', { headers: { 'Retry-After': '5' } }),
  maintenance: () => new ApiError(503, 'Service unavailable: offline for maintenance. Retry later.', { headers: { 'Retry-After': '60' } }),
} as const;

export interface ErrorBody {
  statusCode: number;
  service: string;
  error: string;
  correlationId: string;
  validation?: Validation;
}

export function errorBody(err: ApiError, correlationId: string): ErrorBody {
  const body: ErrorBody = { statusCode: err.statusCode, service: SERVICE_NAME, error: err.message, correlationId };
  if (err.validation) body.validation = err.validation;
  return body;
}
