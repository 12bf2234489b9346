// POST /platforms/:key/oauth/token: the refresh_token grant of RFC 6749 §6, form-encoded
// or JSON. Client credentials are optional (Basic auth or client_id/client_secret); when
// given they must be the platform's registered app, and a grant issued to one app
// cannot be refreshed by another. Each refresh rotates the refresh token.
import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { SandboxContext } from '../context.js';
import { fail } from '../errors.js';
import { hashToken } from '../tokens.js';
import { platformOf } from './guard.js';

function clientCredentials(request: FastifyRequest, form: Record<string, unknown>): { id?: string; secret?: string } {
  const basic = /^Basic\s+(\S+)$/i.exec(request.headers.authorization ?? '');
  if (basic?.[1]) {
    const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    return colon < 0 ? { id: decoded } : { id: decoded.slice(0, colon), secret: decoded.slice(colon + 1) };
  }
  const text = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
  return { id: text(form.client_id), secret: text(form.client_secret) };
}

const sameHash = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

export function registerOAuthRoutes(app: FastifyInstance, ctx: SandboxContext): void {
  app.post<{ Params: { key: string } }>('/platforms/:key/oauth/token', async (request, reply) => {
    const platform = platformOf(request.params.key);
    const key = platform.integration.key;
    const form = request.body !== null && typeof request.body === 'object' ? (request.body as Record<string, unknown>) : {};
    if (!platform.roles.refresh) throw fail.oauth(400, 'unsupported_grant_type', `${platform.integration.name} does not issue refresh tokens.`);
    if (form.grant_type !== 'refresh_token') throw fail.oauth(400, 'unsupported_grant_type', 'Only grant_type=refresh_token is supported.');
    if (typeof form.refresh_token !== 'string' || form.refresh_token === '') throw fail.oauth(400, 'invalid_request', 'refresh_token is required.');
    const client = clientCredentials(request, form);
    if (client.id !== undefined) {
      const registered = ctx.store.getApp(client.id);
      const secretOk = client.secret === undefined || (registered !== undefined && sameHash(hashToken(client.secret), registered.secretHash));
      if (!registered || registered.platform !== key || !secretOk) throw fail.oauth(401, 'invalid_client', 'Client authentication failed.');
    }
    const result = ctx.tokens.refresh(key, form.refresh_token, client.id);
    if (!result.ok) throw fail.oauth(400, 'invalid_grant', result.message);
    const now = ctx.clock.now().getTime();
    const { issued } = result;
    const seconds = (at: Date | null) => Math.max(0, Math.round(((at?.getTime() ?? now) - now) / 1000));
    reply.header('Cache-Control', 'no-store');
    return {
      access_token: issued.access,
      token_type: 'Bearer',
      expires_in: seconds(issued.accessExpiresAt),
      refresh_token: issued.refresh,
      // Intuit's name for the refresh token's lifetime; harmless elsewhere.
      x_refresh_token_expires_in: seconds(issued.refreshExpiresAt),
    };
  });
}
