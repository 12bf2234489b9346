// A connection's tokens, as the token migration takes them: on PUT …/authorization, and in
// `connectionInfo` when the connection is created (the public API's earlier self-service
// route, which its migration guide once gave clients). Both go through the same steps: the
// managed-only check, the integration's token fields, the platform's verification, then the
// tokens sealed and the connection Linked in the caller's transaction.
import type { FastifyRequest } from 'fastify';
import { tokenFieldProblems } from '../../platforms/token-fields.js';
import type { Integration } from '../../platforms/types.js';
import type { Tokens, VerifyResult } from '../adapters/verifier.js';
import type { ServiceContext } from '../context.js';
import { errors } from '../errors.js';
import { failIfAny } from '../http/body.js';
import type { AsyncStore } from '../store/async-store.js';
import type { ConnectionRow } from '../store/connections.js';
import { sealTokens } from '../tokens.js';

/**
 * The tokens checked and verified with the platform (outside any transaction: it is a
 * network call). 403 for a managed-only integration and a non-admin key, before the payload
 * is looked at; 400 naming each field that breaks the integration's token fields (prefixed
 * with `at`, `connectionInfo.` on a creation).
 */
export async function verifyTokens(ctx: ServiceContext, request: FastifyRequest, integration: Integration, payload: Record<string, unknown>, at = ''): Promise<VerifyResult> {
  if (integration.migrationRoute === 'managed' && !request.auth.caller.is_admin) throw errors.managedOnly(integration.name);
  const problems = tokenFieldProblems(integration.tokenFields, integration.name, payload);
  const items = problems.map(({ field, message }) => ({ itemId: `${at}${field}`, message, validatorName: 'TokenSchema' }));
  failIfAny(items, (validation) => errors.tokensNotInSchema(integration.name, validation));
  // Empty optional fields are dropped.
  const tokens = Object.fromEntries(Object.entries(payload).filter(([, v]) => typeof v === 'string' && v !== '')) as Tokens;
  return ctx.verifier.verify(integration, tokens);
}

/** Seals the verified tokens and marks the connection Linked, in the caller's transaction; the row as written. */
export async function linkWithTokens(tx: AsyncStore, ctx: ServiceContext, connectionId: string, verdict: Extract<VerifyResult, { ok: true }>, now: string): Promise<ConnectionRow> {
  // markLinked stores the tokens with the link (one statement on PostgreSQL) and returns the
  // row it wrote: the caller found the connection under its company's lock.
  return (await tx.markLinked(connectionId, verdict.connectionInfo, { sealed: sealTokens(ctx.sealer, connectionId, verdict.tokens), updated: now }))!;
}
