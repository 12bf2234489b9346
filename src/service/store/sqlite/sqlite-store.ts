// The SQLite store: every method of the Store interface bound to one database handle.
import type { Statement } from 'better-sqlite3';
import { settleFiles } from './attachment-files.js';
import type { Db } from './db.js';
import * as attachments from './attachments.js';
import * as clients from './clients.js';
import * as companies from './companies.js';
import * as connections from './connections.js';
import * as dataConfigs from './data-configs.js';
import * as datasets from './datasets.js';
import * as events from './events.js';
import { runPagePlan } from './paging.js';
import * as pulls from './pulls.js';
import * as pushes from './pushes.js';
import type { Store } from '../store.js';
import * as syncSettings from './sync-settings.js';
import * as version from './version.js';
import * as deliveries from './webhook-deliveries.js';

export function createSqliteStore(db: Db): Store {
  const transaction = immediateTransactions(db);
  return {
    insertClient: (client) => clients.insertClient(db, client),
    getClient: (id) => clients.getClient(db, id),
    listClients: (request) => clients.listClients(db, request),
    insertApiKey: (clientId, created, name) => clients.insertApiKey(db, clientId, created, name),
    setProfile: (clientId, profile) => clients.setProfile(db, clientId, profile),
    findApiKeyByHash: (keyHash) => clients.findApiKeyByHash(db, keyHash),
    getApiKey: (clientId, keyId) => clients.getApiKey(db, clientId, keyId),
    liveApiKeyIds: (keyIds) => clients.liveApiKeyIds(db, keyIds),
    revokeApiKey: (keyId, revoked) => clients.revokeApiKey(db, keyId, revoked),
    findAdminClient: () => clients.findAdminClient(db),
    listApiKeys: (clientId, request) => clients.listApiKeys(db, clientId, request),
    insertCompany: (clientId, input, created) => companies.insertCompany(db, clientId, input, created),
    getCompany: (id) => companies.getCompany(db, id),
    countCompanies: (clientId) => companies.countCompanies(db, clientId),
    replaceCompany: (id, input) => companies.replaceCompany(db, id, input),
    deleteCompany: (id) => companies.deleteCompany(db, id),
    setCompanyProducts: (id, products) => companies.setCompanyProducts(db, id, products),
    insertConnection: (companyId, integrationKey, sourceId, created) => connections.insertConnection(db, companyId, integrationKey, sourceId, created),
    getConnection: (companyId, id) => connections.getConnection(db, companyId, id),
    listConnections: (companyId, request) => connections.listConnections(db, companyId, request),
    connectionsByCompany: (companyIds) => connections.connectionsByCompany(db, companyIds),
    setConnectionStatus: (id, status) => connections.setConnectionStatus(db, id, status),
    deleteConnection: (id) => connections.deleteConnection(db, id),
    storeTokens: (connectionId, sealed, updated) => connections.storeTokens(db, connectionId, sealed, updated),
    loadSealedTokens: (connectionId) => connections.loadSealedTokens(db, connectionId),
    getConnectionById: (id) => connections.getConnectionById(db, id),
    getPullConnection: (id) => connections.getPullConnection(db, id),
    deauthorize: (id, error) => connections.deauthorize(db, id, error),
    setLastSync: (connectionId, companyId, when) => connections.setLastSync(db, connectionId, companyId, when),
    takeRefreshLease: (id, now, until) => connections.takeRefreshLease(db, id, now, until),
    renewRefreshLease: (id, held, until) => connections.renewRefreshLease(db, id, held, until),
    releaseRefreshLease: (id, held) => connections.releaseRefreshLease(db, id, held),
    markLinked: (id, connectionInfo) => connections.markLinked(db, id, connectionInfo),
    getDataset: (companyId, dataType) => datasets.getDataset(db, companyId, dataType),
    listDatasets: (companyId) => datasets.listDatasets(db, companyId),
    reserveGeneration: (companyId, dataType, syncId, requested) => datasets.reserveGeneration(db, companyId, dataType, syncId, requested),
    publishGeneration: (companyId, dataType, generation, syncId, completed) => datasets.publishGeneration(db, companyId, dataType, generation, syncId, completed),
    completeGeneration: (companyId, dataType, generation, syncId, connectionId, completed) => {
      const replaced = datasets.publishGeneration(db, companyId, dataType, generation, syncId, completed);
      connections.setLastSync(db, connectionId, companyId, completed);
      return replaced;
    },
    upsertRecords: (companyId, dataType, generation, connectionId, records) => datasets.upsertRecords(db, companyId, dataType, generation, connectionId, records),
    pruneGenerations: (companyId, dataType, keep, limit) => datasets.pruneGenerations(db, companyId, dataType, keep, limit),
    countRecords: (companyId, dataType, generation) => datasets.countRecords(db, companyId, dataType, generation),
    getRecord: (companyId, dataType, generation, id, connectionId) => datasets.getRecord(db, companyId, dataType, generation, id, connectionId),
    recordFields: (dataType) => datasets.recordFields(db, dataType),
    rememberFields: (dataType, fields) => datasets.rememberFields(db, dataType, fields),
    recordsPage: (companyId, dataType, generation, request, connectionId) => datasets.recordsPage(db, companyId, dataType, generation, request, connectionId),
    listRecords: (companyId, dataType, generation, request) => datasets.listRecords(db, companyId, dataType, generation, request),
    scheduleCandidates: () => datasets.scheduleCandidates(db),
    getPull: (id) => pulls.getPull(db, id),
    getPulls: (ids) => pulls.getPulls(db, ids),
    openPulls: (companyId) => pulls.openPulls(db, companyId),
    openPull: (companyId, dataType) => pulls.openPull(db, companyId, dataType),
    insertPull: (pull) => pulls.insertPull(db, pull),
    queuePulls: (list) => pulls.queuePulls(db, list),
    claimPulls: (now, until, limit) => pulls.claimPulls(db, now, until, limit),
    leasePull: (id, now, until) => pulls.leasePull(db, id, now, until),
    updatePull: (id, fields, lease) => pulls.updatePull(db, id, fields, lease),
    updatePullReturning: (id, fields, lease) => pulls.updatePullReturning(db, id, fields, lease),
    releaseOpenPullLeases: () => pulls.releaseOpenPullLeases(db),
    latestPullConnectionId: (companyId, dataType) => pulls.latestPullConnectionId(db, companyId, dataType),
    insertPush: (row) => pushes.insertPush(db, row),
    getPush: (key) => pushes.getPush(db, key),
    pendingPushes: (limit) => pushes.pendingPushes(db, limit),
    completePush: (key, fields) => pushes.completePush(db, key, fields),
    insertAttachment: (row, staged, limits) => attachments.insertAttachment(db, row, staged, limits),
    attachmentBytesUsed: (clientId) => attachments.attachmentBytesUsed(db, clientId),
    listAttachments: (record) => attachments.listAttachments(db, record),
    getAttachment: (record, id) => attachments.getAttachment(db, record, id),
    attachmentBody: (id) => attachments.attachmentBody(db, id),
    deleteAttachment: (record, id) => attachments.deleteAttachment(db, record, id),
    readDataConfig: (kind, clientId, platformKey, name) => dataConfigs.readDataConfig(db, kind, clientId, platformKey, name),
    writeDataConfig: (kind, clientId, platformKey, name, config) => dataConfigs.writeDataConfig(db, kind, clientId, platformKey, name, config),
    insertEvent: (event, deliveryId) => events.insertEvent(db, event, deliveryId),
    eventsAfter: (clientId, afterSeq, limit) => events.eventsAfter(db, clientId, afterSeq, limit),
    latestEventSeq: () => events.latestEventSeq(db),
    latestAccountEventSeq: (clientId) => events.latestAccountEventSeq(db, clientId),
    lastCompanyEvent: (companyId, eventType) => events.lastCompanyEvent(db, companyId, eventType),
    companyEventsAfter: (companyId, eventType, afterSeq) => events.companyEventsAfter(db, companyId, eventType, afterSeq),
    insertConsumer: (row) => events.insertConsumer(db, row),
    getConsumer: (id) => events.getConsumer(db, id),
    listConsumers: (clientId) => events.listConsumers(db, clientId),
    deleteConsumer: (id) => events.deleteConsumer(db, id),
    disableConsumer: (id, reason) => events.disableConsumer(db, id, reason),
    claimDeliveries: (request) => deliveries.claimDeliveries(db, request),
    recordDeliveryAttempt: (seq, attempt, outcome) => deliveries.recordDeliveryAttempt(db, seq, attempt, outcome),
    releaseDeliveryLease: (seq) => deliveries.releaseDeliveryLease(db, seq),
    releaseDeliveryLeases: () => deliveries.releaseDeliveryLeases(db),
    unparkIdle: (inFlight) => deliveries.unparkIdle(db, inFlight),
    disableConsumerDeliveries: (consumerId, reason) => deliveries.disableConsumerDeliveries(db, consumerId, reason),
    deliveriesDue: (now) => deliveries.deliveriesDue(db, now),
    nextDeliveryDue: (now) => deliveries.nextDeliveryDue(db, now),
    webhookDeliveriesPage: deliveries.webhookDeliveriesPage,
    getDelivery: (consumerId, deliveryId) => deliveries.getDelivery(db, consumerId, deliveryId),
    deliveryAttempts: (seq) => deliveries.deliveryAttempts(db, seq),
    replayDelivery: (consumerId, deliveryId, newId, now) => deliveries.replayDelivery(db, consumerId, deliveryId, newId, now),
    deliveryOfEvent: (consumerId, eventSeq) => deliveries.deliveryOfEvent(db, consumerId, eventSeq),
    readSettings: (clientId, companyId) => syncSettings.readSettings(db, clientId, companyId),
    writeSettings: (clientId, companyId, settings) => syncSettings.writeSettings(db, clientId, companyId, settings),
    dataVersion: () => version.dataVersion(db),
    versionAndKey: (keyHash) => version.versionAndKey(db, keyHash),
    companiesPage: companies.companiesPage,
    connectionsPage: connections.connectionsPage,
    pullsPage: pulls.pullsPage,
    pushesPage: pushes.pushesPage,
    runPage: (plan) => runPagePlan(db, plan),
    transaction,
    close: () => {
      if (db.open) db.close();
    },
  };
}

/**
 * BEGIN IMMEDIATE … COMMIT around `work`, with the three statements prepared once (on first
 * use: a read-only handle never needs them). better-sqlite3's db.transaction(work) builds
 * four wrapper functions on every call, and every request and every pull writes in one.
 * A transaction inside another is a savepoint, as db.transaction makes it. Once it has
 * ended, attachment files follow their rows (attachment-files.ts).
 */
function immediateTransactions(db: Db): <T>(work: () => T) => T {
  let statements: { begin: Statement; commit: Statement; rollback: Statement } | undefined;
  return <T>(work: () => T): T => {
    if (db.inTransaction) return db.transaction(work)();
    statements ??= { begin: db.prepare('BEGIN IMMEDIATE'), commit: db.prepare('COMMIT'), rollback: db.prepare('ROLLBACK') };
    statements.begin.run();
    try {
      const result = work();
      if (result instanceof Promise) throw new TypeError('Transaction function cannot return a promise');
      statements.commit.run();
      return result;
    } catch (err) {
      if (db.inTransaction) statements.rollback.run();
      throw err;
    } finally {
      settleFiles(db);
    }
  };
}
