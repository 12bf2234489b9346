// The store as the rest of the service sees it: one interface, whatever holds the data.
// Routes, the sync and push workers, the schedulers and the read pool call these methods
// and never SQL. This is its synchronous shape, as SQLite answers (sqlite/sqlite-store.ts,
// over the SQLite modules beside it); the service uses the same methods asynchronously
// (async-store.ts), on SQLite or on PostgreSQL (pg/).
import type { FieldType } from '../query/index.js';
import type { AttachmentBody, AttachmentInput, AttachmentInsert, AttachmentLimits, AttachmentRow, RecordRef } from './attachments.js';
import type { ApiKeyRow, ClientRow, KeyedVersion, Plan } from './clients.js';
import type { ConfigKind } from './data-configs.js';
import type { CompletionTypes, ConsumerRow, EventInput, EventRow, ReadCompletion } from './events.js';
import type { CompanyInput, CompanyRow, NewCompanyRow } from './companies.js';
import type { CompanyConnection, CompanyConnections, ConnectionError, ConnectionRow, ConnectionStatus, PullConnection } from './connections.js';
import type { CompanyDataStatus, DatasetRow, RecordBytes, RecordInput, ScheduleCandidate } from './datasets.js';
import type { CompletedGeneration, PullChange, RecordBatch } from './grouped-writes.js';
import type { PullBacklogRow } from './monitoring.js';
import type { Page, PagePlan, PageRequest } from './paging.js';
import type { NewPull, PullFields, PullJob, PullRow } from './pulls.js';
import type { PushRow } from './pushes.js';
import type { SyncSetting } from './sync-settings.js';
import type { ClaimRequest } from './delivery-turns.js';
import type { AttemptOutcome, AttemptRow, ClaimResult, DeliveryRow, InFlightIds } from './webhook-deliveries.js';

/** Client accounts and their API keys (stored as hashes). */
export interface ClientStore {
  insertClient(client: { name: string; plan: Plan; created: string; isAdmin?: boolean }): ClientRow;
  getClient(id: string): ClientRow | undefined;
  listClients(request: PageRequest): Page<ClientRow>;
  insertApiKey(clientId: string, created: string, name?: string | null): { id: string; apiKey: string };
  setProfile(clientId: string, profile: Record<string, unknown>): void;
  findApiKeyByHash(keyHash: string): ApiKeyRow | undefined;
  getApiKey(clientId: string, keyId: string): ApiKeyRow | undefined;
  /** Of these keys, the ones that exist and are not revoked (one read, however many keys). */
  liveApiKeyIds(keyIds: string[]): string[];
  revokeApiKey(keyId: string, revoked: string): void;
  findAdminClient(): ClientRow | undefined;
  listApiKeys(clientId: string, request: PageRequest): Page<ApiKeyRow>;
}

/** Companies, each owned by one client. */
export interface CompanyStore {
  insertCompany(clientId: string, input: CompanyInput, created: string): CompanyRow;
  /**
   * The company as given (newCompanyRow: every column but seq) and its event, written
   * together or not at all, in or out of a transaction: on PostgreSQL one statement (no
   * BEGIN/COMMIT around it), on SQLite one transaction. Returns the company as stored.
   */
  insertCompanyWithEvent(company: NewCompanyRow, event: EventInput): CompanyRow;
  getCompany(id: string): CompanyRow | undefined;
  countCompanies(clientId: string): number;
  replaceCompany(id: string, input: CompanyInput): CompanyRow;
  deleteCompany(id: string): void;
  setCompanyProducts(id: string, products: string[]): void;
}

/** Connections: status, sealed tokens, the refresh lease. */
export interface ConnectionStore {
  insertConnection(companyId: string, integrationKey: string, sourceId: string, created: string): ConnectionRow;
  getConnection(companyId: string, id: string): ConnectionRow | undefined;
  /** The company and its connection `id` in one read; undefined when there is no such company. */
  getCompanyConnection(companyId: string, id: string): CompanyConnection | undefined;
  /** The company and all its connections (oldest first) in one read; undefined when there is no such company. */
  getCompanyWithConnections(companyId: string): CompanyConnections | undefined;
  listConnections(companyId: string, request: PageRequest): Page<ConnectionRow>;
  /** Connections of many companies in one query, grouped by company id (for company records). */
  connectionsByCompany(companyIds: string[]): Map<string, ConnectionRow[]>;
  setConnectionStatus(id: string, status: ConnectionStatus): void;
  deleteConnection(id: string): void;
  storeTokens(connectionId: string, sealed: Buffer, updated: string): void;
  loadSealedTokens(connectionId: string): Buffer | undefined;
  getConnectionById(id: string): ConnectionRow | undefined;
  /** getConnectionById, loadSealedTokens and the company's client id in one read: a pull's first look, all it needs before it fetches. */
  getPullConnection(id: string): PullConnection | undefined;
  /** A revoked grant: the connection needs reauthorization before it can sync again. */
  deauthorize(id: string, error: ConnectionError): void;
  setLastSync(connectionId: string, companyId: string, when: string): void;
  /** Takes the connection's refresh lease until `until` (ms) if it is free at `now`; true when taken. */
  takeRefreshLease(id: string, now: number, until: number): boolean;
  /**
   * Moves the lease this holder took or last renewed (`held`, its token) to `until`; false
   * when it is no longer `held` (the holder lost it), and then nothing changes.
   */
  renewRefreshLease(id: string, held: number, until: number): boolean;
  /** Frees the lease if it is still `held`: never the next holder's. */
  releaseRefreshLease(id: string, held: number): void;
  /**
   * Linked with fresh tokens: errors cleared, the platform's connection info kept. The row as
   * written (undefined when there is none). With `tokens`, they are stored as storeTokens
   * stores them, in the same statement on PostgreSQL (one round trip for both).
   */
  markLinked(id: string, connectionInfo: unknown, tokens?: { sealed: Buffer; updated: string }): ConnectionRow | undefined;
}

/** Data sets: generations (snapshots) of synced records, and the schedule. */
export interface DatasetStore {
  getDataset(companyId: string, dataType: string): DatasetRow | undefined;
  /** The company (undefined when there is none), its data sets and their latest pulls' states, in one read. */
  companyDataStatus(companyId: string): CompanyDataStatus | undefined;
  /** Reserves the generation a new pull writes into, and records the request. */
  reserveGeneration(companyId: string, dataType: string, syncId: string, requested: string): number;
  /** Makes a completed pull's generation the one readers see. Returns the generation it replaced. */
  publishGeneration(companyId: string, dataType: string, generation: number, syncId: string, completed: string): number | null;
  /**
   * publishGeneration of each of a company's completed pulls, then setLastSync of their
   * connections and the company (each the last time given), in one call: the completed
   * pulls' last writes in a job's group (sync/job-writes.ts). Call with the company locked
   * (the group's transaction reads it first), as every writer of both takes it. Answers,
   * in the order given, the generation each replaced.
   */
  completeGenerations(companyId: string, generations: CompletedGeneration[]): Array<number | null>;
  /** Upserts one page of records into a generation; callers wrap it in the page's transaction. */
  upsertRecords(companyId: string, dataType: string, generation: number, connectionId: string, records: RecordInput[]): void;
  /** upsertRecords of pages of several data sets in one call (one statement on PostgreSQL), in the order given. */
  writeRecords(batches: RecordBatch[]): void;
  /** Deletes up to `limit` records of older generations; returns how many went. */
  pruneGenerations(companyId: string, dataType: string, keep: number, limit: number): number;
  countRecords(companyId: string, dataType: string, generation: number): number;
  /** One record; with `connectionId`, only if that connection synced it. */
  getRecord(companyId: string, dataType: string, generation: number, id: string, connectionId?: string): string | undefined;
  recordFields(dataType: string): Map<string, FieldType>;
  rememberFields(dataType: string, fields: Map<string, FieldType>): void;
  /** rememberFields of several data types in one call, by data type. */
  rememberAllFields(fields: Map<string, Map<string, FieldType>>): void;
  /**
   * Query paths resolve to json_extract over the record; the data type is inlined as a
   * literal so SQLite can use the partial indexes. Both are spliced into SQL text, so both
   * are checked here against the only shapes that are safe, whatever the caller checked.
   */
  /** With `connectionId`: only the records that connection synced (the connection-scoped data paths). */
  recordsPage(companyId: string, dataType: string, generation: number, request: PageRequest, connectionId?: string): PagePlan;
  listRecords(companyId: string, dataType: string, generation: number, request: PageRequest): Page<RecordBytes>;
  /** Data sets synced before and with no pull open now: the ones a schedule may queue again. */
  /** Data sets last requested at or before `requestedBefore` (ISO), with no pull open now: the ones a schedule may queue again. */
  scheduleCandidates(requestedBefore: string): ScheduleCandidate[];
}

/** Pull operations (syncs) and their leases. */
export interface PullStore {
  getPull(id: string): PullRow | undefined;
  /** The pulls of these ids that exist, oldest first. */
  getPulls(ids: string[]): PullRow[];
  /** The queued or running pulls of a company, by data type. */
  openPulls(companyId: string): Map<string, PullRow>;
  /** The queued or running pull of this data set, if any: one at a time per (company, data type). */
  openPull(companyId: string, dataType: string): PullRow | undefined;
  insertPull(pull: NewPull & { generation: number }): PullRow;
  /**
   * Queues new pulls, in the order given: reserves each one's generation of its data set
   * (as reserveGeneration) and inserts it (as insertPull), all or none. A data set appears
   * at most once. A company's data sets cost one statement, not two each.
   */
  queuePulls(pulls: NewPull[]): PullRow[];
  /**
   * The company's open pulls by data type (as openPulls), and each of these pulls (of that
   * company, a data set at most once) queued (as queuePulls) unless its data set has one
   * open: POST data/all's look and its queuing in one statement on PostgreSQL. Call in a
   * transaction holding the company's lock.
   */
  queueUnlessOpen(companyId: string, pulls: NewPull[]): Map<string, PullRow>;
  /**
   * Takes one pull's lease if it is still free (false when another worker got there first);
   * a queued pull becomes Fetching in the same write. Workers claim jobs (claimJobs); this is
   * a takeover of one pull, as the lease tests make one.
   */
  leasePull(id: string, now: string, until: string): boolean;
  /**
   * Sets `fields`; true when the pull was updated. With `lease`, only while that is still
   * the pull's lease_until and the pull is open: a worker's hold on it (pulls.ts), so a
   * worker that lost the pull to another changes nothing.
   */
  updatePull(id: string, fields: PullFields, lease?: string): boolean;
  /**
   * updatePull of each change with `lease`, in one call (one statement on PostgreSQL):
   * answers the pulls as written, those whose lease was still `lease` (in no set order).
   * The others, taken over or ended, change nothing. A job's writes (sync/job-writes.ts).
   */
  updatePulls(changes: PullChange[], lease: string): PullRow[];
  /** The connection the latest pull of a company's data type used. */
  latestPullConnectionId(companyId: string, dataType: string): string | undefined;
}

/** Jobs: a company's pulls claimed, renewed and freed together (sync/job.ts), and the interactive lane (sync/lanes.ts). */
export interface JobStore {
  /**
   * Leases up to `limit` jobs, one company each, in one commit (none when there is nothing
   * to claim): the company of the first claimable pull (open, lease free at `now`, retry
   * time come), the interactive lane first, then the oldest; and every claimable pull of
   * it, until `until`, which is the job's lease. Queued pulls become Fetching. Workers
   * claiming at once each get other pulls.
   */
  claimJobs(now: string, until: string, limit: number): PullJob[];
  /** Moves the lease of those of `ids` still held by `lease` to `until`; answers the ids renewed (the others were lost or ended). */
  renewPullLeases(ids: string[], lease: string, until: string): string[];
  /** Frees the lease of those of `ids` still held by `lease`. */
  releasePullLeases(ids: string[], lease: string): void;
  /** The account's companies with an open pull in the interactive lane. Inside a transaction on PostgreSQL it takes turns per account. */
  interactiveCompanies(clientId: string): string[];
  /** Moves the company's open pulls into the interactive lane. */
  raisePullPriority(companyId: string): void;
}

/** Push operations. */
export interface PushStore {
  insertPush(row: Omit<PushRow, 'seq'>): PushRow;
  getPush(key: string): PushRow | undefined;
  pendingPushes(limit: number): PushRow[];
  /** Settles a pending push; false when it was no longer pending (another worker settled it first). */
  completePush(key: string, fields: Pick<PushRow, 'status' | 'status_code' | 'completed'> & Partial<Pick<PushRow, 'error_message' | 'validation' | 'changes'>>): boolean;
}

/** Files attached to synced records; deleting one, or its connection or company, frees its space. */
export interface AttachmentStore {
  /**
   * Stores an attachment with the bytes of `staged` (a file on the data dir's file system,
   * which the store moves or reads), unless the account's quota or the record's file limit
   * would be passed. Call inside a transaction: on PostgreSQL it locks the account's usage.
   */
  insertAttachment(row: AttachmentInput, staged: string, limits: AttachmentLimits): AttachmentInsert;
  /** Bytes of attachments the account holds. */
  attachmentBytesUsed(clientId: string): number;
  /** A record's attachments, oldest first, without their bytes. */
  listAttachments(record: RecordRef): AttachmentRow[];
  getAttachment(record: RecordRef, id: string): AttachmentRow | undefined;
  attachmentBody(id: string): AttachmentBody | undefined;
  /** False when the record had no such attachment. */
  deleteAttachment(record: RecordRef, id: string): boolean;
}

/** Supplemental data and custom data type configurations, per account and platform. */
export interface DataConfigStore {
  readDataConfig(kind: ConfigKind, clientId: string, platformKey: string, name: string): unknown;
  writeDataConfig(kind: ConfigKind, clientId: string, platformKey: string, name: string, config: unknown): void;
}

/** Reads and writes of many items at once, where a sync job would make one call per data type. */
export interface GroupedStore {
  /** Every configuration of a kind the account has for a platform, by data type (or custom identifier): a job's data types read them once. */
  readDataConfigs(kind: ConfigKind, clientId: string, platformKey: string): Map<string, unknown>;
}

/** Events, webhook consumers and the outbox of deliveries written with each event. */
export interface EventStore {
  /**
   * Records an event and a delivery per enabled consumer that wants it (events/wants.ts),
   * oldest consumer first, each delivery's id deliveryIdOf(event, consumer); returns the
   * event's seq. Call inside the change's transaction. On PostgreSQL the consumers read are
   * held (FOR KEY SHARE) until it ends, so none goes under deliveries that name it.
   */
  insertEvent(event: EventInput): number;
  /** insertEvent for each, in order, in one write; returns their seqs. */
  insertEvents(events: EventInput[]): number[];
  /** The account's events after its number `afterAccountSeq` (EventRow.account_seq), oldest first. */
  eventsAfter(clientId: string, afterAccountSeq: number, limit: number): EventRow[];
  /** The newest event's `seq` of all accounts: for the service's own "anything new?", never shown to a client. */
  latestEventSeq(): number;
  /** The last number the account gave an event (0 before its first); on PostgreSQL an event is numbered when its transaction commits. */
  latestAccountEventSeq(clientId: string): number;
  /**
   * undefined while the company has an open pull; else what read.completed reports: the
   * previous one's time and the pulls named by the data type events since it, in one read.
   * Inside a transaction on PostgreSQL it first locks the company, as openPulls does.
   */
  readCompletion(companyId: string, types: CompletionTypes): ReadCompletion | undefined;
  /** The company's events of one type after `afterSeq`, oldest first. */
  companyEventsAfter(companyId: string, eventType: string, afterSeq: number): EventRow[];
  insertConsumer(row: ConsumerRow): void;
  getConsumer(id: string): ConsumerRow | undefined;
  listConsumers(clientId: string): ConsumerRow[];
  deleteConsumer(id: string): void;
  disableConsumer(id: string, reason: string): void;
}

/** The webhook outbox as the delivery loop and the delivery log use it (webhook-deliveries.ts). */
export interface WebhookDeliveryStore {
  /** Leases up to `limit` due lane heads (one delivery at a time per consumer and company), accounts in turn; call inside a transaction. */
  claimDeliveries(request: ClaimRequest): ClaimResult;
  /** One attempt and its outcome; false when the delivery is gone. Call inside a transaction. */
  recordDeliveryAttempt(seq: number, attempt: Omit<AttemptRow, 'attempt'>, outcome: AttemptOutcome): boolean;
  releaseDeliveryLease(seq: number): void;
  /** Every lease, and every head parked for want of a slot: the loop that took them is gone (killed, or stopping). */
  releaseDeliveryLeases(): void;
  /** Heads parked for want of a slot, of consumers and accounts not among `inFlight`: the loop's safety net when idle. */
  unparkIdle(inFlight: InFlightIds): void;
  /** Disables the consumer (false if it already was) and holds its pending deliveries. */
  disableConsumerDeliveries(consumerId: string, reason: string): boolean;
  /** Whether claimDeliveries at `now` would find anything due (a read: no write lock). */
  deliveriesDue(now: string): boolean;
  /** The earliest retry time after `now`, if any. */
  nextDeliveryDue(now: string): string | undefined;
  webhookDeliveriesPage(consumerId: string, request: PageRequest): PagePlan;
  getDelivery(consumerId: string, deliveryId: string): DeliveryRow | undefined;
  deliveryAttempts(seq: number): AttemptRow[];
  replayDelivery(consumerId: string, deliveryId: string, newId: string, now: string): DeliveryRow | undefined;
  deliveryOfEvent(consumerId: string, eventSeq: number): DeliveryRow | undefined;
}

/** Sync settings per client and per company. */
export interface SyncSettingStore {
  readSettings(clientId: string, companyId?: string): SyncSetting[] | undefined;
  writeSettings(clientId: string, companyId: string, settings: SyncSetting[]): void;
}

/** A value that changes whenever the data changes (cache keys). */
export interface VersionStore {
  dataVersion(): string;
  /**
   * dataVersion(), and in the same read the API key with this hash and its account: a
   * request's version and authentication in one round trip on PostgreSQL.
   */
  versionAndKey(keyHash: string): KeyedVersion;
}

/** What the operator's probes and metrics ask of the database as a whole (monitoring.ts). */
export interface MonitoringStore {
  /** The migrations this build has that the database has not applied (names, oldest first): empty when its schema is current. */
  pendingMigrations(): string[];
  /** Open pulls per data type: queued (no live lease at `now`, including those waiting to retry) and running (leased). */
  pullBacklog(now: string): PullBacklogRow[];
  /** Webhook deliveries still to make to enabled consumers (due, retrying, or behind their lane's head). */
  pendingDeliveryCount(): number;
}
/** Page plans: what a list page reads, run on the request thread or in a reader thread. */
export interface PagePlanner {
  companiesPage(clientId: string, request: PageRequest, tag?: { key: string; value: string }): PagePlan;
  connectionsPage(companyId: string, request: PageRequest): PagePlan;
  pullsPage(companyId: string, request: PageRequest): PagePlan;
  pushesPage(companyId: string, request: PageRequest): PagePlan;
  runPage<Row>(plan: PagePlan): Page<Row>;
}

export interface Store
  extends ClientStore, CompanyStore, ConnectionStore, DatasetStore, PullStore, JobStore, PushStore, AttachmentStore, DataConfigStore, GroupedStore, EventStore, WebhookDeliveryStore, SyncSettingStore, VersionStore, MonitoringStore,
    PagePlanner {
  /** Runs `work` as one transaction that takes the write lock before it reads. */
  transaction<T>(work: () => T): T;
  close(): void;
}

/**
 * A new company as both stores write it, its columns' defaults spelled out, so that what
 * goes with it (its company.created event, written in the same statement on PostgreSQL)
 * can be made before it is stored.
 */
export function newCompanyRow(id: string, clientId: string, input: CompanyInput, created: string): NewCompanyRow {
  return {
    id, client_id: clientId, name: input.name, description: input.description ?? null, created,
    created_by_user_name: null, last_sync: null, tags: JSON.stringify(input.tags), products: '[]', ref_subsidiaries: '[]',
  };
}
