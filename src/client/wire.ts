// The service's records as the client reads them (API.md), and the pull statuses grouped
// the way the CLI waits on them. The wider records (CompanyRecord, ConnectionRecord,
// IntegrationRecord) are what list and get commands print; the Wire* ones are the fields
// the engines rely on.

export interface DataConnectionError {
  statusCode?: string;
  statusText?: string;
  errorMessage?: string;
  erroredOnUtc?: string;
  status?: string;
}

export interface WireConnection {
  id: string;
  integrationKey: string;
  platformName: string;
  status: 'PendingAuth' | 'Linked' | 'Unlinked' | 'Deauthorized' | string;
  lastSync?: string;
  dataConnectionErrors?: DataConnectionError[] | null;
}

export interface WireCompany {
  id: string;
  name: string;
  lastSync?: string;
  dataConnections: WireConnection[];
}

export interface WireIntegration {
  key: string;
  name: string;
  dataTypes: string[];
}

export interface ConnectionRecord {
  id: string;
  integrationId: string;
  integrationKey: string;
  sourceId: string;
  sourceType: string;
  platformName: string;
  linkUrl: string;
  status: 'PendingAuth' | 'Linked' | 'Unlinked' | 'Deauthorized';
  lastSync?: string;
  created: string;
  dataConnectionErrors: Array<{ statusCode?: string | number; statusText?: string; errorMessage?: string; erroredOnUtc?: string; status?: string }> | null;
  connectionInfo?: Record<string, unknown> | null;
}

export interface CompanyRecord {
  id: string;
  name: string;
  description?: string;
  redirect: string;
  lastSync?: string;
  created: string;
  createdByUserName?: string | null;
  products: string[];
  tags: Record<string, string>;
  referenceSubsidiaryCompanies: unknown[];
  dataConnections: ConnectionRecord[];
}

export interface TokenField {
  name: string;
  required: boolean;
  description: string;
}

export interface IntegrationRecord {
  key: string;
  name: string;
  sourceType: string;
  migrationRoute: 'self-service' | 'managed';
  tokenFields: TokenField[];
  dataTypes: string[];
}

export interface ProfileRecord {
  name: string;
  clientId: string;
  plan: string;
  created: string;
  isAdmin: boolean;
  actingAsClient: boolean;
}

export interface ClientRecord {
  id: string;
  name: string;
  plan: string;
  created: string;
  isAdmin: boolean;
}

/** An API key as listed: never the key itself. */
export interface ApiKeyRecord {
  id: string;
  created: string;
  revoked?: string;
}

export interface CreatedClient extends Omit<ClientRecord, 'isAdmin'> {
  /** Shown once. */
  apiKey: string;
}

export interface PullOperation {
  id: string;
  companyId: string;
  connectionId: string;
  dataType: string;
  status: string;
  statusDescription?: string | null;
  errorMessage?: string | null;
  requested: string;
  completed?: string;
  progress: number;
  isCompleted: boolean;
  isErrored: boolean;
}

export interface DataStatusEntry {
  dataType: string;
  currentStatus: string;
  lastSuccessfulSync?: string;
  latestSyncId?: string;
  latestSuccessfulSyncId?: string;
}

export type DataStatus = Record<string, DataStatusEntry>;

export interface ValidationItem {
  itemId?: string;
  message: string;
  validatorName?: string;
}

export interface PushOperation {
  pushOperationKey: string;
  companyId: string;
  dataConnectionKey: string;
  dataType: string;
  status: 'Pending' | 'Failed' | 'Success' | 'TimedOut';
  statusCode: number;
  requestedOnUtc: string;
  completedOnUtc?: string;
  timeoutInMinutes?: number | null;
  errorMessage?: string | null;
  validation: { errors: ValidationItem[]; warnings: ValidationItem[] };
  changes?: unknown[] | null;
}

/** A pull in one of these states is still on its way (queued or running). */
const RUNNING = new Set([
  'Initial', 'Queued', 'Fetching', 'MapQueued', 'Mapping', 'ProcessingQueued', 'Processing', 'ValidationQueued', 'Validating',
]);

export const isRunning = (status: string): boolean => RUNNING.has(status);
/** Finished without data: every finished state other than Complete (errors, Cancelled, NotSupported). */
export const isFailed = (status: string): boolean => status !== 'Complete' && !RUNNING.has(status);

export function reauthorizationRequired(connection: { status: string }): boolean {
  return connection.status === 'Deauthorized';
}

/** A connection's status, with "reauthorization required" spelled out for a Deauthorized one. */
export function connectionStatusText(connection: { status: string }): string {
  return reauthorizationRequired(connection) ? 'Deauthorized (reauthorization required)' : connection.status;
}

// ---- webhooks (ferry's service; docs/events.md)

/** A webhook consumer as listed: never its signing secret. */
export interface WebhookConsumerRecord {
  id: string;
  url: string;
  eventTypes: string[];
  /** `key:value` company tags it is limited to; null or empty for every company. */
  companyTags?: string[] | null;
  disabled: boolean;
  /** Why the service disabled it (a 410, a day of failures), when it did. */
  disabledReason?: string | null;
  created: string;
}

/** The answer to POST /webhooks: the consumer with its signing secret (`whsec_…`), shown this once. */
export interface CreatedWebhookConsumer extends WebhookConsumerRecord {
  secret: string;
}

export type WebhookDeliveryStatus = 'Pending' | 'Delivered' | 'Failed';

/** One attempt of a delivery: the receiver's status code, or why there was none. */
export interface WebhookAttemptRecord {
  at: string;
  statusCode?: number | null;
  error?: string | null;
  latencyMs: number;
}

/** One event's delivery to one consumer, as the delivery log lists it. */
export interface WebhookDeliveryRecord {
  id: string;
  eventId: string;
  eventType: string;
  status: WebhookDeliveryStatus;
  attempts: number;
  created: string;
  completed?: string | null;
  nextAttempt?: string | null;
  lastAttempt?: WebhookAttemptRecord | null;
}

/** GET …/deliveries/{id}: the delivery with every attempt. */
export interface WebhookDeliveryDetail extends WebhookDeliveryRecord {
  attemptLog?: WebhookAttemptRecord[];
}

// ---- events (ferry's service; docs/events.md)

/** An event as the service records it: the body of a webhook delivery, a stream message's data and a list entry. */
export interface EventRecord {
  id: string;
  eventType: string;
  generatedDate: string;
  payload: Record<string, unknown>;
}

/** GET /events: the account's events after one of its numbers, each with its own (the account counts its own events only). */
export interface EventList {
  results: Array<EventRecord & { sequence: number }>;
  /** Pass as `after` to continue: nothing of the account's lies between the last entry and it. */
  lastSequence: number;
}
