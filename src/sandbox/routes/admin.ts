// /admin: the test and support surface, on the same server and without auth (a sandbox
// has nothing to protect). OAuth apps and their callback URLs (added and removed), tenants with fresh token
// field values, tokens minted in a chosen state, the legacy application's refreshes,
// and the runtime settings.
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isoSeconds } from '../../lib/clock.js';
import { integrationByKey } from '../../platforms/registry.js';
import type { Integration } from '../../platforms/types.js';
import { applySettings, type SandboxContext } from '../context.js';
import { fail, type FieldError } from '../errors.js';
import { parseSettings } from '../settings.js';
import type { AppRow, TenantRow } from '../store.js';
import { createTenants, issueTokenFields, legacyRefresh, tenantView } from '../tenants.js';
import { hashToken, type TokenState } from '../tokens.js';

/** Enough for the paging benchmarks (a million invoices) with room to spare; nothing is stored per invoice. */
export const MAX_INVOICES = 10_000_000;
const MAX_TENANTS_PER_CALL = 1000;
const DEFAULT_INVOICES = 100;
const TOKEN_STATES: readonly TokenState[] = ['valid', 'expired', 'revoked'];

type Json = Record<string, unknown>;

/** Reads a JSON object body field by field, collecting every problem before answering 400. */
class Input {
  readonly errors: FieldError[] = [];
  private readonly body: Json;

  constructor(request: FastifyRequest) {
    const body = request.body ?? {};
    if (typeof body !== 'object' || Array.isArray(body)) throw fail.badRequest('The request body must be a JSON object.');
    this.body = body as Json;
  }

  text(name: string, required = false): string | undefined {
    const value = this.body[name];
    if (value === undefined && !required) return undefined;
    if (typeof value !== 'string' || value.trim() === '') {
      this.errors.push({ field: name, message: `${name} must be a non-empty string.` });
      return undefined;
    }
    return value.trim();
  }

  integer(name: string, min: number, max: number): number | undefined {
    const value = this.body[name];
    if (value === undefined) return undefined;
    if (!Number.isInteger(value) || (value as number) < min || (value as number) > max) {
      this.errors.push({ field: name, message: `${name} must be an integer from ${min} to ${max}.` });
      return undefined;
    }
    return value as number;
  }

  list(name: string): unknown[] {
    const value = this.body[name] ?? [];
    if (Array.isArray(value)) return value;
    this.errors.push({ field: name, message: `${name} must be an array.` });
    return [];
  }

  raw(): Json {
    return this.body;
  }

  done(): void {
    if (this.errors.length > 0) throw fail.badRequest('The request is not valid.', this.errors);
  }
}

/** An absolute http(s) URL, normalised so equal URLs compare equal; undefined otherwise. */
function normalisedUrl(value: unknown): string | undefined {
  try {
    const url = new URL(String(value));
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.href : undefined;
  } catch {
    return undefined;
  }
}

function callbackUrl(value: unknown, field: string, errors: FieldError[]): string {
  const url = normalisedUrl(value);
  if (url === undefined) errors.push({ field, message: `${String(value)} is not an absolute http(s) URL.` });
  return url ?? '';
}

function platformNamed(key: string | undefined, errors: FieldError[]): Integration | undefined {
  if (key === undefined) return undefined;
  const integration = integrationByKey(key);
  if (!integration) errors.push({ field: 'platform', message: `${key} is not a platform key of the registry.` });
  return integration;
}

export function registerAdminRoutes(app: FastifyInstance, ctx: SandboxContext): void {
  registerAppRoutes(app, ctx);
  registerTenantRoutes(app, ctx);

  app.get('/admin/settings', async () => ctx.settings);

  app.patch('/admin/settings', async (request) => {
    applySettings(ctx, parseSettings(new Input(request).raw()));
    return ctx.settings;
  });
}

type Store = SandboxContext['store'];

const appView = (store: Store, row: AppRow): Json => ({
  clientId: row.clientId, platform: row.platform, name: row.name, callbackUrls: store.listCallbacks(row.clientId), created: isoSeconds(new Date(row.created)),
});

function appOf(store: Store, clientId: string): AppRow {
  const row = store.getApp(clientId);
  if (!row) throw fail.notFound(`No app ${clientId}.`);
  return row;
}

function tenantOf(store: Store, tenantId: string): TenantRow {
  const row = store.getTenant(tenantId);
  if (!row) throw fail.notFound(`No tenant ${tenantId}.`);
  return row;
}

/** A clientId given when issuing tokens binds the grant to that app, which must be the platform's. */
function boundClient(store: Store, clientId: string | undefined, platform: string, errors: FieldError[]): string | null {
  if (clientId === undefined) return null;
  if (store.getApp(clientId)?.platform !== platform) errors.push({ field: 'clientId', message: `${clientId} is not an app of platform ${platform}.` });
  return clientId;
}

/** OAuth apps: created with a secret shown once, listed, and their callback URLs added, asked about and removed. */
function registerAppRoutes(app: FastifyInstance, ctx: SandboxContext): void {
  const { store, clock } = ctx;

  app.post('/admin/apps', async (request, reply) => {
    const input = new Input(request);
    const integration = platformNamed(input.text('platform', true), input.errors);
    const name = input.text('name') ?? 'Sandbox app';
    const urls = input.list('callbackUrls').map((u) => callbackUrl(u, 'callbackUrls', input.errors));
    input.done();
    const platform = (integration as Integration).key;
    const clientId = randomBytes(16).toString('hex').toUpperCase();
    const clientSecret = randomBytes(32).toString('base64url');
    const now = clock.now().getTime();
    store.transaction(() => {
      store.insertApp({ clientId, platform, name, secretHash: hashToken(clientSecret), created: now });
      for (const url of urls) store.addCallback(clientId, url, now);
    });
    // The secret is shown once, here.
    return reply.code(201).send({ ...appView(store, appOf(store, clientId)), clientSecret });
  });

  app.get<{ Querystring: { platform?: string } }>('/admin/apps', async (request) => ({
    results: store.listApps(request.query.platform).map((row) => appView(store, row)),
  }));

  // ?callbackUrl= answers whether that exact URL is registered (the managed migration's step 3).
  app.get<{ Params: { clientId: string }; Querystring: { callbackUrl?: string } }>('/admin/apps/:clientId', async (request) => {
    const view = appView(store, appOf(store, request.params.clientId));
    const asked = request.query.callbackUrl;
    if (asked === undefined) return view;
    const normalised = normalisedUrl(asked);
    return { ...view, callbackUrlRegistered: normalised !== undefined && (view.callbackUrls as string[]).includes(normalised) };
  });

  app.get<{ Params: { clientId: string } }>('/admin/apps/:clientId/callbackUrls', async (request) => ({
    results: store.listCallbacks(appOf(store, request.params.clientId).clientId),
  }));

  app.post<{ Params: { clientId: string } }>('/admin/apps/:clientId/callbackUrls', async (request, reply) => {
    const row = appOf(store, request.params.clientId);
    const input = new Input(request);
    const text = input.text('url', true);
    const url = text === undefined ? '' : callbackUrl(text, 'url', input.errors);
    input.done();
    store.addCallback(row.clientId, url, clock.now().getTime());
    return reply.code(201).send({ clientId: row.clientId, callbackUrls: store.listCallbacks(row.clientId) });
  });

  // The URL goes in the query (?url=), as DELETE bodies are dropped by some clients and proxies.
  app.delete<{ Params: { clientId: string }; Querystring: { url?: string } }>('/admin/apps/:clientId/callbackUrls', async (request) => {
    const row = appOf(store, request.params.clientId);
    const asked = request.query.url;
    if (asked === undefined || asked.trim() === '') throw fail.badRequest('The request is not valid.', [{ field: 'url', message: 'url (a query parameter) is required.' }]);
    const errors: FieldError[] = [];
    const url = callbackUrl(asked.trim(), 'url', errors);
    if (errors.length > 0) throw fail.badRequest('The request is not valid.', errors);
    if (!store.removeCallback(row.clientId, url)) throw fail.notFound(`App ${row.clientId} has no callback URL ${url}.`);
    return { clientId: row.clientId, callbackUrls: store.listCallbacks(row.clientId) };
  });
}

/** Tenants with fresh token field values, tokens minted in a chosen state, and the legacy application's refreshes. */
function registerTenantRoutes(app: FastifyInstance, ctx: SandboxContext): void {
  const { store } = ctx;

  app.post('/admin/tenants', async (request, reply) => {
    const input = new Input(request);
    const integration = platformNamed(input.text('platform', true), input.errors);
    const count = input.integer('count', 1, MAX_TENANTS_PER_CALL) ?? 1;
    const invoices = input.integer('invoices', 0, MAX_INVOICES) ?? DEFAULT_INVOICES;
    const seed = input.integer('seed', 0, 2 ** 32 - 1);
    const clientId = boundClient(store, input.text('clientId'), integration?.key ?? '', input.errors);
    input.done();
    const issued = createTenants(ctx, { integration: integration as Integration, count, invoices, seed, clientId });
    return reply.code(201).send({ results: issued.map(({ tenant, tokens }) => ({ ...tenantView(tenant), tokens })) });
  });

  app.get<{ Querystring: { platform?: string } }>('/admin/tenants', async (request) => ({
    results: store.listTenants(request.query.platform).map(tenantView),
  }));

  app.get<{ Params: { tenantId: string } }>('/admin/tenants/:tenantId', async (request) => tenantView(tenantOf(store, request.params.tenantId)));

  app.post<{ Params: { tenantId: string } }>('/admin/tenants/:tenantId/tokens', async (request, reply) => {
    const tenant = tenantOf(store, request.params.tenantId);
    const input = new Input(request);
    const state = (input.text('state') ?? 'valid') as TokenState;
    if (!TOKEN_STATES.includes(state)) input.errors.push({ field: 'state', message: `state must be one of ${TOKEN_STATES.join(', ')}.` });
    const clientId = boundClient(store, input.text('clientId'), tenant.platform, input.errors);
    input.done();
    const integration = integrationByKey(tenant.platform) as Integration;
    const tokens = issueTokenFields(ctx, integration, tenant, state, clientId);
    return reply.code(201).send({ tenantId: tenant.id, state, tokens });
  });

  app.post<{ Params: { tenantId: string } }>('/admin/tenants/:tenantId/legacy-refresh', async (request) => {
    const tenant = tenantOf(store, request.params.tenantId);
    return { tenantId: tenant.id, ...legacyRefresh(ctx, tenant) };
  });

  app.get<{ Params: { tenantId: string }; Querystring: { since?: string } }>('/admin/tenants/:tenantId/legacy-refreshes', async (request) => {
    const tenant = tenantOf(store, request.params.tenantId);
    const since = request.query.since === undefined ? 0 : Date.parse(request.query.since);
    if (Number.isNaN(since)) throw fail.badRequest('since must be an ISO 8601 date-time.', [{ field: 'since', message: 'not a date' }]);
    return {
      tenantId: tenant.id,
      results: store.listLegacyRefreshes(tenant.id, since).map((e) => ({ at: isoSeconds(new Date(e.at)), outcome: e.outcome })),
    };
  });
}
