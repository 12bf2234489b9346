// Who may use the sandbox's admin surface (apps, tenants, minted tokens, settings):
// holders of ferry's admin key. The check itself is the service's (any admin key it
// knows, revoked ones refused); the sandbox asks it through this one function.
import { createHash, timingSafeEqual } from 'node:crypto';
import { apiKeyFromHeader } from '../lib/basic-auth.js';

/** `unavailable`: the judge (a service over HTTP) could not be asked. */
export type AdminVerdict = 'admin' | 'unauthenticated' | 'forbidden' | 'unavailable';

/** Judges an Authorization header (`Basic base64(apiKey)`), as the service would. */
export type AdminCheck = (authorization: string | undefined) => Promise<AdminVerdict>;

/** No check configured: the admin surface stays shut. */
export const denyAll: AdminCheck = async () => 'unauthenticated';

/** One fixed admin key, for a sandbox run on its own (benches, the sandbox's own tests). */
export function fixedAdminKey(adminKey: string): AdminCheck {
  const expected = createHash('sha256').update(adminKey).digest();
  return async (authorization) => {
    const key = apiKeyFromHeader(authorization);
    if (!key) return 'unauthenticated';
    return timingSafeEqual(createHash('sha256').update(key).digest(), expected) ? 'admin' : 'forbidden';
  };
}

/** How long the service gets to judge a key before the admin request answers 503. */
const SERVICE_CHECK_TIMEOUT_MS = 5000;

/**
 * The sandbox run as a process of its own (`ferry sandbox serve --service-url`): each admin
 * request's key is judged by a ferry service, which knows every admin key and which are
 * revoked. Its GET /admin/sandbox answers 200 (with the sandbox's URL) only to an admin key.
 * Nothing is cached, so a revoked key is refused at once. Only a ferry service's own answer
 * admits anyone: a 200 without its `{ url }` body (a catch-all page, a wrong --service-url)
 * is 'unavailable', and redirects are not followed, so the key goes nowhere else.
 * `onUnavailable` hears why the service could not judge (no key or header in it).
 */
export function serviceAdminCheck(serviceUrl: string, onUnavailable?: (reason: string) => void): AdminCheck {
  const url = `${serviceUrl.replace(/\/+$/, '')}/admin/sandbox`;
  const unavailable = (reason: string): AdminVerdict => {
    onUnavailable?.(`admin key check: ${url} ${reason}`);
    return 'unavailable';
  };
  return async (authorization) => {
    if (!authorization || !apiKeyFromHeader(authorization)) return 'unauthenticated';
    let status: number;
    let body: unknown;
    try {
      const response = await fetch(url, {
        headers: { authorization, accept: 'application/json' },
        redirect: 'error',
        signal: AbortSignal.timeout(SERVICE_CHECK_TIMEOUT_MS),
      });
      status = response.status;
      if (status === 200) body = await response.json();
      else await response.body?.cancel();
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      return unavailable(`could not be asked (${cause?.code ?? cause?.message ?? (err as Error).message})`);
    }
    if (status === 200) return typeof (body as { url?: unknown } | null)?.url === 'string' ? 'admin' : unavailable('answered 200 without a sandbox URL: not a ferry service?');
    if (status === 401) return 'unauthenticated';
    // 403: a client's key or a revoked one; 402: a client whose Free plan ended. Either way, not an admin.
    if (status === 402 || status === 403) return 'forbidden';
    // 429 (its rate limit), 503 (maintenance), 404 (not a ferry service, or one without sandbox platforms), 5xx.
    return unavailable(`answered ${status}`);
  };
}
