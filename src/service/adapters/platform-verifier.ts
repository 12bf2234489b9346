// Token verification through the platform adapter: the platform accepts the tokens (a
// refresh may rotate them), or says why not.
import { errors } from '../errors.js';
import { PlatformAuthError, PlatformRateLimitError, type PlatformAdapter } from './adapter.js';
import type { TokenVerifier } from './verifier.js';

export function platformVerifier(platform: PlatformAdapter): TokenVerifier {
  return {
    async verify(integration, tokens) {
      try {
        const result = await platform.verify(integration.key, tokens);
        return { ok: true, tokens: result.tokens, ...(result.connectionInfo ? { connectionInfo: result.connectionInfo } : {}) };
      } catch (err) {
        if (err instanceof PlatformAuthError) return { ok: false, message: `${integration.name} said: ${err.message}` };
        if (err instanceof PlatformRateLimitError) throw errors.tooManyRequests(err.retryAfterSeconds, 'platform_rate_limit');
        throw errors.platformUnavailable(integration.name);
      }
    },
  };
}
