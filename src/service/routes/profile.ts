// The account's own surface: /profile (who the key acts for, and the settings an account
// keeps: redirect URL, logo, allowed URLs), /corsSettings (the origins allowed to embed
// the connection flows; its old path answers the same) and /apiKeys (an account manages
// its own keys; the admin routes in admin.ts manage anyone's). Keys are shown once.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isoSeconds } from '../../lib/clock.js';
import { formatCharacterProblem } from '../../platforms/limits.js';
import type { ServiceContext } from '../context.js';
import { errors } from '../errors.js';
import { baseUrlOf, failIfAny, objectBody, params } from '../http/body.js';
import { refuseUnknownFields } from '../http/known-fields.js';
import { defineRoute, withBody } from '../http/route.js';
import type { ValidationItem } from '../errors.js';
import { compact } from '../wire/compact.js';

const MAX_KEY_NAME = 50;
/** CORS origins an account may list. */
const MAX_ORIGINS = 50;
const MAX_URL = 2048;

interface StoredProfile {
  name?: string;
  logoUrl?: string;
  iconUrl?: string;
  redirectUrl?: string;
  whiteListUrls?: string[];
  confirmCompanyName?: boolean;
  allowedOrigins?: string[];
}

function isOrigin(value: unknown): boolean {
  if (!isUrl(value)) return false;
  const url = new URL(value as string);
  return url.origin === (value as string).replace(/\/$/, '');
}

function isUrl(value: unknown, template = false): boolean {
  if (typeof value !== 'string' || value.length > MAX_URL) return false;
  try {
    // A redirect URL may hold {companyId} and other placeholders the service fills in.
    const url = new URL(template ? value.replace(/\{[A-Za-z]+\}/g, 'x') : value);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}

/**
 * What PUT /profile takes. The earlier document's profile had two more: `apiKey` (the key,
 * shown back; a write never set it) is ignored, and `alertAuthHeader` (an Authorization
 * header for the legacy rules' notifications) is refused: deliveries are signed instead.
 */
const PROFILE_FIELDS = ['name', 'logoUrl', 'iconUrl', 'redirectUrl', 'whiteListUrls', 'confirmCompanyName', 'apiKey', 'alertAuthHeader'];

function parseProfile(body: Record<string, unknown>): StoredProfile {
  refuseUnknownFields(body, PROFILE_FIELDS);
  const items: ValidationItem[] = [];
  const problem = (itemId: string, message: string) => items.push({ itemId, message, validatorName: 'Profile' });
  const profile: StoredProfile = {};
  // The name the companies' people see when they link: nothing invisible may disguise it.
  const hidden = typeof body.name === 'string' ? formatCharacterProblem(body.name) : undefined;
  if (typeof body.name !== 'string' || body.name.trim() === '' || body.name.length > 255) problem('name', 'name is required: 1 to 255 characters.');
  else if (hidden) problem('name', `name ${hidden}.`);
  else profile.name = body.name.trim();
  if (!isUrl(body.redirectUrl, true)) problem('redirectUrl', 'redirectUrl is required: an http(s) URL, {companyId} allowed.');
  else profile.redirectUrl = body.redirectUrl as string;
  for (const field of ['logoUrl', 'iconUrl'] as const) {
    if (body[field] === undefined || body[field] === null) continue;
    if (!isUrl(body[field])) problem(field, `${field} must be an http(s) URL.`);
    else profile[field] = body[field] as string;
  }
  if (body.whiteListUrls !== undefined && body.whiteListUrls !== null) {
    if (!Array.isArray(body.whiteListUrls) || body.whiteListUrls.length > 50 || !body.whiteListUrls.every((u) => isUrl(u))) problem('whiteListUrls', 'whiteListUrls must be a list of at most 50 http(s) URLs.');
    else profile.whiteListUrls = body.whiteListUrls as string[];
  }
  if (body.confirmCompanyName !== undefined && body.confirmCompanyName !== null) {
    if (typeof body.confirmCompanyName !== 'boolean') problem('confirmCompanyName', 'confirmCompanyName must be true or false.');
    else profile.confirmCompanyName = body.confirmCompanyName;
  }
  if (body.alertAuthHeader !== undefined && body.alertAuthHeader !== null && body.alertAuthHeader !== '') {
    problem('alertAuthHeader', 'alertAuthHeader is not sent: every webhook delivery is signed (webhook-signature, Standard Webhooks), which receivers check instead. Leave it out.');
  }
  failIfAny(items, errors.invalidProfile);
  return profile;
}

export function registerProfileRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  const { store, clock } = ctx;
  const storedOf = (request: FastifyRequest) => (request.auth.client.profile ? JSON.parse(request.auth.client.profile) : {}) as StoredProfile;
  const save = async (request: FastifyRequest, stored: StoredProfile) => {
    await store.setProfile(request.auth.client.id, { ...stored });
    request.auth.client.profile = JSON.stringify(stored);
  };
  const profileOf = (request: FastifyRequest) => {
    const { client, caller } = request.auth;
    const stored = storedOf(request);
    return {
      name: stored.name ?? client.name,
      ...(stored.logoUrl ? { logoUrl: stored.logoUrl } : {}),
      ...(stored.iconUrl ? { iconUrl: stored.iconUrl } : {}),
      redirectUrl: stored.redirectUrl ?? `${baseUrlOf(request)}/link`,
      whiteListUrls: stored.whiteListUrls ?? [],
      confirmCompanyName: stored.confirmCompanyName ?? false,
      clientId: client.id,
      plan: client.plan,
      created: client.created,
      isAdmin: caller.is_admin === 1,
      actingAsClient: caller.id !== client.id,
    };
  };

  defineRoute(app, '/profile', {
    GET: async (request) => profileOf(request),
    PUT: withBody(async (request) => {
      const profile = parseProfile(objectBody(request));
      const { allowedOrigins } = storedOf(request);
      await save(request, { ...profile, ...(allowedOrigins ? { allowedOrigins } : {}) });
      return profileOf(request);
    }),
  });

  const cors = {
    GET: async (request: FastifyRequest) => ({ allowedOrigins: storedOf(request).allowedOrigins ?? [] }),
    POST: withBody(async (request: FastifyRequest) => {
      const body = objectBody(request);
      refuseUnknownFields(body, ['allowedOrigins']);
      const { allowedOrigins } = body;
      if (!Array.isArray(allowedOrigins) || allowedOrigins.length > MAX_ORIGINS || !allowedOrigins.every(isOrigin)) {
        throw errors.invalidCorsSettings(MAX_ORIGINS);
      }
      await save(request, { ...storedOf(request), allowedOrigins: allowedOrigins as string[] });
      return { allowedOrigins };
    }),
  };
  defineRoute(app, '/corsSettings', cors);
  // Deprecated in the public API in favour of /corsSettings; it answers the same here.
  defineRoute(app, '/connectionManagement/corsSettings', cors);

  const keyRecord = (row: { id: string; name?: string | null; created: string }) => compact({ id: row.id, name: row.name, createdDate: row.created });

  defineRoute(app, '/apiKeys', {
    GET: async (request) => {
      const keys = (await store.listApiKeys(request.auth.client.id, { page: 1, pageSize: 5000 })).rows.filter((k) => !k.revoked);
      return { results: keys.map(keyRecord) };
    },
    POST: withBody(async (request, reply) => {
      const body = request.body === undefined || request.body === null ? {} : objectBody(request);
      refuseUnknownFields(body, ['name']);
      const name = body.name === undefined || body.name === null ? null : body.name;
      if (name !== null && (typeof name !== 'string' || name.length > MAX_KEY_NAME)) {
        throw errors.invalidApiKeyName(MAX_KEY_NAME);
      }
      const created = isoSeconds(clock.now());
      const key = await store.insertApiKey(request.auth.client.id, created, name);
      return reply.code(201).send(compact({ id: key.id, name, apiKey: key.apiKey, createdDate: created }));
    }),
  });

  defineRoute(app, '/apiKeys/:apiKeyId', {
    DELETE: async (request, reply) => {
      const { apiKeyId = '' } = params(request);
      const key = await store.getApiKey(request.auth.client.id, apiKeyId);
      if (!key || key.revoked) throw errors.keyNotFound(apiKeyId);
      await store.revokeApiKey(key.id, isoSeconds(clock.now()));
      return reply.code(204).send();
    },
  });
}
