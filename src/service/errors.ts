// The service's one error catalogue. Every error that leaves the service is built here,
// so texts stay word for word as the contract says and internals never leak.

import { byteSizeText } from '../lib/byte-size.js';
import { outOfScopeProduct } from './out-of-scope.js';

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

/** Why a request was refused with 429: the key's rate limit, its turn for costly reads or PDFs, its event streams, or the platform's own limit. */
export type TooManyReason = 'rate_limit' | 'fair_queue' | 'render_queue' | 'stream_cap' | 'platform_rate_limit';

export class ApiError extends Error {
  readonly statusCode: number;
  readonly validation?: Validation;
  readonly headers: Record<string, string>;
  /** A 429's reason, for the metrics (observability/http-metrics.ts); never sent. */
  readonly refusal?: TooManyReason;

  constructor(statusCode: number, message: string, options: { validation?: ValidationItem[]; headers?: Record<string, string>; refusal?: TooManyReason } = {}) {
    super(message);
    this.name = 'ApiError';
    this.statusCode = statusCode;
    if (options.validation) this.validation = { errors: options.validation, warnings: [] };
    this.headers = options.headers ?? {};
    if (options.refusal) this.refusal = options.refusal;
  }
}

/** Where the error reference lives; quoted in the 402 messages. */
export const ERRORS_DOC_URL = 'https://docs.ferry.dev/errors';

export const SERVICE_NAME = 'PublicApi';

/** The one validation item of the entries below that carry one. */
const item = (itemId: string, message: string, validatorName: string): ValidationItem[] => [{ itemId, message, validatorName }];

/** A route of a product ferry does not serve (out-of-scope.ts names it). */
const outOfScope = (method: string, path: string, product: string) => new ApiError(404,
  `${method} ${path} is outside ferry's scope: it belongs to ${product}, which this service does not serve (docs/api.md lists these routes).`);

/**
 * Every error the service answers, one named entry each, its text built from parameters.
 * The texts are the contract's (clients and tests compare them byte for byte): change one
 * only with the contract.
 */
export const errors = {
  // ---- Requests that cannot be read: body, query, multipart.
  /** A 4xx of the framework's own that no entry names. */
  badRequest: () => new ApiError(400, 'Bad request.'),
  malformedJson: () => new ApiError(400, 'The request body is not valid JSON.'),
  bodyNotObject: () => new ApiError(400, 'The request body must be a JSON object.'),
  /** A write route that takes no body was sent one that is not empty (http/route.ts). */
  bodyNotTaken: () => new ApiError(400, 'This route takes no request body; send none (or an empty JSON object).'),
  bodyTooLarge: (limit: number) => new ApiError(400, `The request body is larger than the limit of ${limit} bytes.`),
  bodyTooDeep: (limit: number) => new ApiError(400, `The request body nests objects and arrays more than ${limit} levels deep.`),
  /** Neither store can hold U+0000 in text (PostgreSQL refuses it), and no id or value needs it. */
  nulCharacter: (where: 'URL' | 'request body', itemId?: string) => new ApiError(400, `The ${where} holds the control character NUL (U+0000, %00 in a URL), which no value may contain.`,
    itemId ? { validation: [{ itemId, message: 'must not contain the control character NUL (U+0000)', validatorName: 'Request' }] } : {}),
  unsupportedMediaType: () => new ApiError(400, 'Request bodies must be JSON (Content-Type: application/json).'),
  invalidParameter: (name: string, rule: string) => new ApiError(400, `Invalid value for parameter ${name}: ${rule}`, {
    validation: [{ itemId: name, message: rule, validatorName: 'QueryParameters' }],
  }),
  malformedQuery: () => new ApiError(400, 'Error parsing query - Malformed query.'),
  unknownProperty: (path: string) => new ApiError(400, `Error parsing query - Could not resolve property ${path}`),
  queryTooCostly: (what: string, limit: number) => new ApiError(400, `Error parsing query - At most ${limit} ${what} per request; split the search into several requests.`),
  /** A write's body names fields its route does not take: refused, never dropped (http/known-fields.ts). */
  unknownFields: (validation: ValidationItem[]) => new ApiError(400,
    `The request has ${validation.length === 1 ? 'a field' : 'fields'} this route does not take: ${validation.map((i) => i.itemId).join(', ')}.`, { validation }),

  // ---- Bodies that fail their fields' checks: a headline and one validation item per problem.
  invalidCompany: (validation: ValidationItem[]) => new ApiError(400, 'The company is not valid.', { validation }),
  /** A company whose only problem is its name: the headline is that problem. */
  invalidCompanyName: (validation: ValidationItem[]) => new ApiError(400, validation[0]!.message, { validation }),
  invalidClient: (validation: ValidationItem[]) => new ApiError(400, 'The client is not valid.', { validation }),
  invalidProfile: (validation: ValidationItem[]) => new ApiError(400, 'The profile is not valid.', { validation }),
  invalidCorsSettings: (maxOrigins: number) => new ApiError(400, 'The CORS settings are not valid.', {
    validation: item('allowedOrigins', `allowedOrigins must be a list of at most ${maxOrigins} origins such as https://app.example.com (scheme, host and port only).`, 'CorsSettings'),
  }),
  invalidApiKeyName: (maxLength: number) => new ApiError(400, 'The API key is not valid.', {
    validation: item('name', `name must be text of at most ${maxLength} characters.`, 'ApiKey'),
  }),
  invalidSyncPriority: (value: string) => new ApiError(400, `The Ferry-Sync-Priority header must be "interactive" or left out; got ${JSON.stringify(value.slice(0, 40))}.`, {
    validation: item('Ferry-Sync-Priority', 'Ferry-Sync-Priority must be "interactive" or left out.', 'Headers'),
  }),
  invalidSyncSettings: (validation: ValidationItem[]) => new ApiError(400, 'The sync settings are not valid.', { validation }),
  syncSettingsNotArray: () => new ApiError(400, 'settings must be an array.', {
    validation: item('settings', 'settings must be an array of {dataType, syncSchedule, …}.', 'SyncSettings'),
  }),
  invalidSupplementalConfig: (validation: ValidationItem[]) => new ApiError(400, 'The supplemental data configuration is not valid.', { validation }),
  invalidCustomDataType: (identifier: string, validation: ValidationItem[]) => new ApiError(400, `The custom data type ${identifier} is not valid.`, { validation }),
  invalidPushRecord: (dataType: string, validation: ValidationItem[]) => new ApiError(400, `The ${dataType} record is not valid.`, { validation }),
  /** The items' messages are in the headline too. */
  invalidWebhookConsumer: (validation: ValidationItem[]) => new ApiError(400, `The webhook consumer is not valid: ${validation.map((i) => i.message).join(' ')}`, { validation }),
  /** The items' messages are in the headline too. */
  invalidRule: (validation: ValidationItem[]) => new ApiError(400, `The webhook rule is not valid: ${validation.map((i) => i.message).join(' ')}`, { validation }),

  // ---- Who may do what: 401, 403, and the plan's limits (402).
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

  // ---- Accounts, companies, integrations.
  /** An unknown route; one of a product ferry does not serve says so. */
  routeNotFound: (method: string, url: string) => {
    const product = outOfScopeProduct(url);
    return product ? outOfScope(method, url, product) : new ApiError(404, `No route ${method} ${url}.`);
  },
  outOfScope,
  companyNotFound: (companyId: string) => new ApiError(404, `Company ${companyId} not found.`),
  clientNotFound: (clientId: string) => new ApiError(404, `Client ${clientId} not found.`),
  keyNotFound: (keyId: string) => new ApiError(404, `API key ${keyId} not found.`),
  integrationNotFound: (key: string) => new ApiError(404, `Integration ${key} not found.`),
  brandingImageNotFound: (image: string) => new ApiError(404, `No branding image ${image}.`),
  noSandbox: () => new ApiError(404, 'This service has no sandbox platforms.'),
  notAProduct: (given: string) => new ApiError(400, `${given} is not a product identifier (lowercase letters, digits and dashes, e.g. bank-feeds).`),
  productNotEnabled: (product: string, companyId: string) => new ApiError(400,
    `The product ${product} is not enabled for company ${companyId}: enable it with PUT /companies/${companyId}/products/${product} first.`),

  // ---- Connections and their tokens.
  connectionNotFound: (companyId: string, connectionId: string) =>
    new ApiError(404, `Data connection ${connectionId} not found for company ${companyId}.`),
  platformKeyRequired: () => new ApiError(400, 'platformKey is required.', {
    validation: item('platformKey', 'platformKey is required: the 4-letter key of an integration (GET /integrations).', 'Connection'),
  }),
  unknownPlatformKey: (platformKey: string) => new ApiError(400, `Unknown platformKey ${platformKey}.`, {
    validation: item('platformKey', `No integration has the key ${platformKey}; see GET /integrations.`, 'Connection'),
  }),
  onlyUnlinkedSettable: () => new ApiError(400, 'Only {"status":"Unlinked"} can be set.', {
    validation: item('status', 'status can only be set to Unlinked.', 'Connection'),
  }),
  unlinkNotLinked: (status: string) => new ApiError(400, `Only a Linked connection can be unlinked; this one is ${status}.`, {
    validation: item('status', `The connection is ${status}, not Linked.`, 'Connection'),
  }),
  connectionInfoNotObject: () => new ApiError(400, 'connectionInfo must be an object of the integration\'s token fields.', {
    validation: item('connectionInfo', 'connectionInfo must be an object of token fields (GET /integrations/{platformKey} lists them).', 'Connection'),
  }),
  tokensNotInSchema: (platformName: string, validation: ValidationItem[]) => new ApiError(400, `The tokens do not match the ${platformName} token schema.`, { validation }),
  /** `reason`: the platform's own words (never the tokens). */
  tokensRejected: (platformName: string, reason: string) => new ApiError(400, `${platformName} rejected the tokens.`, {
    validation: item('tokens', reason, 'PlatformVerification'),
  }),
  connectionNotLinked: (connectionId: string, status: string) => new ApiError(400, `Connection ${connectionId} is ${status}, not Linked.`),
  notALinkedConnection: (connectionId: string, companyId: string) => new ApiError(400, `Connection ${connectionId} is not a Linked connection of company ${companyId}.`),
  noLinkedConnection: (companyId: string) => new ApiError(400, `Company ${companyId} has no Linked connection to sync.`),

  // ---- Data: data types, data sets, records, custom data types.
  unknownDataType: (given: string) => new ApiError(404, `Unknown data type ${given}.`),
  dataTypeNotSupported: (dataType: string, platformNames: string) =>
    new ApiError(404, `Datatype ${dataType} not supported by platform(s) ${platformNames}`),
  datasetNotFound: (datasetId: string, companyId: string) => new ApiError(404, `Dataset ${datasetId} not found for company ${companyId}.`),
  noCompanyInfo: (companyId: string) => new ApiError(404, `Company ${companyId} has no company info on its platform.`),
  recordNotFound: (dataType: string, recordId: string, companyId: string) => new ApiError(404, `No ${dataType} record ${recordId} for company ${companyId}.`),
  connectionRecordNotFound: (dataType: string, recordId: string, connectionId: string) =>
    new ApiError(404, `No ${dataType} record ${recordId} for connection ${connectionId}.`),
  readPerCompany: (dataType: string, companyId: string, path: string) => new ApiError(404, `${dataType} is read per company: GET /companies/${companyId}/data/${path}.`),
  customDataTypeNotFound: (identifier: string, platformName: string) => new ApiError(404, `No custom data type ${identifier} is configured for ${platformName}.`),
  customDataTypeNotConfigured: (identifier: string, platformKey: string) => new ApiError(404,
    `No custom data type ${identifier} is configured for ${platformKey}: configure it with PUT /integrations/${platformKey}/dataTypes/custom/${identifier}.`),
  dataSetSyncing: (dataType: string, companyId: string) => new ApiError(409,
    `The ${dataType} data set of company ${companyId} is being synced and no sync of it has completed yet. Try again when GET /companies/${companyId}/dataStatus shows it Complete.`),
  dataSetNotRequested: (dataType: string, companyId: string) => new ApiError(409,
    `The ${dataType} data set of company ${companyId} has not been requested. Start a sync with POST /companies/${companyId}/data/all.`),

  // ---- Push.
  notPushable: (dataType: string) => new ApiError(400, `Datatype ${dataType} cannot be pushed.`),
  /** Push and attachment uploads alike. */
  pushNotLinked: (status: string) => new ApiError(400, `The connection is ${status}; only a Linked connection can push. Reauthorize it first.`),
  noPlatformToPush: () => new ApiError(400, 'The connection has no platform to push to.'),
  pushNotFound: (pushOperationKey: string, companyId: string) => new ApiError(404, `Push operation ${pushOperationKey} not found for company ${companyId}.`),

  // ---- Attachments and their uploads.
  noAttachments: (dataType: string) => new ApiError(404, `${dataType} records have no attachments.`),
  attachmentNotFound: (attachmentId: string, dataType: string, recordId: string) => new ApiError(404, `Attachment ${attachmentId} not found for ${dataType} record ${recordId}.`),
  /** Its row is there but its file is not. */
  attachmentFileNotFound: (attachmentId: string) => new ApiError(404, `Attachment ${attachmentId} not found.`),
  fileMissing: () => new ApiError(400, 'The request has no file: send multipart/form-data with one file part (a part with a filename).', {
    validation: item('file', 'is required', 'Attachment'),
  }),
  fileNameMissing: () => new ApiError(400, 'The file has no name: give the multipart file part a filename, or send the raw file with ?fileName=NAME.', {
    validation: item('fileName', 'is required', 'Attachment'),
  }),
  /** `problem`: what platforms/limits.ts attachmentNameProblem says. */
  badFileName: (problem: string) => new ApiError(400, `The file name ${problem}.`, { validation: item('fileName', problem, 'Attachment') }),
  fileEmpty: () => new ApiError(400, 'The file is empty (0 bytes).', { validation: item('file', 'must not be empty', 'Attachment') }),
  uploadCutShort: () => new ApiError(400, 'The upload ended before the whole file arrived.'),
  fileSentAsText: () => new ApiError(400,
    'The file arrived as text with bytes replaced by U+FFFD: the SDK sends a Node Buffer as UTF-8 text. Pass the content as a plain Uint8Array (new Uint8Array(buffer)) and send it again.', {
      validation: item('file', 'is not the bytes of the file', 'Attachment'),
    }),
  tooManyFileParts: () => new ApiError(400, 'Send one file per request: this one has more than one file part.'),
  tooManyParts: (maxFields: number) => new ApiError(400, `The multipart body has too many parts: send one file part and at most ${maxFields} small fields.`),
  multipartUnreadable: () => new ApiError(400, 'The multipart/form-data body could not be read: send one file part, with a boundary in the Content-Type.'),
  /**
   * `counted`: the file itself or the whole multipart body that carried it; `received`: its
   * declared length, or what had arrived when reading stopped, past the limit.
   */
  attachmentTooLarge: (limit: number, received: number, counted: 'file' | 'request body') => new ApiError(400,
    `The attachment is larger than the limit of ${limit} bytes (${limit / (1024 * 1024)} MiB) per file: the ${counted} received was ${received} bytes.`, {
      validation: [{ itemId: 'file', message: `must be at most ${limit} bytes`, validatorName: 'Attachment' }],
    }),
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

  // ---- Webhooks.
  webhookConsumerNotFound: (consumerId: string) => new ApiError(404, `Webhook consumer ${consumerId} not found.`),
  ruleNotFound: (ruleId: string) => new ApiError(404, `Webhook rule ${ruleId} not found.`),
  deliveryNotFound: (deliveryId: string, consumerId: string) => new ApiError(404, `Delivery ${deliveryId} not found for webhook consumer ${consumerId}.`),
  tooManyConsumers: (limit: number) => new ApiError(400, `An account may have at most ${limit} webhook consumers; delete one first.`),
  /** `problem`: why the URL may not be delivered to (webhooks/target-policy). */
  consumerUrlRefused: (consumerId: string, problem: string) => new ApiError(400, `Webhook consumer ${consumerId} cannot be sent to: ${problem}`, {
    validation: item('url', problem, 'WebhookConsumer'),
  }),
  consumerDisabled: (consumerId: string) => new ApiError(409,
    `Webhook consumer ${consumerId} is disabled; nothing is delivered to it. Create a new consumer to receive events again.`),

  // ---- The connection, the method, and the service's capacity.
  /** Node's request timeout: the headers and body did not all arrive in time (http/incoming.ts). */
  requestTimeout: (limit: string) => new ApiError(408, `The request did not arrive in full within ${limit}; the connection is closed. Send the whole request, headers and body, within that time.`),
  headersTooLarge: () => new ApiError(431, 'The request headers are larger than the service accepts (16 KiB).'),
  malformedRequest: () => new ApiError(400, 'The request is not valid HTTP/1.1; the connection is closed.'),
  methodNotAllowed: (allow: string[]) => new ApiError(405, 'Method not allowed.', { headers: { Allow: allow.join(', ') } }),
  tooManyRequests: (retryAfterSeconds: number, refusal: TooManyReason) => new ApiError(429, 'Too many requests. Retry later.', {
    headers: { 'Retry-After': String(retryAfterSeconds) }, refusal,
  }),
  /** `per`: `API key` or `account`. */
  tooManyStreams: (per: string, limit: number, retryAfterSeconds: number) => new ApiError(429,
    `Too many open event streams: at most ${limit} per ${per}. Close one, or retry later.`, { headers: { 'Retry-After': String(retryAfterSeconds) }, refusal: 'stream_cap' }),
  streamsFull: (retryAfterSeconds: number) => new ApiError(503, 'Service unavailable: it holds as many event streams as it can. Retry later.', {
    headers: { 'Retry-After': String(retryAfterSeconds) },
  }),
  tooManyRenders: (limit: number) => new ApiError(429, `Too many PDFs being rendered for this client: at most ${limit} at once. Retry when one has been answered.`, {
    headers: { 'Retry-After': '2' }, refusal: 'render_queue',
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
