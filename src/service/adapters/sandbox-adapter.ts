// The PlatformAdapter over HTTP to the sandbox platforms, as a real adapter would speak
// to a real platform: a keep-alive undici Pool, the platform's credential header, OAuth
// refresh with rotation, cursor paging, pushes. Which token field is the access
// credential, refresh token, organisation id or expiry comes from the sandbox's
// credential table, so both sides read the same roles.
//
// Stored tokens: the adapter returns the client's fields, with rotated values after a
// refresh, plus two internal fields where the platform's schema has no place:
//   _expiresAt    access-token expiry (ISO 8601), for refreshing platforms without an
//                 expiresAt field (Pandle, PayPal, Sandbox); others update expiresAt
//                 (and refreshTokenExpiresAt where the schema has it).
//   _accessToken  the current access token, for Amazon, whose schema stores only the
//                 refresh token.
// An unknown expiry counts as expired: ensureFresh refreshes, verify asks the platform.
import { Pool } from 'undici';
import {
  CURRENT_TENANT, accessFieldOf, credentialHeader, credentialRoles, expiryFieldOf, type CredentialRoles,
} from '../../platforms/credentials.js';
import { MAX_PAGE_SIZE } from '../../platforms/paging.js';
import { isoSeconds, systemClock, type Clock } from '../../lib/clock.js';
import {
  PlatformAuthError, PlatformFetchError, PlatformRateLimitError,
  type PlatformAdapter, type PlatformPage, type PushOutcome, type StoredTokens,
} from './adapter.js';
import { integrationByKey } from '../../platforms/registry.js';
import type { Integration } from '../../platforms/types.js';

export interface SandboxAdapterOptions {
  clock?: Clock;
  /** Keep-alive connections to the sandbox (default 16). */
  connections?: number;
  /** Per-request header and body timeout in ms (default 30 s). */
  timeoutMs?: number;
}

export interface SandboxAdapter extends PlatformAdapter {
  close(): Promise<void>;
}

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  json: Record<string, unknown> | undefined;
}

interface Platform {
  integration: Integration;
  roles: CredentialRoles;
}

function platformOf(key: string): Platform {
  const integration = integrationByKey(key);
  if (!integration) throw new PlatformFetchError(`No platform ${key}.`, 404);
  return { integration, roles: credentialRoles(integration) };
}

function retryAfterSeconds(header: string | string[] | undefined): number {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined) return 1;
  const seconds = /^\d+$/.test(value.trim()) ? Number(value) : Math.ceil((Date.parse(value) - Date.now()) / 1000);
  return Number.isFinite(seconds) && seconds > 0 ? seconds : 1;
}

function messageOf(reply: Reply): string {
  const { json } = reply;
  const text = json?.message ?? json?.error_description;
  return typeof text === 'string' ? text : `The platform answered HTTP ${reply.status}.`;
}

/** Maps a platform's error answer onto the adapter's error types. */
function failure(reply: Reply): Error {
  const message = messageOf(reply);
  // An expired access token is cured by a refresh; anything else 401/403 needs reauthorization.
  if (reply.status === 401) return new PlatformAuthError(message, reply.json?.error !== 'token_expired');
  if (reply.status === 403) return new PlatformAuthError(message, true);
  if (reply.status === 429) return new PlatformRateLimitError(retryAfterSeconds(reply.headers['retry-after']));
  return new PlatformFetchError(message, reply.status);
}

function parseTime(value: string | undefined): number | undefined {
  if (!value) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}

export function createSandboxAdapter(sandboxUrl: string, options: SandboxAdapterOptions = {}): SandboxAdapter {
  const http = new SandboxHttp(sandboxUrl, options);
  return {
    async verify(integrationKey, tokens) {
      return verify(http, platformOf(integrationKey), tokens);
    },

    needsRefresh(integrationKey, tokens, withinSeconds) {
      return needsRefresh(http.clock, platformOf(integrationKey), tokens, withinSeconds);
    },

    async ensureFresh(integrationKey, tokens, withinSeconds) {
      const p = platformOf(integrationKey);
      if (!needsRefresh(http.clock, p, tokens, withinSeconds)) return tokens;
      return refresh(http, p, tokens);
    },

    async fetchPage(integrationKey, tokens, dataType, cursor, pageSize): Promise<PlatformPage> {
      return fetchPage(http, platformOf(integrationKey), tokens, dataType, cursor, pageSize);
    },

    async push(integrationKey, tokens, dataType, record): Promise<PushOutcome> {
      const p = platformOf(integrationKey);
      return write(http, p, tokens, 'POST', `${tenantPath(p, tokens)}/${encodeURIComponent(dataType)}`, record);
    },

    async update(integrationKey, tokens, dataType, recordId, record, force): Promise<PushOutcome> {
      const p = platformOf(integrationKey);
      const path = `${tenantPath(p, tokens)}/${encodeURIComponent(dataType)}/${encodeURIComponent(recordId)}${force ? '?force=true' : ''}`;
      return write(http, p, tokens, 'PUT', path, record);
    },

    async remove(integrationKey, tokens, dataType, recordId): Promise<PushOutcome> {
      const p = platformOf(integrationKey);
      return write(http, p, tokens, 'DELETE', `${tenantPath(p, tokens)}/${encodeURIComponent(dataType)}/${encodeURIComponent(recordId)}`);
    },

    async pushStatus(integrationKey, tokens, platformPushId): Promise<PushOutcome> {
      return pushStatus(http, platformOf(integrationKey), tokens, platformPushId);
    },

    async close() {
      await http.close();
    },
  };
}

/** The keep-alive pool to the sandbox, and the clock tokens expire by. */
class SandboxHttp {
  readonly clock: Clock;
  private readonly prefix: string;
  private readonly pool: Pool;

  constructor(sandboxUrl: string, options: SandboxAdapterOptions) {
    const base = new URL(sandboxUrl);
    this.prefix = base.pathname.replace(/\/+$/, '');
    const timeout = options.timeoutMs ?? 30_000;
    this.pool = new Pool(base.origin, { connections: options.connections ?? 16, headersTimeout: timeout, bodyTimeout: timeout });
    this.clock = options.clock ?? systemClock;
  }

  async call(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, headers: Record<string, string>, body?: string): Promise<Reply> {
    try {
      const res = await this.pool.request({ method, path: this.prefix + path, headers: { accept: 'application/json', ...headers }, body });
      const text = await res.body.text();
      let json: Record<string, unknown> | undefined;
      try {
        json = text ? (JSON.parse(text) as Record<string, unknown>) : undefined;
      } catch {
        json = undefined;
      }
      return { status: res.statusCode, headers: res.headers, json };
    } catch (err) {
      // undici's messages name the address, never the request's headers.
      throw new PlatformFetchError(`The platform could not be reached: ${(err as Error).message}`);
    }
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

/** The tenant path: /platforms/:key/tenants/:orgId, or `current` where tokens are bound to one organisation. */
function tenantPath(p: Platform, tokens: StoredTokens): string {
  let segment = CURRENT_TENANT;
  if (p.roles.tenant) {
    const orgId = tokens[p.roles.tenant];
    if (!orgId) throw new PlatformAuthError(`The stored tokens lack ${p.roles.tenant}, the organisation id.`, true);
    segment = encodeURIComponent(orgId);
  }
  return `/platforms/${p.integration.key}/tenants/${segment}`;
}

function authHeaders(p: Platform, tokens: StoredTokens): Record<string, string> {
  const credential = tokens[accessFieldOf(p.roles)];
  // Not revoked: a refresh (ensureFresh) yields one.
  if (!credential) throw new PlatformAuthError('No access token is stored yet; refresh first.', false);
  const [name, value] = credentialHeader(p.roles, credential);
  return { [name]: value };
}

const canRefresh = (p: Platform, tokens: StoredTokens) => p.roles.refresh !== undefined && Boolean(tokens[p.roles.refresh]);

async function refresh(http: SandboxHttp, p: Platform, tokens: StoredTokens): Promise<StoredTokens> {
  const field = p.roles.refresh;
  const refreshToken = field ? tokens[field] : undefined;
  if (!field || !refreshToken) throw new PlatformAuthError(`${p.integration.name} tokens cannot be refreshed: no refresh token is stored.`, false);
  const form = new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken }).toString();
  const reply = await http.call('POST', `/platforms/${p.integration.key}/oauth/token`, { 'content-type': 'application/x-www-form-urlencoded' }, form);
  // invalid_grant (used, revoked or expired refresh token) and invalid_client: the grant is gone.
  if (reply.status === 400 || reply.status === 401) throw new PlatformAuthError(messageOf(reply), true);
  if (reply.status !== 200 || !reply.json) throw failure(reply);
  const { access_token: access, refresh_token: rotated, expires_in: expiresIn, x_refresh_token_expires_in: refreshExpiresIn } = reply.json;
  if (typeof access !== 'string' || typeof rotated !== 'string' || typeof expiresIn !== 'number') {
    throw new PlatformFetchError('The platform\'s token response is malformed.', reply.status);
  }
  const now = http.clock.now().getTime();
  const next: StoredTokens = {
    ...tokens,
    [accessFieldOf(p.roles)]: access,
    [field]: rotated,
    [expiryFieldOf(p.roles)]: isoSeconds(new Date(now + expiresIn * 1000)),
  };
  if (p.roles.refreshExpiresAt && typeof refreshExpiresIn === 'number') {
    next[p.roles.refreshExpiresAt] = isoSeconds(new Date(now + refreshExpiresIn * 1000));
  }
  return next;
}

/** Expired, or no access token yet, or an unknown expiry: worth refreshing before use. */
function stale(clock: Clock, p: Platform, tokens: StoredTokens, withinSeconds: number): boolean {
  if (!tokens[accessFieldOf(p.roles)]) return true;
  const expiry = parseTime(tokens[expiryFieldOf(p.roles)]);
  return expiry === undefined || expiry - clock.now().getTime() <= withinSeconds * 1000;
}

/** A refreshing platform's tokens that are stale: what ensureFresh refreshes. */
function needsRefresh(clock: Clock, p: Platform, tokens: StoredTokens, withinSeconds: number): boolean {
  return canRefresh(p, tokens) && stale(clock, p, tokens, withinSeconds);
}

/** The organisation the tokens reach, refreshing them first (or once refused as expired) where they can be. */
async function verify(http: SandboxHttp, p: Platform, tokens: StoredTokens): ReturnType<PlatformAdapter['verify']> {
  let current = tokens;
  // Refresh up front only when the stored expiry says so; an unknown expiry is asked of the platform.
  const known = parseTime(current[expiryFieldOf(p.roles)]) !== undefined;
  if (canRefresh(p, current) && (!current[accessFieldOf(p.roles)] || (known && stale(http.clock, p, current, 0)))) current = await refresh(http, p, current);
  const path = tenantPath(p, current);
  let reply = await http.call('GET', path, authHeaders(p, current));
  if (reply.status === 401 && reply.json?.error === 'token_expired' && canRefresh(p, current)) {
    current = await refresh(http, p, current);
    reply = await http.call('GET', path, authHeaders(p, current));
  }
  if (reply.status !== 200 || !reply.json) throw failure(reply);
  const expiresAt = reply.json.accessTokenExpiresAt;
  if (p.roles.refresh && typeof expiresAt === 'string' && current[expiryFieldOf(p.roles)] !== expiresAt) {
    current = { ...current, [expiryFieldOf(p.roles)]: expiresAt };
  }
  return { tokens: current, connectionInfo: { organisationId: reply.json.id, organisationName: reply.json.name } };
}

async function fetchPage(http: SandboxHttp, p: Platform, tokens: StoredTokens, dataType: string, cursor: string | undefined, pageSize: number): Promise<PlatformPage> {
  const size = Math.min(Math.max(1, Math.floor(pageSize)), MAX_PAGE_SIZE);
  const query = cursor === undefined ? `page=1&pageSize=${size}` : `cursor=${encodeURIComponent(cursor)}&pageSize=${size}`;
  const reply = await http.call('GET', `${tenantPath(p, tokens)}/${encodeURIComponent(dataType)}?${query}`, authHeaders(p, tokens));
  if (reply.status !== 200 || !reply.json || !Array.isArray(reply.json.results)) throw failure(reply);
  const page: PlatformPage = { records: reply.json.results as Record<string, unknown>[] };
  if (typeof reply.json.totalResults === 'number') page.total = reply.json.totalResults;
  if (typeof reply.json.next === 'string') page.next = reply.json.next;
  return page;
}

/** A create, update or delete: the platform's record, a pending push, or why it refused. */
async function write(http: SandboxHttp, p: Platform, tokens: StoredTokens, method: 'POST' | 'PUT' | 'DELETE', path: string, record?: Record<string, unknown>): Promise<PushOutcome> {
  const headers = record ? { ...authHeaders(p, tokens), 'content-type': 'application/json' } : authHeaders(p, tokens);
  const reply = await http.call(method, path, headers, record ? JSON.stringify(record) : undefined);
  if (reply.status === 200 && reply.json) return { status: 'Success', record: reply.json };
  if (reply.status === 202 && typeof reply.json?.id === 'string') return { status: 'Pending', platformPushId: reply.json.id };
  // The platform refused the write itself (invalid, unknown record, read-only type): a failed push, not an outage.
  if (reply.status === 400 || reply.status === 404 || reply.status === 405) {
    return { status: 'Failed', statusCode: reply.status, errors: fieldErrors(reply) };
  }
  throw failure(reply);
}

async function pushStatus(http: SandboxHttp, p: Platform, tokens: StoredTokens, platformPushId: string): Promise<PushOutcome> {
  const reply = await http.call('GET', `${tenantPath(p, tokens)}/pushes/${encodeURIComponent(platformPushId)}`, authHeaders(p, tokens));
  if (reply.status !== 200 || !reply.json) throw failure(reply);
  const { status, record } = reply.json;
  if (status === 'Pending') return { status: 'Pending', platformPushId };
  if (status === 'Success' && record && typeof record === 'object') return { status: 'Success', record: record as Record<string, unknown> };
  return { status: 'Failed', statusCode: 400, errors: fieldErrors(reply) };
}

function fieldErrors(reply: Reply): Array<{ field?: string; message: string }> {
  const listed = reply.json?.errors;
  if (!Array.isArray(listed) || listed.length === 0) return [{ message: messageOf(reply) }];
  return listed.map((e: { field?: unknown; message?: unknown }) => {
    const message = typeof e.message === 'string' ? e.message : 'Invalid value.';
    return typeof e.field === 'string' ? { field: e.field, message } : { message };
  });
}
