// Who may use the sandbox's admin surface (apps, tenants, minted tokens, settings):
// holders of ferry's admin key. The check itself is the service's (any admin key it
// knows, revoked ones refused); the sandbox asks it through this one function.
import { createHash, timingSafeEqual } from 'node:crypto';
import { apiKeyFromHeader } from '../lib/basic-auth.js';

export type AdminVerdict = 'admin' | 'unauthenticated' | 'forbidden';

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
