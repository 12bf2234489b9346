// /companies/{companyId}/connections: create (with the tokens in connectionInfo, the public
// API's earlier self-service migration), list, get, unlink, delete, and token migration
// through PUT .../authorization (connection-tokens.ts holds the steps both share).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { randomUUID } from 'node:crypto';
import { isoSeconds } from '../../lib/clock.js';
import type { ServiceContext } from '../context.js';
import { errors } from '../errors.js';
import { connectionPayload } from '../events/payloads.js';
import { eventsOf, recordEvent } from '../events/record.js';
import type { VerifyResult } from '../adapters/verifier.js';
import { baseUrlOf, objectBody, params, queryOf } from '../http/body.js';
import { refuseUnknownFields } from '../http/known-fields.js';
import { envelope, parsePageRequest } from '../http/paging.js';
import { connectionRecord } from '../wire/records.js';
import { defineRoute, withBody } from '../http/route.js';
import { integrationByKey } from '../../platforms/registry.js';
import type { Integration } from '../../platforms/types.js';
import type { CompanyRow } from '../store/companies.js';
import type { ConnectionRow } from '../store/connections.js';
import { assertOwns } from '../http/auth.js';
import { ownedCompany } from './companies.js';
import { linkWithTokens, verifyTokens } from './connection-tokens.js';

export async function ownedConnection(ctx: ServiceContext, request: FastifyRequest): Promise<ConnectionRow> {
  return (await ownedCompanyConnection(ctx, request)).connection;
}

/** The caller's connection and its company: 404 for an unknown one, 403 for another client's. */
export async function ownedCompanyConnection(ctx: ServiceContext, request: FastifyRequest): Promise<{ company: CompanyRow; connection: ConnectionRow }> {
  const { companyId = '', connectionId = '' } = params(request);
  // One read for both (in a transaction, it locks the company as getCompany does).
  const found = await ctx.store.getCompanyConnection(companyId, connectionId);
  if (!found) throw errors.companyNotFound(companyId);
  assertOwns(request.auth, found.company.client_id);
  if (!found.connection) throw errors.connectionNotFound(companyId, connectionId);
  return { company: found.company, connection: found.connection };
}

function integrationOf(connection: ConnectionRow): Integration {
  const integration = integrationByKey(connection.integration_key);
  if (!integration) throw errors.integrationNotFound(connection.integration_key);
  return integration;
}

export function registerConnectionRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  const { store } = ctx;

  defineRoute(app, '/companies/:companyId/connections', {
    GET: async (request) => {
      const company = await ownedCompany(ctx, request);
      const page = parsePageRequest(queryOf(request));
      const { rows, total } = await ctx.reads.page<ConnectionRow>(request.auth.client.id, ctx.store.connectionsPage(company.id, page));
      const base = baseUrlOf(request);
      return envelope(rows.map((row) => connectionRecord(row, base)), total, page, request.url);
    },
    POST: withBody(async (request) => createConnection(ctx, request)),
  });

  defineRoute(app, '/companies/:companyId/connections/:connectionId', {
    GET: async (request) => connectionRecord(await ownedConnection(ctx, request), baseUrlOf(request)),
    // Check and change in one transaction: of two concurrent unlinks or deletes, one finds nothing left to do.
    PATCH: withBody(async (request) => store.transaction(async (tx) => {
      const { company, connection } = await ownedCompanyConnection(ctx, request);
      const body = objectBody(request);
      refuseUnknownFields(body, ['status']);
      const { status } = body;
      if (status !== 'Unlinked') {
        throw errors.onlyUnlinkedSettable();
      }
      if (connection.status !== 'Linked') {
        throw errors.unlinkNotLinked(connection.status);
      }
      await tx.setConnectionStatus(connection.id, 'Unlinked');
      await recordConnectionEvent(ctx, request, company, { ...connection, status: 'Unlinked' }, 'connection.disconnected');
      return connectionRecord({ ...connection, status: 'Unlinked' }, baseUrlOf(request));
    })),
    DELETE: async (request, reply) => {
      await store.transaction(async (tx) => {
        const { company, connection } = await ownedCompanyConnection(ctx, request);
        await tx.deleteConnection(connection.id);
        await recordConnectionEvent(ctx, request, company, connection, 'connection.deleted');
      });
      return reply.code(200).send();
    },
  });

  defineRoute(app, '/companies/:companyId/connections/:connectionId/authorization', {
    PUT: withBody(async (request) => authorize(ctx, request)),
  });
}

/** Records a connection event in the caller's transaction. */
async function recordConnectionEvent(ctx: ServiceContext, request: FastifyRequest, company: CompanyRow, connection: ConnectionRow, eventType: string): Promise<void> {
  await recordEvent(eventsOf(ctx), { clientId: company.client_id, company, eventType, payload: connectionPayload(company, connection, baseUrlOf(request)) });
}

/**
 * POST …/connections: a PendingAuth connection; with tokens in `connectionInfo`, a Linked
 * one, the tokens taken as PUT …/authorization takes them. Tokens the checks or the platform
 * refuse leave no connection behind (nothing is written before they pass), and the
 * connection, its tokens and its events are one transaction.
 */
async function createConnection(ctx: ServiceContext, request: FastifyRequest) {
  const { store, clock } = ctx;
  const body = objectBody(request);
  refuseUnknownFields(body, ['platformKey', 'connectionInfo']);
  const { connectionInfo } = body;
  const withTokens = connectionInfo !== undefined && connectionInfo !== null;
  let verdict: VerifyResult | undefined;
  if (withTokens) {
    // The platform is asked outside the transaction: the company is checked first, so a client never has its tokens verified for another's company.
    await ownedCompany(ctx, request);
    const integration = integrationNamed(body.platformKey);
    if (typeof connectionInfo !== 'object' || Array.isArray(connectionInfo)) throw errors.connectionInfoNotObject();
    verdict = await verifyTokens(ctx, request, integration, connectionInfo as Record<string, unknown>, 'connectionInfo.');
    if (!verdict.ok) throw errors.tokensRejected(integration.name, verdict.message);
  }
  // The company is looked up (again) in the transaction that adds its connection, so it cannot go in between.
  const row = await store.transaction(async (tx) => {
    const company = await ownedCompany(ctx, request);
    const integration = integrationNamed(body.platformKey);
    const now = isoSeconds(clock.now());
    const created = await tx.insertConnection(company.id, integration.key, randomUUID(), now);
    await recordConnectionEvent(ctx, request, company, created, 'connection.created');
    if (!verdict?.ok) return created;
    const linked = await linkWithTokens(tx, ctx, created.id, verdict, now);
    await recordConnectionEvent(ctx, request, company, linked, 'connection.connected');
    return linked;
  });
  return connectionRecord(row, baseUrlOf(request));
}

/** The integration a create names: 400 for none or an unknown one. */
function integrationNamed(platformKey: unknown): Integration {
  if (typeof platformKey !== 'string' || platformKey.trim() === '') throw errors.platformKeyRequired();
  const integration = integrationByKey(platformKey.trim().toLowerCase());
  if (!integration) throw errors.unknownPlatformKey(platformKey);
  return integration;
}

/**
 * PUT …/authorization, the token migration: the tokens checked against the platform's
 * schema, then verified (with the platform, when there is one), then stored and the
 * connection Linked.
 */
async function authorize(ctx: ServiceContext, request: FastifyRequest) {
  const { store, clock } = ctx;
  const { company: owner, connection } = await ownedCompanyConnection(ctx, request);
  const integration = integrationOf(connection);
  const verdict = await verifyTokens(ctx, request, integration, objectBody(request));
  if (!verdict.ok) {
    await store.transaction(async () => recordConnectionEvent(ctx, request, owner, connection, 'connection.failed'));
    throw errors.tokensRejected(integration.name, verdict.message);
  }
  const now = isoSeconds(clock.now());
  const linked = await store.transaction(async (tx) => {
    // The company and the connection as they are now, in one read that locks the company
    // on PostgreSQL (as every transaction writing both does): of two authorizations at once,
    // the second reconnects; one deleted meanwhile is not found.
    const found = await tx.getCompanyConnection(connection.company_id, connection.id);
    if (!found?.connection) throw errors.connectionNotFound(connection.company_id, connection.id);
    const { company, connection: before } = found;
    const row = await linkWithTokens(tx, ctx, connection.id, verdict, now);
    // Linked for the first time, or again after it was unlinked or deauthorized.
    await recordConnectionEvent(ctx, request, company, row, before.status === 'PendingAuth' ? 'connection.connected' : 'connection.reconnected');
    return row;
  });
  return connectionRecord(linked, baseUrlOf(request));
}
