// Which token field plays which part, per platform: one table that the sandbox (which
// issues and checks the values) and the HTTP adapter (which sends and rotates them)
// both read, so they cannot disagree.
//
//   access            the credential checked on every data call. Absent: the platform only
//                     hands out access tokens on a refresh (Amazon's Login with Amazon), and
//                     the adapter keeps the current one in the internal field `_accessToken`.
//   header            where that credential travels: 'authorization' (Bearer, the default)
//                     or the platform's own header.
//   refresh           a single-use, rotating refresh token. Absent: the access credential
//                     never expires (API keys, passwords, offline tokens).
//   tenant            the organisation id, which addresses the tenant in URLs. Absent: the
//                     token is bound to one organisation, addressed as `current`.
//   expiresAt         the access token's expiry (ISO 8601). Absent on a refreshing platform:
//                     the adapter keeps it in the internal field `_expiresAt`.
//   refreshExpiresAt  the refresh token's expiry (ISO 8601).
//   fixed             settings copied from the registry's example (regions, environments).
//   templates         value shapes for fields whose example is a URL or domain ('*' = random).
// Every other field is an extra the platform issues but does not check, shaped like its
// registry example.
import type { IncomingHttpHeaders } from 'node:http';
import type { Integration } from './types.js';

export interface CredentialRoles {
  access?: string;
  header?: string;
  refresh?: string;
  tenant?: string;
  expiresAt?: string;
  refreshExpiresAt?: string;
  fixed?: readonly string[];
  templates?: Readonly<Record<string, string>>;
}

/** Internal stored-token fields the adapter adds where the platform's schema has no place for the value. */
export const INTERNAL_ACCESS_FIELD = '_accessToken';
export const INTERNAL_EXPIRY_FIELD = '_expiresAt';
/** The tenant path segment for platforms whose tokens are bound to one organisation. */
export const CURRENT_TENANT = 'current';

const OAUTH = { access: 'accessToken', refresh: 'refreshToken' } as const;
const OAUTH_EXPIRING = { ...OAUTH, expiresAt: 'expiresAt' } as const;

export const CREDENTIAL_ROLES: Readonly<Record<string, CredentialRoles>> = {
  // Amazon: the stored credential is the LWA refresh token; access tokens come only from refreshing it.
  qkdj: { refresh: 'refreshToken', tenant: 'sellingPartnerId', header: 'x-amz-access-token', fixed: ['marketplaceId'] },
  vqzp: { access: 'accessToken', tenant: 'storeHash', header: 'x-auth-token' },
  xwsy: { access: 'apiKey', tenant: 'site' },
  jhch: { ...OAUTH_EXPIRING, tenant: 'businessId' },
  // Business Central: the company is the organisation; the Entra tenant and environment are extras.
  trji: { ...OAUTH_EXPIRING, tenant: 'bcCompanyId', fixed: ['environmentName'] },
  qudb: { ...OAUTH_EXPIRING, tenant: 'division' },
  pbbf: { ...OAUTH_EXPIRING, tenant: 'division' },
  fbrh: { ...OAUTH_EXPIRING },
  vxvy: { ...OAUTH_EXPIRING, tenant: 'accountId' },
  // KashFlow: the password is the secret; the user name and memorable word are extras.
  wvzu: { access: 'password' },
  pdvj: { ...OAUTH_EXPIRING, tenant: 'companyFileId', fixed: ['companyFileUsername'] },
  // NetSuite TBA: the token secret is the customer's secret; the consumer pair and token id are extras.
  akxx: { access: 'tokenSecret', tenant: 'accountId', fixed: ['subsidiaryId'] },
  vjms: { ...OAUTH, tenant: 'pandleCompanyId' },
  gvom: { ...OAUTH, tenant: 'payerId' },
  suuo: { access: 'accessToken', tenant: 'itemId' },
  qhyg: { ...OAUTH_EXPIRING, tenant: 'realmId', refreshExpiresAt: 'refreshTokenExpiresAt' },
  // Sage 200: the site is globally unique; the company number within it is an extra.
  jcrp: { ...OAUTH_EXPIRING, tenant: 'siteId' },
  tgff: { ...OAUTH_EXPIRING, tenant: 'businessId' },
  // Sage Intacct: the Web Services user's password is the secret; sender credentials are extras.
  knfz: { access: 'userPassword', tenant: 'intacctCompanyId', fixed: ['entityId'] },
  mqjo: { ...OAUTH, tenant: 'tenantId' },
  fztf: {
    access: 'accessToken', tenant: 'shopDomain', header: 'x-shopify-access-token', fixed: ['scope'],
    templates: { shopDomain: '*.myshopify.com' },
  },
  zsth: { ...OAUTH_EXPIRING, tenant: 'merchantId' },
  // Stripe Connect access tokens do not expire; the refresh token is issued but never needed.
  exgd: { access: 'accessToken', tenant: 'stripeAccountId' },
  upvr: { ...OAUTH_EXPIRING },
  pbtz: { ...OAUTH_EXPIRING, tenant: 'businessId' },
  // WooCommerce: the consumer secret is the secret; the store URL is where the API lives, not an organisation id.
  ltpp: { access: 'consumerSecret', templates: { storeUrl: 'https://*.example.com' } },
  gbol: { ...OAUTH_EXPIRING, tenant: 'tenantId' },
  rwuv: { ...OAUTH_EXPIRING, tenant: 'organizationId', fixed: ['dataCenter'] },
};

/**
 * The platform's roles. A platform added to the registry without a row above gets roles
 * from the conventional field names (accessToken or apiKey, refreshToken, expiresAt, the
 * first required *Id field); add a row when those are wrong.
 */
export function credentialRoles(integration: Integration): CredentialRoles {
  const explicit = CREDENTIAL_ROLES[integration.key];
  if (explicit) return explicit;
  const names = new Set(integration.tokenFields.map((f) => f.name));
  const named = (...candidates: string[]) => candidates.find((c) => names.has(c));
  return {
    access: named('accessToken', 'apiKey'),
    refresh: named('refreshToken'),
    expiresAt: named('expiresAt'),
    tenant: integration.tokenFields.find((f) => f.required && /Id$/.test(f.name))?.name,
  };
}

/** The stored-token field that holds the access credential. */
export function accessFieldOf(roles: CredentialRoles): string {
  return roles.access ?? INTERNAL_ACCESS_FIELD;
}

/** The stored-token field that holds the access token's expiry (ISO 8601). */
export function expiryFieldOf(roles: CredentialRoles): string {
  return roles.expiresAt ?? INTERNAL_EXPIRY_FIELD;
}

/** The request header (lower case) and value that carry an access credential. */
export function credentialHeader(roles: CredentialRoles, credential: string): [string, string] {
  const header = roles.header ?? 'authorization';
  return [header, header === 'authorization' ? `Bearer ${credential}` : credential];
}

/** The access credential a request carries, read where the platform expects it. */
export function readCredential(roles: CredentialRoles, headers: IncomingHttpHeaders): string | undefined {
  const header = roles.header ?? 'authorization';
  const raw = headers[header];
  const value = (Array.isArray(raw) ? raw[0] : raw)?.trim();
  if (!value) return undefined;
  if (header !== 'authorization') return value;
  const match = /^Bearer\s+(\S+)$/i.exec(value);
  return match?.[1];
}
